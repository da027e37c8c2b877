package main

import (
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "amplidex-bench:", err)
		os.Exit(2)
	}
	cfg.stdout, cfg.stderr = os.Stdout, os.Stderr
	if _, err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "amplidex-bench:", err)
		os.Exit(1)
	}
}

// config holds the command line.
type config struct {
	collections  int
	dir          string
	keep         bool
	seed         uint64
	samples      int
	gap          time.Duration
	amplidex     string
	watchman     string
	jsonPath     string
	skipWatchman bool
	generateOnly bool
	only         string        // "" for every measurement, onlyQuery for the whole-process query loop
	quiet        time.Duration // how long after the loops the daemon's memory is read again
	// newProject is the number of collections in each new project, 0 to
	// skip that measurement; newProjectFiles the files in each, and
	// newProjects how many new projects are timed.
	newProject, newProjectFiles, newProjects int
	stdout                                   io.Writer // the table
	stderr                                   io.Writer // progress
}

// parseFlags parses the command line.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("amplidex-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: amplidex-bench [flags]\n\n"+
			"Generates a synthetic tree of collections and measures amplidex against watchman on it,\n"+
			"printing a table and optionally writing JSON.\n\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&cfg.collections, "collections", 10000, "number of collections to generate")
	fs.StringVar(&cfg.dir, "dir", "", "where to generate the tree (default: a temporary directory)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the generated tree afterwards")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated tree")
	fs.IntVar(&cfg.samples, "samples", 200, "samples per latency loop")
	fs.DurationVar(&cfg.gap, "gap", 200*time.Millisecond, "pause before each save of the save loops (people save a few times a second at most)")
	fs.StringVar(&cfg.amplidex, "amplidex", "", "amplidex binary to measure (default: built from this module)")
	fs.StringVar(&cfg.watchman, "watchman", "", "watchman binary (default: watchman on PATH, installed with apt-get when root)")
	fs.StringVar(&cfg.jsonPath, "json", "", "also write the results as JSON to this file")
	fs.DurationVar(&cfg.quiet, "quiet", 11*time.Second, "how long after its last loop amplidex's memory is read again, quiet\n"+
		"(two of the daemon's looks, 5 s apart, at whether a burst of work ended, and a second to spare)")
	fs.BoolVar(&cfg.skipWatchman, "skip-watchman", false, "measure amplidex only")
	fs.BoolVar(&cfg.generateOnly, "generate-only", false, "generate the tree, keep it, print where it is and measure nothing (needs -dir)")
	fs.StringVar(&cfg.only, "only", "", "measure one thing: \""+onlyQuery+"\" times whole `amplidex query resolve` processes\n"+
		"against the dial floor on a cold-started daemon, and nothing else (no floor walk, restart or watchman)")
	fs.IntVar(&cfg.newProject, "new-project", 1500, "collections in each new project whose first `amplidex query resolve` is timed\n"+
		"with the daemon running for the user root (0 skips the measurement)")
	fs.IntVar(&cfg.newProjectFiles, "new-project-files", 45000, "files in each new project, spread over its collections\n"+
		"(0: as many as the generator writes anyway, about 12 a collection)")
	fs.IntVar(&cfg.newProjects, "new-projects", 3, "how many new projects to time")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.collections < 4:
		return nil, fmt.Errorf("-collections %d: need at least 4", cfg.collections)
	case cfg.samples < 1:
		return nil, fmt.Errorf("-samples %d: need at least 1", cfg.samples)
	case cfg.gap < 0:
		return nil, fmt.Errorf("-gap %s: must not be negative", cfg.gap)
	case cfg.only != "" && cfg.only != onlyQuery:
		return nil, fmt.Errorf("-only %q: want %q", cfg.only, onlyQuery)
	case cfg.newProject < 0 || cfg.newProject > 0 && cfg.newProject < 4:
		return nil, fmt.Errorf("-new-project %d: need 0 (skip) or at least 4", cfg.newProject)
	case cfg.newProjectFiles < 0:
		return nil, fmt.Errorf("-new-project-files %d: must not be negative", cfg.newProjectFiles)
	case cfg.newProjects < 1:
		return nil, fmt.Errorf("-new-projects %d: need at least 1", cfg.newProjects)
	case cfg.generateOnly && cfg.dir == "":
		return nil, errors.New("-generate-only needs -dir: a tree in a temporary directory would be lost")
	}
	if cfg.generateOnly {
		cfg.keep = true
	}
	return cfg, nil
}

// onlyQuery is the -only value that measures the whole-process query loop
// alone.
const onlyQuery = "query"

// harness is one run: the tree, the scratch directory and the settings.
type harness struct {
	cfg  *config
	work string // scratch: state of both daemons, the built binary
	home string // HOME of the daemons; the user root is inside it
	tree *treeStats
}

