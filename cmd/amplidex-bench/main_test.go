// The tests of a main package live in it: package main cannot be imported.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
)

// TestRunSmall runs the whole harness on a small tree without watchman and
// checks the report it writes.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds amplidex and runs its daemon; skipped with -short")
	}
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "bench.json")
	var stdout, stderr bytes.Buffer
	cfg, err := parseFlags([]string{"-collections", "50", "-skip-watchman", "-samples", "5", "-gap", "0", "-quiet", "100ms",
		"-new-project", "6", "-new-project-files", "60", "-new-projects", "1",
		"-dir", filepath.Join(dir, "tree"), "-keep", "-json", jsonPath}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.stdout, cfg.stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := run(ctx, cfg); err != nil {
		t.Fatalf("run: %v\nprogress:\n%s", err, stderr.String())
	}

	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("decode %s: %v", jsonPath, err)
	}
	byName := map[string]metric{}
	for _, m := range rep.Metrics {
		byName[m.Name] = m
	}
	for _, name := range metricNames {
		m, ok := byName[name]
		if !ok {
			t.Errorf("metric %s missing from the JSON report", name)
			continue
		}
		if m.Amplidex == nil {
			t.Errorf("metric %s: no amplidex value", name)
		}
		if m.Against == "watchman" || (m.Reference == nil) != (m.Ratio == nil) {
			t.Errorf("metric %s: against %q, reference %v, ratio %v; watchman was skipped", name, m.Against, m.Reference, m.Ratio)
		}
		if !strings.Contains(stdout.String(), m.Label) {
			t.Errorf("table lacks the row %q:\n%s", m.Label, stdout.String())
		}
	}
	if len(rep.Metrics) != len(metricNames) {
		t.Errorf("%d metrics, want %d", len(rep.Metrics), len(metricNames))
	}
	for name, want := range map[string]string{"restart": "floor", "query_resolve_process": "dial floor"} {
		if m := byName[name]; m.Against != want || m.Reference == nil || m.Met == nil {
			t.Errorf("metric %s: against %q (want %q), reference %v, met %v", name, m.Against, want, m.Reference, m.Met)
		}
	}
	if m := byName["restart_files_read"]; m.Amplidex != nil && *m.Amplidex != 0 {
		t.Errorf("restart read %v files again, want 0", *m.Amplidex)
	}

	// The restart's first answer came from the index the cold start left.
	if a := rep.Amplidex; a.FirstAnswerMS <= 0 || !a.FirstAnswerFound || a.FirstAnswerScan == "" {
		t.Errorf("restart: first answer after %v ms, named the collection %v, scan %q", a.FirstAnswerMS, a.FirstAnswerFound, a.FirstAnswerScan)
	}
	if f := rep.Floor; f.Files != rep.Tree.Files || f.Dirs != rep.Tree.Dirs+1 || len(f.Runs) != floorRuns || f.WalkMS <= 0 {
		t.Errorf("floor walked %d files and %d dirs in %v, tree has %d and %d (and its root)", f.Files, f.Dirs, f.Runs, rep.Tree.Files, rep.Tree.Dirs)
	}
	runs := (&harness{cfg: cfg}).processRuns()
	for _, name := range []string{"amplidex_resolve_process", "dial_floor_process", "amplidex_resolve_process_cpu", "dial_floor_process_cpu"} {
		if l := rep.Loops[name]; l.Samples != runs || l.Max <= 0 {
			t.Errorf("loop %s: %d samples, at most %v ms, want %d samples", name, l.Samples, l.Max, runs)
		}
	}
	// The first answer in the new project named its collection (run
	// checks that) and was timed once.
	if l := rep.Loops["amplidex_new_project_first_answer"]; l.Samples != 1 || l.Max <= 0 {
		t.Errorf("loop amplidex_new_project_first_answer: %+v, want one sample", l)
	}
	if p := rep.NewProject; p == nil || len(p.RunsMS) != 1 || len(p.Projects) != 1 || p.MaxMS != p.RunsMS[0] || p.MedianMS != p.RunsMS[0] {
		t.Errorf("new project: %+v, want one run", p)
	} else if np, m := p.Projects[0], byName["new_project_first_answer"]; np.Collections != 6 || np.Files < 60 || np.Name == "" || np.ClientCPUMS <= 0 ||
		m.Amplidex == nil || *m.Amplidex != p.MaxMS || m.Met == nil || !strings.Contains(stdout.String(), "new project: first answer median") || !strings.Contains(stdout.String(), "  project 1: 6 collections") {
		t.Errorf("new project %+v, metric %+v; table:\n%s", np, byName["new_project_first_answer"], stdout.String())
	}
	for _, k := range []string{"amplidex_cold", "amplidex", "amplidex_quiet"} {
		if m := rep.Memory[k]; m.Anon <= 0 || m.File <= 0 || m.Anon+m.File+m.Shmem != m.RSS {
			t.Errorf("memory %s: %+v: want RssAnon and RssFile that add up to VmRSS with RssShmem", k, m)
		}
	}

	root := filepath.Join(dir, "tree", "home", ".amplifier", "collections")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 50 || rep.Tree.Collections != 50 {
		t.Errorf("%d collection directories, report says %d, want 50", len(entries), rep.Tree.Collections)
	}
	if files := countFiles(t, root); files != rep.Tree.Files {
		t.Errorf("%d files in the tree, report says %d", files, rep.Tree.Files)
	}
	if want := 50 - rep.Tree.MissingProject; rep.Amplidex.Collections != want {
		t.Errorf("amplidex found %d collections, want %d (50 less %d without pyproject.toml)",
			rep.Amplidex.Collections, want, rep.Tree.MissingProject)
	}
	if rep.Amplidex.FilesIndexed == 0 || rep.Amplidex.FilesIndexed > rep.Tree.Files {
		t.Errorf("amplidex indexed %d files of %d", rep.Amplidex.FilesIndexed, rep.Tree.Files)
	}
}

