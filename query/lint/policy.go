package lint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// Policy decides which diagnostics are reported, and how severe they are,
// for every surface alike: check, watch and the language server ask it.
// Each setting comes from the first of these that sets it: the flags,
// then the project's configuration nearest to the diagnostic's file (the
// file a team commits), then the user's configuration, then the
// defaults. The flags' --select and --ignore add to the codes the
// configuration names.
//
// A Policy is immutable; a Lookup (one per check, one per batch of
// diagnostics of a long-running surface, so that an edited configuration
// is seen) reads the project's files.
type Policy struct {
	// user is the user's configuration; an empty one under --isolated.
	user *config.Config
	// userBase is the directory the user's per-path globs are taken from:
	// the project directory, else the working directory.
	userBase string
	// userPath is the user's configuration file ("" when none was read);
	// it is never read as a project's file.
	userPath string
	// userFile is where the user's configuration is (or would be), named
	// in errors about a project's file.
	userFile string
	flags    Selection
	// home is the home directory: never searched for a project's file.
	home string
	// warn, when set, says that a project's file was not trusted.
	warn func(string)
}

// Selection is what the flags of check select: the codes or areas
// reported (--select) and not (--ignore), on top of the configuration's,
// and the lowest severity reported (--severity, "" when not given).
type Selection struct {
	Select, Ignore []string
	Severity       string
}

// NewPolicy returns the policy of a workspace and the flags, checking the
// flags' codes and severity (a *UsageError).
func NewPolicy(ws *Workspace, flags Selection) (*Policy, error) {
	if err := config.CheckCodes(flags.Select); err != nil {
		return nil, usageErrorf("--select: %v", err)
	}
	if err := config.CheckCodes(flags.Ignore); err != nil {
		return nil, usageErrorf("--ignore: %v", err)
	}
	if _, err := config.MinRank(flags.Severity); err != nil {
		return nil, usageErrorf("--severity: %v", err)
	}
	userPath := ws.Config.Path()
	if userPath != "" {
		if abs, err := filepath.Abs(userPath); err == nil {
			userPath = abs
		}
	}
	userFile := cmp.Or(userPath, ws.Paths.Config)
	return &Policy{user: ws.Config, userBase: ws.Base(), userPath: userPath, userFile: userFile, flags: flags, home: ws.Home, warn: ws.Warn}, nil
}

// projectFiles are the names of a project's configuration, in the order
// one is preferred when a directory holds several (as ruff prefers
// ruff.toml to .ruff.toml to pyproject.toml); a pyproject.toml counts only
// when it has a [tool.amplidex] table.
var projectFiles = []string{"amplidex.toml", ".amplidex.toml", "pyproject.toml"}

// maxConfigSize bounds a project's configuration file read.
const maxConfigSize = 1 << 20

// configLimit is how much of a project's file named name is read: a
// pyproject.toml is a collection's metadata too, and is read up to the
// document limit, as the Loader reads it, so that check and the daemon
// take the same file alike; amplidex.toml and .amplidex.toml, which hold
// configuration alone, up to maxConfigSize.
func configLimit(name string) int64 {
	if name == "pyproject.toml" {
		return syntax.DefaultMaxFileSize
	}
	return maxConfigSize
}

// Lookup finds and reads the project's configuration files for one
// batch of diagnostics. It is not safe for concurrent use.
type Lookup struct {
	p *Policy
	// home and base are the policy's home directory and userBase, clean.
	home, base string
	// listed, when set, tells directories that cannot hold a project's
	// file or a marker of its top, which are then not looked for there.
	listed   *listings
	nearest  map[string]*config.Config // by directory: the file that applies there (nil: none)
	rules    map[string]*rules         // by directory
	compiled map[*config.Config]*rules // by the file that applies (nil: none)
}

// Lookup returns a Lookup that reads the project's files as they are now.
func (p *Policy) Lookup() *Lookup {
	home := p.home
	if home != "" {
		home = filepath.Clean(home)
	}
	return &Lookup{p: p, home: home, base: filepath.Clean(p.userBase),
		nearest: map[string]*config.Config{}, rules: map[string]*rules{}, compiled: map[*config.Config]*rules{}}
}