// progress reports what the run is doing on stderr.
func (h *harness) progress(format string, args ...any) {
	fmt.Fprintf(h.cfg.stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// processRuns is how many whole processes of each kind are timed: half
// the samples, at least 10 and at most 100.
func (h *harness) processRuns() int { return min(max(h.cfg.samples/2, 10), 100) }

// probeAt returns the collection the i-th of n samples edits or asks for,
// spreading n samples over the whole tree.
func (t *treeStats) probeAt(i, n int) probe {
	if n <= len(t.Probes) {
		return t.Probes[i*len(t.Probes)/n]
	}
	return t.Probes[i%len(t.Probes)]
}

// run generates the tree, measures amplidex and then watchman, prints the
// table and writes the JSON report.
func run(ctx context.Context, cfg *config) (*report, error) {
	load := loadAverage()
	work, err := os.MkdirTemp("", "amplidex-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	// Symbolic links in the temporary directory would make the paths the
	// daemons report differ from the ones generated.
	if work, err = filepath.EvalSymlinks(work); err != nil {
		return nil, err
	}
	treeDir, cleanup, err := treeLocation(cfg)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	home := filepath.Join(treeDir, "home")
	h := &harness{cfg: cfg, work: work, home: home}

	h.progress("generating %d collections (seed %d) in %s", cfg.collections, cfg.seed, home)
	start := time.Now()
	if h.tree, err = generateTree(filepath.Join(home, ".amplifier", "collections"), cfg.collections, cfg.seed); err != nil {
		return nil, err
	}
	if len(h.tree.Probes) == 0 {
		return nil, errors.New("the generated tree has no defect-free collection to probe")
	}
	h.progress("generated %d files in %d directories in %s", h.tree.Files, h.tree.Dirs, time.Since(start).Round(time.Millisecond))
	if cfg.generateOnly {
		_, err := fmt.Fprintln(cfg.stdout, h.tree.Root)
		return nil, err
	}

	bin, dialFloor, err := h.build(ctx)
	if err != nil {
		return nil, err
	}
	floor := &floorResult{}
	if cfg.only == "" {
		h.progress("floor: walking the tree %d times (lstat every entry, an inotify watch on every directory)", floorRuns)
		if floor, err = h.measureFloor(); err != nil {
			return nil, err
		}
		h.progress("floor: %d files, %d directories watched: %s", floor.Files, floor.Dirs, floor.Runs)
	}
	a, err := h.measureAmplidex(ctx, bin, dialFloor)
	if err != nil {
		return nil, err
	}
	var w *watchmanResult
	if !cfg.skipWatchman && cfg.only == "" {
		wbin, err := h.findWatchman(ctx)
		if err != nil {
			return nil, err
		}
		if wbin != "" {
			if w, err = h.measureWatchman(ctx, wbin); err != nil {
				return nil, err
			}
		}
	}

	rep := &report{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: describeMachine(load),
		Seed: cfg.seed, Samples: cfg.samples, GapMS: ms(cfg.gap), Tree: h.tree,
		Amplidex: amplidexRef{Binary: bin, Revision: revision(bin), Collections: a.Collections, FilesIndexed: a.InitialFiles,
			Analyzed: a.InitialAnalyzed, FirstAnswerMS: ms(a.FirstAnswer), FirstAnswerFound: a.FirstFound, FirstAnswerScan: a.FirstScan},
		Floor:      floorRef{WalkMS: ms(floor.Walk), Runs: floor.Runs.millis(), Files: floor.Files, Dirs: floor.Dirs, Watcher: floor.Watcher},
		Metrics:    metrics(a, floor, w, cfg.only),
		Loops:      loops(a, floor, w),
		Memory:     map[string]memory{"amplidex_cold": a.ColdMemory, "amplidex": a.Memory, "amplidex_quiet": a.QuietMemory},
		NewProject: newProjectOf(a),
	}
	if w != nil {
		rep.Watchman = w.Version
		rep.Memory["watchman_crawl"], rep.Memory["watchman"] = w.CrawlMemory, w.Memory
	}
	if err := rep.writeTable(cfg.stdout); err != nil {
		return nil, err
	}
	if cfg.jsonPath != "" {
		if err := rep.writeJSON(cfg.jsonPath); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// treeLocation returns the directory the tree is generated in, with its
// symbolic links resolved, and the function that removes what the run
// wrote there unless -keep is set: the whole directory when it is a
// temporary one, its home subdirectory when -dir named it.
func treeLocation(cfg *config) (string, func(), error) {
	dir, created := cfg.dir, false
	var err error
	if dir == "" {
		if dir, err = os.MkdirTemp("", "amplidex-bench-tree-"); err != nil {
			return "", nil, err
		}
		created = true
	} else if err = os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	if dir, err = filepath.Abs(dir); err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return "", nil, err
	}
	cleanup := func() {
		switch {
		case cfg.keep:
		case created:
			os.RemoveAll(dir)
		default:
			os.RemoveAll(filepath.Join(dir, "home"))
		}
	}
	return dir, cleanup, nil
}

// build returns the amplidex binary to measure, built from this module
// unless -amplidex names one, and the dial floor, built from this module
// into the work directory.
func (h *harness) build(ctx context.Context) (amplidex, dialFloor string, err error) {
	dir := filepath.Join(h.work, "bin")
	pkgs := []string{"github.com/amplidex/amplidex/cmd/amplidex-bench/internal/dialfloor"}
	amplidex, dialFloor = h.cfg.amplidex, filepath.Join(dir, "dialfloor")
	if amplidex == "" {
		amplidex = filepath.Join(dir, "amplidex")
		pkgs = append(pkgs, "github.com/amplidex/amplidex/cmd/amplidex")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	h.progress("building %s", strings.Join(pkgs, ", "))
	// With -o naming a directory, go build writes each main package there
	// under its own name.
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("build: %w\n%s", err, out)
	}
	return amplidex, dialFloor, nil
}

// revision names the commit a Go binary was built from, with "+dirty" when
// the work tree had changes; "" when the binary does not say.
func revision(bin string) string {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