// TestRunOnlyQuery runs the harness with -only query: the whole-process
// query loop is measured, and nothing else.
func TestRunOnlyQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds amplidex and runs its daemon; skipped with -short")
	}
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "bench.json")
	var stdout, stderr bytes.Buffer
	cfg, err := parseFlags([]string{"-collections", "20", "-samples", "4", "-only", "query", "-json", jsonPath}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.stdout, cfg.stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v\nprogress:\n%s", err, stderr.String())
	}
	runs := (&harness{cfg: cfg}).processRuns()
	for name, l := range rep.Loops {
		switch name {
		case "amplidex_resolve_process", "dial_floor_process", "amplidex_resolve_process_cpu", "dial_floor_process_cpu":
			if l.Samples != runs {
				t.Errorf("loop %s: %d samples, want %d", name, l.Samples, runs)
			}
		default:
			t.Errorf("loop %s measured with -only query", name)
		}
	}
	if len(rep.Loops) != 4 {
		t.Errorf("loops %v, want the four of the whole-process query", rep.Loops)
	}
	var names []string
	for _, m := range rep.Metrics {
		names = append(names, m.Name)
		if m.Amplidex == nil {
			t.Errorf("metric %s: no amplidex value", m.Name)
		}
	}
	if want := []string{"initial_index", "query_resolve_process", "query_resolve_process_cpu", "rss_anon_cold"}; !slices.Equal(names, want) {
		t.Errorf("metrics %q with -only query, want %q", names, want)
	}
	if rep.Watchman != "" {
		t.Errorf("watchman %s measured with -only query", rep.Watchman)
	}
}