// projectConfig returns the project configuration that applies to files
// in dir: the one dir holds, else its parent's, up to a directory that
// holds .git or .amplifier, or the base directory (the project or working
// directory); the home directory is never read. It returns nil when
// there is none.
//
// Nothing another user controls is trusted, by the rule the search for
// .amplifier follows (see discovery.FindProject): a file that belongs to
// another user, or lies in a directory of another user, is not read,
// and the search stops there with none (said once through the policy's
// warn); nor does it go above a directory of another user that anyone
// may write in (such as /tmp).
func (l *Lookup) projectConfig(dir string) (*config.Config, error) {
	if c, ok := l.nearest[dir]; ok {
		return c, nil // asked for with the clean path it was stored under
	}
	dir = filepath.Clean(dir)
	if c, ok := l.nearest[dir]; ok {
		return c, nil
	}
	var c *config.Config
	if l.home == "" || dir != l.home {
		may := l.listed.namesIn(dir)
		var (
			refused bool
			err     error
		)
		if c, refused, err = l.p.fileIn(dir, may, l.listed); err != nil {
			return nil, err
		}
		if parent := dirOf(dir); c == nil && !refused && parent != dir && !l.boundary(dir, may) && !discovery.OpenToOthers(dir) {
			if c, err = l.projectConfig(parent); err != nil {
				return nil, err
			}
		}
	}
	l.nearest[dir] = c
	return c, nil
}

