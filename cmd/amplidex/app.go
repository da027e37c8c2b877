package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/service"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
	"github.com/lmittmann/tint"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Exit codes, as PRODUCT.md defines them.
const (
	exitOK          = 0 // success
	exitFailed      = 1 // validation errors found, or nothing matched
	exitUsage       = 2 // usage, configuration or integrity errors
	exitUnreachable = 3 // the daemon was required and is unreachable
)

// exitError carries the exit code a command wants alongside its error.
// A nil err with a non-zero code exits quietly (the command already said
// what it had to).
type exitError struct {
	code int
	// kind is the error's code in JSON ("usage", "config", "not-found",
	// …); by default it follows the exit code (see errorKind).
	kind string
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitf returns an error that makes amplidex exit with code after printing
// the formatted message.
func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// exitCode returns an error that makes amplidex exit with code silently.
func exitCode(code int) error { return &exitError{code: code} }

// App is one run of amplidex: its streams, its environment and what the
// global flags set. Tests build one with in-memory streams.
type App struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string

	// Set by the global flags before a subcommand runs.
	logLevel   string
	projectDir string
	configPath string
	// isolated is set by --isolated (check, config): the workspace has
	// no user configuration and no user or bundled roots.
	isolated bool
	log      *slog.Logger

	// refusedOnce says once per run that a .amplifier directory of
	// another user was ignored.
	refusedOnce sync.Once
	// warned holds the warnings said once per run (see warnOnce).
	warned sync.Map
	// daemons finds and starts the daemon (see launcher).
	daemons     *service.Launcher
	daemonsOnce sync.Once
	level       slog.Level
	// line is stderr as the logger writes it: a progress line on a
	// terminal is cleared before a log line and shown again after.
	line *service.StatusLine
	// rejoinLimit bounds how long watch looks for a daemon once its own
	// went away; rejoinLimit (the constant) when zero. Tests shorten it.
	rejoinLimit time.Duration
	// fixOpened, when set, is called with a file's real path once check
	// --fix has opened it to write it, before comparing its text (see
	// writeFix). Tests edit the file there.
	fixOpened func(path string)
}

// NewApp returns an App over the given streams and environment.
func NewApp(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *App {
	return &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv,
		log: slog.New(slog.DiscardHandler)}
}

// launcher returns the run's Launcher of the daemon, made once the
// global flags are parsed and the status line is set up.
func (a *App) launcher() *service.Launcher {
	a.daemonsOnce.Do(func() {
		a.daemons = &service.Launcher{Getenv: a.Getenv, Stderr: a.Stderr, ConfigPath: a.configPath, LogLevel: a.logLevel,
			RejoinLimit: a.rejoinLimit}
		if a.line != nil {
			a.daemons.Status = a.line
		}
	})
	return a.daemons
}

// configError returns an error for a configuration that cannot be used:
// exit 2, "config" in JSON.
func configError(err error) error {
	return &exitError{code: exitUsage, kind: "config", err: err}
}

// asExitError returns the exit code and kind err carries: its own, or
// those of an error of the check engine (a usage error, or a
// configuration that cannot be used); nil when it carries none.
func asExitError(err error) *exitError {
	var (
		ee *exitError
		ue *lint.UsageError
		ce *lint.ConfigError
		de *service.UnreachableError
		se *service.UsageError
	)
	switch {
	case errors.As(err, &ee):
		return ee
	case errors.As(err, &ue):
		return &exitError{code: exitUsage, err: err}
	case errors.As(err, &ce):
		return &exitError{code: exitUsage, kind: "config", err: err}
	case errors.As(err, &de):
		return &exitError{code: exitUnreachable, err: err}
	case errors.As(err, &se):
		if se.Err == nil {
			return &exitError{code: exitUsage} // said already
		}
		return &exitError{code: exitUsage, err: err}
	}
	return nil
}

// errorKind is the code of an error in JSON: the one it carries, else one
// that follows its exit code.
func (e *exitError) errorKind() string {
	if e.kind != "" {
		return e.kind
	}
	switch e.code {
	case exitUsage:
		return "usage"
	case exitUnreachable:
		return "unreachable"
	}
	return "failed"
}

// jsonError is what a command run with --json prints on stdout when it
// fails without an answer of its own.
type jsonError struct {
	Error jsonErrorBody `json:"error"`
}

type jsonErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Run parses args, runs the command they name and returns the exit code.
// An error is said on stderr; under --json (or --format json) it is also
// printed on stdout as {"error": {"code", "message"}}, so that a script
// always reads JSON.
func (a *App) Run(ctx context.Context, args []string) int {
	return a.run(ctx, a.rootCmd(args), args)
}

// run is Run with the command tree root.
func (a *App) run(ctx context.Context, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	ee := asExitError(err)
	if ee == nil {
		if ctx.Err() != nil {
			return 130
		}
		// Cobra's own errors (unknown command or flag, wrong argument
		// count) and anything unclassified are usage errors.
		ee = &exitError{code: exitUsage, err: err}
	}
	if ee.err == nil {
		return ee.code
	}
	fmt.Fprintf(a.Stderr, "amplidex: %v\n", ee.err)
	if wantsJSON(cmd, args) {
		_ = query.PrintJSON(a.Stdout, jsonError{Error: jsonErrorBody{Code: ee.errorKind(), Message: ee.err.Error()}})
	}
	return ee.code
}