func countFiles(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// digest hashes every path and content below root.
func digest(t *testing.T, root string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		h.Write([]byte(rel + "\x00"))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func TestGenerateTree(t *testing.T) {
	const n = 400
	dir := t.TempDir()
	gen := func(name string, seed uint64) (*treeStats, [32]byte) {
		root := filepath.Join(dir, name)
		st, err := generateTree(root, n, seed)
		if err != nil {
			t.Fatal(err)
		}
		return st, digest(t, root)
	}
	a, sumA := gen("a", 7)
	b, sumB := gen("b", 7)
	_, sumC := gen("c", 8)
	if sumA != sumB || a.Files != b.Files || len(a.Probes) != len(b.Probes) {
		t.Errorf("two trees of seed 7 differ")
	}
	if sumA == sumC {
		t.Errorf("trees of seeds 7 and 8 are the same")
	}
	entries, err := os.ReadDir(a.Root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n || a.Collections != n {
		t.Errorf("%d collection directories, stats say %d, want %d", len(entries), a.Collections, n)
	}
	if files := countFiles(t, a.Root); files != a.Files {
		t.Errorf("%d files, stats say %d", files, a.Files)
	}
	if per := float64(a.Files) / n; per < 10 || per > 14 {
		t.Errorf("%.1f files per collection, want about 12", per)
	}
	for kind, count := range map[string]int{"bad YAML": a.BadYAML, "missing pyproject": a.MissingProject,
		"unknown key": a.UnknownKey, "broken extends": a.BrokenExtends, "nested layout": a.Nested} {
		if count == 0 || count > n/4 {
			t.Errorf("%d collections with %s in %d", count, kind, n)
		}
	}
	for _, p := range a.Probes {
		if _, err := os.Stat(p.Agent); err != nil {
			t.Errorf("probe %s: %v", p.Name, err)
		}
		if _, err := os.Stat(filepath.Join(p.Dir, "pyproject.toml")); err != nil {
			t.Errorf("probe %s has no pyproject.toml: %v", p.Name, err)
		}
	}
	if _, err := generateTree(a.Root, n, 7); err == nil {
		t.Errorf("generating into a non-empty directory succeeded")
	}
}

// TestGenerateOnly checks that -generate-only writes the tree, keeps it,
// prints its root and measures nothing.
func TestGenerateOnly(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-collections", "20", "-generate-only", "-dir", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cfg.stdout, cfg.stderr = &stdout, &stderr
	rep, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run: %v\nprogress:\n%s", err, stderr.String())
	}
	if rep != nil {
		t.Errorf("run measured something: %+v", rep)
	}
	root := strings.TrimSpace(stdout.String())
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(real, "home", ".amplifier", "collections"); root != want {
		t.Errorf("printed %q, want %q", root, want)
	}
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 20 {
		t.Errorf("the tree was not kept: %d collections, %v", len(entries), err)
	}
}

func TestQuantile(t *testing.T) {
	ms := func(vs ...int) timings {
		var ts timings
		for _, v := range vs {
			ts = append(ts, time.Duration(v)*time.Millisecond)
		}
		return ts
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i
	}
	tests := []struct {
		name string
		ts   timings
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"median of odd", ms(5, 1, 3), 0.5, 3 * time.Millisecond},
		{"median of even is the lower", ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		{"p99 of 100", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p50 of 100", ms(hundred...), 0.5, 50 * time.Millisecond},
		{"min", ms(hundred...), 0, 1 * time.Millisecond},
		{"max", ms(hundred...), 1, 100 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ts.quantile(tc.q); got != tc.want {
				t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    memory
		wantErr bool
	}{
		{"all", "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nRssAnon:\t 640 kB\nRssFile:\t 256 kB\nRssShmem:\t 128 kB\n",
			memory{RSS: 1 << 20, Peak: 2 << 20, Anon: 640 << 10, File: 256 << 10, Shmem: 128 << 10}, false},
		{"rss only", "VmRSS:\t4 kB\n", memory{RSS: 4 << 10}, false},
		{"no rss", "Name:\tx\n", memory{}, true},
		{"bad unit", "VmRSS:\t1 MB\n", memory{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMemory(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseMemory = %+v, %v; want %+v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"plain", "42 (amplidex) S 1 42 42 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 9 0 100 1000 200\n", 2810 * time.Millisecond, false},
		{"name with spaces and parentheses", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 6 7\n", 70 * time.Millisecond, false},
		{"no name", "42 amplidex S 1\n", 0, true},
		{"too short", "42 (amplidex) S 1 42 42\n", 0, true},
		{"not a number", "42 (amplidex) S 1 42 42 0 -1 4194560 100 0 0 0 x 31 0\n", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseStatCPU = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(*config) bool
		wantErr error
	}{
		{"defaults", nil, func(c *config) bool {
			return c.collections == 10000 && c.samples == 200 && c.seed == 1 && !c.skipWatchman && c.gap == 200*time.Millisecond &&
				c.newProject == 1500 && c.newProjectFiles == 45000 && c.newProjects == 3
		}, nil},
		{"new project", []string{"-new-project", "6", "-new-project-files", "60", "-new-projects", "1"}, func(c *config) bool {
			return c.newProject == 6 && c.newProjectFiles == 60 && c.newProjects == 1
		}, nil},
		{"no new project", []string{"-new-project", "0"}, func(c *config) bool { return c.newProject == 0 }, nil},
		{"new project of too few collections", []string{"-new-project", "3"}, nil, nil},
		{"new project of negative collections", []string{"-new-project", "-1"}, nil, nil},
		{"new project of negative files", []string{"-new-project-files", "-5"}, nil, nil},
		{"no new projects", []string{"-new-projects", "0"}, nil, nil},
		{"new projects not a number", []string{"-new-projects", "three"}, nil, nil},
		{"all", []string{"-collections", "12", "-samples", "3", "-seed", "9", "-skip-watchman", "-json", "x.json", "-dir", "d", "-keep"},
			func(c *config) bool {
				return c.collections == 12 && c.samples == 3 && c.seed == 9 && c.skipWatchman && c.jsonPath == "x.json" && c.dir == "d" && c.keep
			}, nil},
		{"generate only", []string{"-generate-only", "-dir", "d"}, func(c *config) bool { return c.generateOnly && c.keep && c.dir == "d" }, nil},
		{"generate only without a directory", []string{"-generate-only"}, nil, nil},
		{"only query", []string{"-only", "query"}, func(c *config) bool { return c.only == onlyQuery }, nil},
		{"only something else", []string{"-only", "restart"}, nil, nil},
		{"too few collections", []string{"-collections", "2"}, nil, nil},
		{"no samples", []string{"-samples", "0"}, nil, nil},
		{"arguments", []string{"extra"}, nil, nil},
		{"help", []string{"-h"}, nil, flag.ErrHelp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseFlags(tc.args, io.Discard)
			switch {
			case tc.check != nil:
				if err != nil || !tc.check(cfg) {
					t.Errorf("parseFlags(%q) = %+v, %v", tc.args, cfg, err)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("parseFlags(%q) error %v, want %v", tc.args, err, tc.wantErr)
				}
			case err == nil:
				t.Errorf("parseFlags(%q) succeeded, want an error", tc.args)
			}
		})
	}
}

func TestMetricTargets(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		m    metric
		want *bool
	}{
		{"ratio met", newMetric("x", "x", "ms", f(12), against("floor", f(10)), ratioAtMost(1.2, "")), ptr(true)},
		{"ratio missed", newMetric("x", "x", "ms", f(13), against("floor", f(10)), ratioAtMost(1.2, "")), ptr(false)},
		{"ratio without reference", newMetric("x", "x", "ms", f(11), against("watchman", nil), ratioAtMost(0.5, "")), nil},
		{"under met", newMetric("x", "x", "ms", f(0.5), reference{}, under(1, "")), ptr(true)},
		{"under missed at the bound", newMetric("x", "x", "ms", f(1), reference{}, under(1, "")), ptr(false)},
		{"at most met at the bound", newMetric("x", "x", "ms", f(50), reference{}, atMost(50, "")), ptr(true)},
		{"at most zero", newMetric("x", "x", "files", f(0), reference{}, atMost(0, "")), ptr(true)},
		{"no target", newMetric("x", "x", "ms", f(3), against("watchman", f(1)), noTarget), nil},
		{"nothing measured", newMetric("x", "x", "ms", nil, against("watchman", f(1)), under(1, "")), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.m.Met == nil) != (tc.want == nil) || tc.m.Met != nil && *tc.m.Met != *tc.want {
				t.Errorf("met = %v, want %v", tc.m.Met, tc.want)
			}
		})
	}
	if m := newMetric("x", "x", "ms", f(1), against("watchman", nil), noTarget); m.Against != "" || m.Ratio != nil {
		t.Errorf("a row without a reference names %q, ratio %v", m.Against, m.Ratio)
	}
}

func TestScanState(t *testing.T) {
	tests := []struct {
		name         string
		st           *query.Status
		want         string
		wantScanning bool
	}{
		{"no answer", nil, "done", false},
		{"done", &query.Status{PID: 1}, "done", false},
		{"scanning", &query.Status{Scanning: true, Progress: &query.ScanProgress{Phase: "reading roots", Files: 3, Collections: 1, Elapsed: "2ms"}},
			"scanning (reading roots: 3 files, 1 collections, 2ms)", true},
		{"scanning, no progress yet", &query.Status{Scanning: true}, "scanning", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, scanning := scanState(tc.st)
			if got != tc.want || scanning != tc.wantScanning {
				t.Errorf("scanState = %q, %v; want %q, %v", got, scanning, tc.want, tc.wantScanning)
			}
		})
	}
}

func TestFloorWalk(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	st, err := generateTree(root, 20, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("no-such-target", filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	w, err := floorWalk(root)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if w.files != st.Files+1 || w.dirs != st.Dirs+1 {
		t.Errorf("walked %d files and %d dirs, want %d and %d", w.files, w.dirs, st.Files+1, st.Dirs+1)
	}
}

// TestGenerateProject checks the tree of a new project: n collections in
// its .amplifier/collections, about the files asked for in all, spread
// unevenly over them, and probes to ask for.
func TestGenerateProject(t *testing.T) {
	const n, files = 60, 1800
	dir := filepath.Join(t.TempDir(), "project")
	st, err := generateProject(dir, n, files, 5)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, ".amplifier", "collections")
	if st.Root != root {
		t.Errorf("root %s, want %s", st.Root, root)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n || st.Collections != n {
		t.Errorf("%d collection directories, stats say %d, want %d", len(entries), st.Collections, n)
	}
	got := countFiles(t, root)
	if got != st.Files {
		t.Errorf("%d files, stats say %d", got, st.Files)
	}
	if got < files || got > files+files/20 {
		t.Errorf("%d files, want about %d", got, files)
	}
	sizes := map[int]bool{}
	for _, e := range entries {
		sizes[countFiles(t, filepath.Join(root, e.Name()))] = true
	}
	if len(sizes) < 5 {
		t.Errorf("collection sizes %v: want them to vary", slices.Sorted(maps.Keys(sizes)))
	}
	if len(st.Probes) == 0 {
		t.Fatal("no probes")
	}
	for _, p := range st.Probes {
		if _, err := os.Stat(filepath.Join(p.Dir, "pyproject.toml")); err != nil || filepath.Dir(p.Dir) != root {
			t.Errorf("probe %s in %s: %v", p.Name, p.Dir, err)
		}
	}

	// Fewer files than the generator writes anyway make no smaller tree.
	small, err := generateProject(filepath.Join(t.TempDir(), "small"), n, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if small.Files < 10*n {
		t.Errorf("%d files in %d collections asked to hold 10 in all: want each collection whole", small.Files, n)
	}
	if _, err := generateProject(filepath.Join(t.TempDir(), "negative"), n, -1, 5); err == nil {
		t.Errorf("a negative file count was accepted")
	}
}