// boundary reports whether the search for a project's file stops at dir,
// a clean path: the top of a repository or of a project, or the base
// directory. A name that dir cannot hold (may, see listings) is not
// looked for.
func (l *Lookup) boundary(dir string, may nameSet) bool {
	if dir == l.base {
		return true
	}
	for _, name := range []string{".git", ".amplifier"} {
		if !may.has(name) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// fileIn reads the project configuration dir holds itself, or returns
// nil. A name that dir cannot hold (may, see listings) is not tried, nor
// a pyproject.toml that listed says does not name amplidex. A file that
// another user controls (see discovery.Untrusted) is not read: refused
// is then set, and the refusal said through p.warn.
func (p *Policy) fileIn(dir string, may nameSet, listed *listings) (c *config.Config, refused bool, err error) {
	for _, name := range projectFiles {
		if !may.has(name) {
			continue
		}
		path := filepath.Join(dir, name)
		if name == "pyproject.toml" && listed.plainPyproject(path) {
			continue // read as the collection's metadata: no amplidex there
		}
		src, err := syntax.ReadFile(path, configLimit(name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			if !isFileAt(path) {
				continue // a directory, or nothing that can be read as a file
			}
			return nil, false, fmt.Errorf("read %s: %w", path, err)
		}
		if p.userPath != "" && samePath(path, p.userPath) {
			continue // the user's own file, wherever it lies
		}
		var prefix []string
		if name == "pyproject.toml" {
			if !strings.Contains(string(src), "amplidex") {
				continue
			}
			// A pyproject.toml that is not TOML is the collection's
			// metadata/toml-syntax to report, not a configuration error;
			// unless it has a [tool.amplidex] table, which cannot be
			// read: that is said, with where the file stops parsing,
			// never passed over.
			var probe map[string]any
			if _, err := syntax.DecodeTOML(src, &probe); err != nil {
				if !discovery.HasTOMLTable(src, "tool.amplidex") {
					continue
				}
				var perr toml.ParseError
				if errors.As(err, &perr) {
					return nil, false, fmt.Errorf("%s:%d:%d: the file does not parse as TOML (%s), so its [tool.amplidex] table is not read",
						path, perr.Position.Line, perr.Position.Col, perr.Message)
				}
				return nil, false, fmt.Errorf("%s: the file does not parse as TOML (%v), so its [tool.amplidex] table is not read", path, err)
			}
			tool, ok := probe["tool"]
			if table, isTable := tool.(map[string]any); !ok || isTable && table["amplidex"] == nil {
				continue // no [tool.amplidex]: not a configuration
			}
			prefix = []string{"tool", "amplidex"}
		}
		if owner, bad := discovery.Untrusted(path); bad {
			if p.warn != nil {
				p.warn(fmt.Sprintf("ignoring %s: it belongs to user %d, not to you; its settings are not applied", path, owner))
			}
			return nil, true, nil
		}
		c, err := config.Parse(path, src, prefix, config.Project, p.userFile)
		if err != nil {
			return nil, false, err
		}
		if c != nil {
			return c, false, nil
		}
	}
	return nil, false, nil
}

// Origin says where a setting comes from, as `git config --show-origin`
// does: "default", "file:PATH:LINE", "env:NAME" or "flag:--NAME".
type Origin string

// OriginDefault is the Origin of a setting nothing sets.
const OriginDefault Origin = "default"

// FileOrigin is the Origin of the key of c: the file, and the line that
// sets it when known.
func FileOrigin(c *config.Config, key string) Origin {
	if line, _ := c.Line(key); line > 0 {
		return Origin(fmt.Sprintf("file:%s:%d", c.Path(), line))
	}
	return Origin("file:" + c.Path())
}

// Settings are the settings that decide what is reported in one
// directory, each with its origin.
type Settings struct {
	Select, Ignore       []string
	Severity, UnknownKey string
	PerPath              map[string][]string
	perPathBase          string
	// Where each setting comes from.
	SelectFrom, IgnoreFrom       Origin
	SeverityFrom, UnknownKeyFrom Origin
	PerPathFrom                  Origin
}

// Settings resolves the settings of files in dir: the nearest
// project file, then the user's configuration, then the defaults (the
// flags come on top, in compile).
func (l *Lookup) Settings(dir string) (Settings, error) {
	proj, err := l.projectConfig(dir)
	if err != nil {
		return Settings{}, err
	}
	return l.p.settingsFrom(proj), nil
}

// settingsFrom resolves the settings from the project file proj (nil for
// none), then the user's configuration, then the defaults.
func (p *Policy) settingsFrom(proj *config.Config) Settings {
	s := Settings{Severity: "info", UnknownKey: "error", perPathBase: p.userBase,
		SelectFrom: OriginDefault, IgnoreFrom: OriginDefault, SeverityFrom: OriginDefault, UnknownKeyFrom: OriginDefault, PerPathFrom: OriginDefault}
	for _, c := range []*config.Config{p.user, proj} {
		if c == nil {
			continue
		}
		if _, ok := c.Line("check.select"); ok {
			s.Select, s.SelectFrom = c.Check.Select, FileOrigin(c, "check.select")
		}
		if _, ok := c.Line("check.ignore"); ok {
			s.Ignore, s.IgnoreFrom = c.Check.Ignore, FileOrigin(c, "check.ignore")
		}
		if _, ok := c.Line("check.severity"); ok {
			s.Severity, s.SeverityFrom = c.Check.Severity, FileOrigin(c, "check.severity")
		}
		if _, ok := c.Line("schema.unknown_key"); ok {
			s.UnknownKey, s.UnknownKeyFrom = c.Schema.UnknownKey, FileOrigin(c, "schema.unknown_key")
		}
		if _, ok := c.Line("check.per-path"); ok {
			s.PerPath, s.PerPathFrom = c.Check.PerPath, FileOrigin(c, "check.per-path")
			if c != p.user {
				s.perPathBase = filepath.Dir(c.Path())
			}
		}
	}
	return s
}

// rules is what decides, for the files of one directory, which
// diagnostics are reported and how severe.
type rules struct {
	selects, ignores []string
	minRank          int
	perPath          []pathRule
	// unknownKey is the severity of schema/unknown-key.
	unknownKey diag.Severity
	// dropped remembers, by path and code, what the per-path rules drop.
	dropped map[pathCode]bool
}

// pathCode is a diagnostic's path and code, which decide whether the
// per-path rules drop it.
type pathCode struct{ path, code string }

// Read reads the project's configuration that applies to the files in
// dir, and returns why it cannot be used.
func (l *Lookup) Read(dir string) error {
	_, err := l.rulesFor(dir)
	return err
}

// rulesFor returns the rules of the files in dir: those of the project
// file that applies there, compiled once for all the directories it
// applies to.
func (l *Lookup) rulesFor(dir string) (*rules, error) {
	if r, ok := l.rules[dir]; ok {
		return r, nil
	}
	proj, err := l.projectConfig(dir)
	if err != nil {
		return nil, err
	}
	r, ok := l.compiled[proj]
	if !ok {
		r = l.p.compile(l.p.settingsFrom(proj))
		l.compiled[proj] = r
	}
	l.rules[dir] = r
	return r, nil
}

// compile turns settings and the flags into rules. The settings were
// checked when their files were read.
func (p *Policy) compile(s Settings) *rules {
	r := &rules{
		selects:    config.SplitCodes(append(slices.Clone(s.Select), p.flags.Select...)),
		ignores:    config.SplitCodes(append(slices.Clone(s.Ignore), p.flags.Ignore...)),
		unknownKey: diag.SeverityError,
		dropped:    map[pathCode]bool{},
	}
	sev := s.Severity
	if p.flags.Severity != "" {
		sev = p.flags.Severity
	}
	r.minRank, _ = config.MinRank(sev)
	if s.UnknownKey == "warning" {
		r.unknownKey = diag.SeverityWarning
	}
	for _, pattern := range slices.Sorted(maps.Keys(s.PerPath)) {
		if g, err := config.ParseGlob(pattern); err == nil {
			r.perPath = append(r.perPath, pathRule{glob: g, codes: config.SplitCodes(s.PerPath[pattern]), base: s.perPathBase})
		}
	}
	return r
}

// apply returns d as reported (schema/unknown-key and bundle/unknown-key
// at their configured severity), and whether it is reported at all.
func (r *rules) apply(d diag.Diagnostic) (diag.Diagnostic, bool) {
	if d.Code == diag.CodeUnknownKey || d.Code == diag.CodeBundleUnknownKey {
		d.Severity = r.unknownKey
	}
	if config.Rank(d.Severity) < r.minRank {
		return d, false
	}
	if len(r.selects) > 0 && !matchAny(r.selects, d.Code) {
		return d, false
	}
	if matchAny(r.ignores, d.Code) {
		return d, false
	}
	if len(r.perPath) == 0 {
		return d, true
	}
	k := pathCode{d.Path, d.Code}
	drop, seen := r.dropped[k]
	if !seen {
		for _, pr := range r.perPath {
			if matchAny(pr.codes, d.Code) && pr.glob.Match(relPath(pr.base, d.Path)) {
				drop = true
				break
			}
		}
		r.dropped[k] = drop
	}
	return d, !drop
}

// Filter returns the diagnostics of ds that are reported, as reported;
// an error when a project's configuration cannot be read, or the
// context's once it is cancelled.
func (l *Lookup) Filter(ctx context.Context, ds []diag.Diagnostic) ([]diag.Diagnostic, error) {
	out := ds[:0:0]
	for i, d := range ds {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r, err := l.rulesFor(filepath.Dir(d.Path))
		if err != nil {
			return nil, err
		}
		if d, ok := r.apply(d); ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// FilterFile is the policy for a surface that keeps running (watch, the
// language server): the diagnostics of one file, with the configuration
// as it is on disk now. A project's configuration that cannot be read is
// said through warn, and the file then gets the user's settings.
func (p *Policy) FilterFile(path string, ds []diag.Diagnostic, warn func(error)) []diag.Diagnostic {
	if len(ds) == 0 {
		return ds
	}
	l := p.Lookup()
	r, err := l.rulesFor(filepath.Dir(path))
	if err != nil {
		warn(err)
		r = p.compile(p.settingsFrom(nil))
	}
	out := make([]diag.Diagnostic, 0, len(ds))
	for _, d := range ds {
		if d, ok := r.apply(d); ok {
			out = append(out, d)
		}
	}
	return out
}

// pathRule ignores codes in the files a glob matches; the glob is taken
// from base, the directory of the file that declares it.
type pathRule struct {
	glob  config.Glob
	codes []string
	base  string
}

// relPath is p relative to base, slash-separated; p itself when it lies
// outside.
func relPath(base, p string) string {
	if rel, err := filepath.Rel(base, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(p)
}

func matchAny(patterns []string, code string) bool {
	for _, p := range patterns {
		if diag.MatchCode(p, code) {
			return true
		}
	}
	return false
}

// PolicyFor returns the policy of ws without flags, as query diagnostics,
// watch and the language server apply it, and a Lookup that has read the
// project's configuration of ws's base directory and of each path: one
// that cannot be used is a *ConfigError.
func PolicyFor(ws *Workspace, paths []string) (*Policy, *Lookup, error) {
	pol, err := NewPolicy(ws, Selection{})
	if err != nil {
		return nil, nil, err
	}
	lk := pol.Lookup()
	for _, p := range append([]string{ws.Base()}, paths...) {
		dir := p
		if !isDirAt(p) {
			dir = filepath.Dir(p)
		}
		if err := lk.Read(dir); err != nil {
			return nil, nil, &ConfigError{Err: err}
		}
	}
	return pol, lk, nil
}

// Keep returns the diagnostics of r under scope (all of them when scope
// names one path, which the daemon answered for) that the Lookup's
// policy keeps, with their summary: query diagnostics' answer.
func (l *Lookup) Keep(ctx context.Context, r *query.DiagnosticsResult, scope []string) (*query.DiagnosticsResult, error) {
	var in []diag.Diagnostic
	for _, d := range r.Diagnostics {
		if len(scope) == 1 || InScope(d.Path, scope) {
			in = append(in, d)
		}
	}
	kept, err := l.Filter(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &ConfigError{Err: err}
	}
	if kept == nil {
		kept = []diag.Diagnostic{}
	}
	return &query.DiagnosticsResult{Diagnostics: kept, Summary: Summarize(kept)}, nil
}
