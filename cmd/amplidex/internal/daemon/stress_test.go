package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// TestMain lets the test binary run as a daemon in a child process, for
// the kill -9 test.
func TestMain(m *testing.M) {
	if dir := os.Getenv("AMPLIDEX_TEST_DAEMON"); dir != "" {
		runChildDaemon(dir)
		return
	}
	os.Exit(m.Run())
}

func runChildDaemon(dir string) {
	e := &env{dir: dir, home: filepath.Join(dir, "home"), project: filepath.Join(dir, "proj"), bundled: filepath.Join(dir, "bundled")}
	paths, err := query.DefaultPaths(func(k string) string {
		if k == "AMPLIDEX_HOME" {
			return filepath.Join(dir, "state")
		}
		return ""
	})
	if err != nil {
		panic(err)
	}
	d, err := daemon.Start(context.Background(), daemon.Options{Paths: paths, Home: e.home, Bundled: []string{e.bundled},
		Watch: watcher.Options{Debounce: 5 * time.Millisecond}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	<-d.Done() // killed long before
}

// fresh scans the env's roots from scratch, as `check` would, and returns
// every file path and every diagnostic.
func (e *env) fresh() ([]string, []diag.Diagnostic) {
	e.t.Helper()
	roots := discovery.Roots(e.project, e.home, []string{e.bundled})
	loader := &discovery.Loader{}
	cols := make([][]*discovery.Collection, len(roots))
	var files []string
	for i, r := range roots {
		cs, err := loader.ScanRoot(r)
		if err != nil {
			e.t.Fatal(err)
		}
		cols[i] = cs
		for _, c := range cs {
			for p := range c.Facts {
				files = append(files, p)
			}
		}
	}
	sort.Strings(files)
	st, _ := catalog.New(catalog.Options{Home: e.home, Bundled: []string{e.bundled}}).AddProject(e.project)
	v, _ := st.View(e.project)
	return files, v.Diagnostics()
}

// indexed returns every file the daemon has indexed and its diagnostics.
func (e *env) indexed(c *query.Client) ([]string, []diag.Diagnostic) {
	e.t.Helper()
	var ch query.ChangesResult
	if err := e.call(c, "changes", map[string]any{"since": "c:1:1:0"}, &ch); err != nil {
		e.t.Fatal(err)
	}
	files := []string{}
	for _, f := range ch.Files {
		files = append(files, f.Path)
	}
	sort.Strings(files)
	var d query.DiagnosticsResult
	if err := e.call(c, "diagnostics", nil, &d); err != nil {
		e.t.Fatal(err)
	}
	return files, d.Diagnostics
}

// assertIndexEqualsScan compares the daemon's index with a fresh scan,
// file for file, and their diagnostics.
func (e *env) assertIndexEqualsScan(c *query.Client) {
	e.t.Helper()
	gotFiles, gotDiags := e.indexed(c)
	wantFiles, wantDiags := e.fresh()
	if len(wantFiles) == 0 {
		e.t.Fatal("the fresh scan found nothing")
	}
	if !reflect.DeepEqual(gotFiles, wantFiles) {
		e.t.Errorf("index holds %d files, a fresh scan %d", len(gotFiles), len(wantFiles))
		missing, extra := diff(wantFiles, gotFiles), diff(gotFiles, wantFiles)
		e.t.Errorf("missing from the index (%d): %v", len(missing), head(missing))
		e.t.Errorf("in the index only (%d): %v", len(extra), head(extra))
	}
	if wantDiags == nil {
		wantDiags = []diag.Diagnostic{}
	}
	if !reflect.DeepEqual(gotDiags, wantDiags) {
		e.t.Errorf("daemon diagnostics (%d) differ from a fresh scan's (%d)", len(gotDiags), len(wantDiags))
	}
}

func diff(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

// burst writes n context files spread over collections of 100 files each
// in root, creating the collections as it goes, as fast as it can.
func burst(t *testing.T, root string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	per := 100
	cols := (n + per - 1) / per
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for ci := w; ci < cols; ci += 4 {
				dir := filepath.Join(root, fmt.Sprintf("c%04d", ci))
				if err := os.MkdirAll(filepath.Join(dir, "context", "sub"), 0o755); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte(pyproject(fmt.Sprintf("c%04d", ci), "1.0.0")), 0o644); err != nil {
					errs <- err
					return
				}
				for f := 0; f < per && ci*per+f < n; f++ {
					sub := "context"
					if f%2 == 1 {
						sub = filepath.Join("context", "sub")
					}
					p := filepath.Join(dir, sub, "f"+strconv.Itoa(f)+".md")
					if err := os.WriteFile(p, []byte("# File\n"), 0o644); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestBurstPastTheKernelQueue creates 50,000 files in one burst, more than
// the kernel's queue of 16,384 events holds: after the daemon settles, its
// index equals a fresh scan, file for file.
func TestBurstPastTheKernelQueue(t *testing.T) {
	deadline(t, 5*time.Minute)
	if testing.Short() {
		t.Skip("50,000 files: skipped in -short mode")
	}
	e := newEnv(t)
	if err := os.MkdirAll(e.userRoot(), 0o755); err != nil {
		t.Fatal(err)
	}
	e.start()
	c := e.client()
	e.resolve(c, "nothing-yet")
	burst(t, e.userRoot(), 50_000)
	e.assertIndexEqualsScan(c)
}

// TestWatchBudgetPolls limits the daemon to a handful of inotify watches:
// the roots fall back to polling, say so in status, and changes are still
// seen.
func TestWatchBudgetPolls(t *testing.T) {
	deadline(t, 5*time.Minute)
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	d, err := daemon.Start(context.Background(), daemon.Options{
		Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}, NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 50 * time.Millisecond, MaxWatches: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := e.client()
	e.collection(filepath.Join(e.userRoot(), "b"), "b", "1.0.0")
	if r := e.resolve(c, "b"); r == nil {
		t.Fatal("a collection created in a polled root is not seen")
	}
	e.write(filepath.Join(e.userRoot(), "b", "pyproject.toml"), pyproject("b", "2.0.0"))
	if r := e.resolve(c, "b"); r == nil || r.Winner.Version != "2.0.0" {
		t.Fatalf("an edit in a polled root is not seen: %+v", r)
	}
	polling := false
	for _, r := range d.Status().Roots {
		if r.Path == e.userRoot() && watcher.State(r.State) == watcher.StatePolling && len(r.Warnings) > 0 {
			polling = true
		}
	}
	if !polling {
		t.Errorf("status does not show the user root polling with a warning: %+v", d.Status().Roots)
	}
	e.assertIndexEqualsScan(c)
}

// TestEditorSaves edits an agent with each editor's exact sequence of
// system calls; every one ends as "this file changed".
func TestEditorSaves(t *testing.T) {
	deadline(t, 5*time.Minute)
	e := newEnv(t)
	dir := filepath.Join(e.userRoot(), "eds")
	e.collection(dir, "eds", "1.0.0")
	e.start()
	c := e.client()
	file := filepath.Join(dir, "agents", "helper.md")
	broken := []byte("---\nmeta: [unclosed\n---\n")
	good := []byte(agent("helper"))
	saves := []struct {
		name string
		save func(t *testing.T, data []byte)
	}{
		{"in place", func(t *testing.T, data []byte) {
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
			check(t, err)
			_, err = f.Write(data)
			check(t, err)
			check(t, f.Close())
		}},
		{"temp and rename", func(t *testing.T, data []byte) {
			tmp := filepath.Join(dir, "agents", ".helper.md.tmp1234")
			check(t, os.WriteFile(tmp, data, 0o644))
			check(t, os.Rename(tmp, file))
		}},
		{"vim backupcopy=no", func(t *testing.T, data []byte) {
			check(t, os.Rename(file, file+"~"))
			check(t, os.WriteFile(file, data, 0o644))
			check(t, os.Remove(file+"~"))
		}},
		{"JetBrains safe write", func(t *testing.T, data []byte) {
			check(t, os.WriteFile(file+"___jb_tmp___", data, 0o644))
			check(t, os.Rename(file, file+"___jb_old___"))
			check(t, os.Rename(file+"___jb_tmp___", file))
			check(t, os.Remove(file+"___jb_old___"))
		}},
	}
	for _, s := range saves {
		t.Run(s.name, func(t *testing.T) {
			s.save(t, broken)
			if !hasCode(e.diagnostics(c), diag.CodeFrontMatterSyntax, "agents/helper.md") {
				t.Fatal("the broken save is not seen")
			}
			s.save(t, good)
			if hasCode(e.diagnostics(c), diag.CodeFrontMatterSyntax, "agents/helper.md") {
				t.Fatal("the fixing save is not seen")
			}
			if got := e.resources(c, "eds"); !reflect.DeepEqual(got, []string{"profiles/base.md", "agents/helper.md", "context/notes.md"}) {
				t.Fatalf("editor droppings became resources: %v", got)
			}
		})
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestKill9MidBurst kills a daemon with SIGKILL while a burst of files is
// being written, then restarts: the index equals a fresh scan, and only
// the files the dead daemon had not indexed are read again.
func TestKill9MidBurst(t *testing.T) {
	deadline(t, 5*time.Minute)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	e := newEnv(t)
	if err := os.MkdirAll(e.userRoot(), 0o755); err != nil {
		t.Fatal(err)
	}
	e.collection(filepath.Join(e.userRoot(), "steady"), "steady", "1.0.0")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AMPLIDEX_TEST_DAEMON="+e.dir)
	out, err := cmd.StdoutPipe()
	check(t, err)
	cmd.Stderr = os.Stderr
	check(t, cmd.Start())
	ready := make([]byte, 6)
	if _, err := out.Read(ready); err != nil || string(ready) != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("child daemon did not start: %q %v", ready, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		burst(t, e.userRoot(), 5_000)
	}()
	// Kill once the index has taken part of the burst.
	deadline := time.Now().Add(30 * time.Second)
	for !time.Now().After(deadline) {
		if n := countIndexed(e.paths.Socket); n > 200 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	check(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	<-done

	// What the dead daemon indexed and is still true on disk must not be
	// read again.
	store, err := index.Open(e.paths.Index, index.Options{})
	check(t, err)
	unchanged, total := 0, 0
	check(t, store.Walk("", func(f index.File) error {
		total++
		if fi, err := os.Stat(f.Path); err == nil && fi.Size() == f.Size && fi.ModTime().UnixNano() == f.ModTime {
			unchanged++
		}
		return nil
	}))
	check(t, store.Close())
	if unchanged == 0 {
		t.Fatal("the killed daemon had indexed nothing")
	}
	e.reads.Store(0)
	e.start()
	c := e.client()
	files, _ := e.fresh()
	if got, want := int(e.reads.Load()), len(files)-unchanged; got != want {
		t.Errorf("restart read %d files, want %d (%d on disk, %d indexed unchanged before the kill)", got, want, len(files), unchanged)
	}
	e.assertIndexEqualsScan(c)
	t.Logf("killed with %d of %d files indexed", total, len(files))
}

// countIndexed asks the daemon on socket how many files it has indexed.
func countIndexed(socket string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := query.Dial(ctx, socket)
	if err != nil {
		return 0
	}
	defer c.Close()
	var st query.Status
	if _, err := c.Call(ctx, "status", nil, &st); err != nil {
		return 0
	}
	return st.Files
}