// wantsJSON reports whether the command was asked for JSON: its --json
// flag or --format json, as parsed, or as written when parsing failed.
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if f := cmd.Flags().Lookup("json"); f != nil && f.Changed && f.Value.String() == "true" {
			return true
		}
		if f := cmd.Flags().Lookup("format"); f != nil && f.Changed && f.Value.String() == "json" {
			return true
		}
	}
	for i, arg := range args {
		switch {
		case arg == "--":
			return false
		case arg == "--json", arg == "--json=true", arg == "--format=json":
			return true
		case arg == "--format" && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// topCommands are the top-level commands, by name, with what builds each.
var topCommands = []struct {
	name string
	make func(*App) *cobra.Command
}{
	{"check", newCheckCmd}, {"query", newQueryCmd}, {"daemon", newDaemonCmd}, {"status", newStatusCmd},
	{"watch", newWatchCmd}, {"prepare", newPrepareCmd}, {"cache", newCacheCmd}, {"post-install", newPostInstallCmd},
	{"lsp", newLSPCmd}, {"schema", newSchemaCmd}, {"config", newConfigCmd}, {"rule", newRuleCmd},
	{"version", newVersionCmd}, {"service", newServiceCmd}, {"forget", newForgetCmd}, {"migrate", newMigrateCmd},
}

// rootCmd builds the command tree that runs args. When args name one of
// topCommands plainly (global flags first, then its name), the tree holds
// that command alone: the other commands' flags, help and completions
// would be most of the work of a short command such as a query, and none
// of them can run. Anything else (help, completion, --version, a name
// mistyped or missing) gets the whole tree.
func (a *App) rootCmd(args []string) *cobra.Command {
	root := &cobra.Command{
		Use:           "amplidex",
		Short:         "Index, validate and query Amplifier collections",
		Long:          "amplidex keeps an always-fresh index of Amplifier collections and of the prepared-bundle cache,\nvalidates profiles, agents, bundle manifests, pyproject.toml and lock files, and answers queries.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setupLogging(cmd)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.logLevel, "log-level", "", "log level: debug, info, warn or error (default: info for daemon, watch and lsp, warn for the others)")
	pf.StringVar(&a.projectDir, "project", "", "project directory (default: nearest ancestor with .amplifier/, else the working directory)")
	pf.StringVar(&a.configPath, "config", "", "configuration file (default: $AMPLIDEX_HOME/config.toml or $XDG_CONFIG_HOME/amplidex/config.toml)")
	if i := namedCommand(args, pf); i >= 0 {
		root.AddCommand(topCommands[i].make(a))
		root.CompletionOptions.DisableDefaultCmd = true
	} else {
		for _, c := range topCommands {
			root.AddCommand(c.make(a))
		}
		root.InitDefaultCompletionCmd()
		root.Version = versionText(query.ReadBuild())
		root.SetVersionTemplate("{{.Version}}")
	}
	root.SetFlagErrorFunc(flagError)
	guardCommands(root)
	return root
}

// namedCommand returns the index in topCommands of the command args name
// after the global flags of pf (each with its value), or -1.
func namedCommand(args []string, pf *pflag.FlagSet) int {
	for len(args) > 0 && strings.HasPrefix(args[0], "--") && args[0] != "--" {
		name, _, hasValue := strings.Cut(args[0][2:], "=")
		f := pf.Lookup(name)
		if f == nil {
			return -1
		}
		args = args[1:]
		if !hasValue && f.NoOptDefVal == "" {
			if len(args) == 0 {
				return -1
			}
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return -1
	}
	for i, c := range topCommands {
		if c.name == args[0] {
			return i
		}
	}
	return -1
}

// logLevels are the values of --log-level; "warning" is taken for "warn".
var logLevels = []string{"debug", "info", "warn", "error"}

// setupLogging builds the logger: tint on stderr, colour only when stderr
// is a terminal and NO_COLOR is unset. Without --log-level, the commands
// that keep running (daemon, watch, lsp) log from info up, and one-shot
// commands only warnings and errors: their answer is their output.
func (a *App) setupLogging(cmd *cobra.Command) error {
	level := strings.ToLower(a.logLevel)
	switch level {
	case "":
		level = "warn"
		if longRunning(cmd) {
			level = "info"
		}
	case "warning":
		level = "warn"
	}
	if !slices.Contains(logLevels, level) {
		return exitf(exitUsage, "invalid --log-level %q: want debug, info, warn or error%s", a.logLevel, didYouMean(level, logLevels))
	}
	if err := a.level.UnmarshalText([]byte(level)); err != nil {
		return exitf(exitUsage, "invalid --log-level %q: %v", a.logLevel, err)
	}
	a.line = service.NewStatusLine(a.Stderr, isTerminal(a.Stderr))
	a.logTo(a.line, a.colorOn(a.Stderr))
	return nil
}

// logTo sends the log to w, coloured when color is set.
func (a *App) logTo(w io.Writer, color bool) {
	a.log = slog.New(tint.NewTextHandler(w, &tint.Options{
		Level:      a.level,
		TimeFormat: "15:04:05.000",
		NoColor:    !color,
	}))
}

// colorOn reports whether w is a terminal and NO_COLOR is unset.
func (a *App) colorOn(w io.Writer) bool {
	if a.Getenv("NO_COLOR") != "" {
		return false
	}
	return isTerminal(w)
}

// longRunning reports the commands that run until they are stopped and
// log what they do: the daemon in the foreground, watch and lsp.
func longRunning(cmd *cobra.Command) bool {
	switch commandName(cmd) {
	case "daemon", "watch", "lsp":
		return true
	}
	return false
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
