package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/watcher"
)

// drillSeed returns the seed of a randomised drill: AMPLIDEX_DRILL_SEED
// when set (to replay a failure), else the clock. It is logged either way.
func drillSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("AMPLIDEX_DRILL_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("AMPLIDEX_DRILL_SEED=%q: %v", s, err)
		}
		t.Logf("seed %d (from AMPLIDEX_DRILL_SEED)", seed)
		return seed
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (replay with AMPLIDEX_DRILL_SEED=%d)", seed, seed)
	return seed
}

// logBuffer collects a daemon's log for assertions.
type logBuffer struct {
	mu  sync.Mutex // guards fields below
	buf bytes.Buffer
}

// Write implements io.Writer.
func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything logged so far.
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startLogged starts an in-process daemon as env.start does, logging to
// log, with fsync of index commits unless noSync.
func (e *env) startLogged(log io.Writer, noSync bool) *daemon.Daemon {
	e.t.Helper()
	d, err := daemon.Start(context.Background(), daemon.Options{
		Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}, NoSync: noSync,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Watch:  watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond},
		ReadFile: func(p string) ([]byte, error) {
			e.reads.Add(1)
			return os.ReadFile(p)
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { d.Close() })
	return d
}

// childDaemon is a daemon running in a re-executed test binary (see
// runChildDaemon).
type childDaemon struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has been waited for
}

// startChild starts a child daemon on the env's directory and waits until
// it is ready. The test's cleanup kills it if it still runs.
func (e *env) startChild() *childDaemon {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AMPLIDEX_TEST_DAEMON="+e.dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	ch := &childDaemon{cmd: cmd, done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("child daemon said %q", line)
		}
		ready <- err
		// The child says nothing more; wait for it only after the pipe
		// has been read, as exec.Cmd asks.
		_ = cmd.Wait()
		close(ch.done)
	}()
	e.t.Cleanup(ch.kill)
	select {
	case err := <-ready:
		if err != nil {
			ch.kill()
			e.t.Fatalf("child daemon did not start: %v", err)
		}
	case <-time.After(time.Minute):
		ch.kill()
		e.t.Fatal("child daemon not ready after a minute")
	}
	return ch
}

// kill sends SIGKILL (which ends a stopped process too) and waits for the
// child to be gone.
func (ch *childDaemon) kill() {
	_ = ch.cmd.Process.Signal(syscall.SIGKILL)
	<-ch.done
}

// signal sends sig to the child.
func (ch *childDaemon) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := ch.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to child daemon: %v", sig, err)
	}
}

// unchangedSince counts the files of the list whose index record (in the
// index as a killed or closed daemon left it) still matches them on disk
// by size, modification time, inode and mode: the files a restart must not
// read again.
func (e *env) unchangedSince(files []string) (unchanged, total int) {
	e.t.Helper()
	store, err := index.Open(e.paths.Index, index.Options{})
	if err != nil {
		e.t.Fatalf("open the index a stopped daemon left: %v", err)
	}
	defer store.Close()
	if w := store.Warnings(); len(w) > 0 {
		e.t.Errorf("the index a stopped daemon left has warnings: %q", w)
	}
	recs := map[string]index.File{}
	if err := store.Walk("", func(f index.File) error {
		recs[f.Path] = f
		return nil
	}); err != nil {
		e.t.Fatalf("walk the index a stopped daemon left: %v", err)
	}
	for _, p := range files {
		r, ok := recs[p]
		if !ok {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if st != nil && r.Size == fi.Size() && r.ModTime == fi.ModTime().UnixNano() &&
			r.Inode == st.Ino && r.Mode == uint32(fi.Mode()) {
			unchanged++
		}
	}
	return unchanged, len(recs)
}

// waitUntil polls cond until it holds or the deadline passes, and reports
// whether it held.
func waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fill writes a file in dir until the file system has no space left, and
// returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{1 << 16, 1 << 12, 1} {
		chunk := bytes.Repeat([]byte{'x'}, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", dir, err)
				}
				break
			}
		}
	}
	return path
}

// openFiles counts the process's open file descriptors (the count
// includes the one that reads the directory, every time alike).
func openFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(entries)
}

// churner changes the collections it owns, one random operation at a
// time: files created, edited, renamed and deleted, whole collections
// created, moved between roots and deleted. Several churners run at once,
// each on its own collections, so every operation is expected to succeed.
type churner struct {
	prefix string
	roots  []string
	rng    *rand.Rand
	cols   []*churnCol
	seq    int
}

// churnCol is one collection of a churner, with its files relative to its
// directory (pyproject.toml first).
type churnCol struct {
	dir   string
	name  string
	files []string
}

// newChurner returns a churner whose random choices are those of the
// given seed and stream.
func newChurner(prefix string, roots []string, seed, stream uint64) *churner {
	return &churner{prefix: prefix, roots: roots, rng: rand.New(rand.NewPCG(seed, stream))}
}

// step makes one random change.
func (c *churner) step() error {
	c.seq++
	if len(c.cols) == 0 {
		return c.newCollection()
	}
	col := c.cols[c.rng.IntN(len(c.cols))]
	switch n := c.rng.IntN(100); {
	case n < 10:
		return c.newCollection()
	case n < 40:
		return c.addFile(col)
	case n < 65:
		return c.edit(col)
	case n < 80:
		return c.rename(col)
	case n < 90:
		return c.deleteFile(col)
	case n < 95:
		return c.deleteCollection(col)
	default:
		return c.moveCollection(col)
	}
}

// newCollection makes a small valid collection in a random root.
func (c *churner) newCollection() error {
	name := fmt.Sprintf("%s-c%d", c.prefix, c.seq)
	col := &churnCol{dir: filepath.Join(c.roots[c.rng.IntN(len(c.roots))], name), name: name}
	files := map[string]string{
		"pyproject.toml":   pyproject(name, "1.0.0"),
		"profiles/base.md": profile("base", ""),
		"agents/helper.md": agent("helper"),
		"context/notes.md": "# Notes\n",
	}
	for _, rel := range []string{"pyproject.toml", "profiles/base.md", "agents/helper.md", "context/notes.md"} {
		if err := writeFile(filepath.Join(col.dir, rel), files[rel]); err != nil {
			return err
		}
		col.files = append(col.files, rel)
	}
	c.cols = append(c.cols, col)
	return nil
}

// addFile adds a profile, an agent or a context file to col.
func (c *churner) addFile(col *churnCol) error {
	var rel, content string
	switch c.rng.IntN(3) {
	case 0:
		rel, content = fmt.Sprintf("profiles/p%d.md", c.seq), profile(fmt.Sprintf("p%d", c.seq), "base")
	case 1:
		rel, content = fmt.Sprintf("agents/a%d.md", c.seq), agent(fmt.Sprintf("a%d", c.seq))
	default:
		rel, content = fmt.Sprintf("context/deep/x%d.md", c.seq), fmt.Sprintf("# X %d\n", c.seq)
	}
	col.files = append(col.files, rel)
	return writeFile(filepath.Join(col.dir, rel), content)
}

// edit appends to a file. Every edit changes the file's size: an edit of
// the same size within the file system's timestamp granularity cannot be
// told from no edit by a restart that trusts stat data.
func (c *churner) edit(col *churnCol) error {
	rel := col.files[c.rng.IntN(len(col.files))]
	f, err := os.OpenFile(filepath.Join(col.dir, rel), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("\nedit %d\n", c.seq)
	if rel == "pyproject.toml" {
		line = fmt.Sprintf("\n# edit %d\n", c.seq)
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pickFile returns the index of a file of col other than its pyproject,
// or -1.
func (c *churner) pickFile(col *churnCol) int {
	if len(col.files) < 2 {
		return -1
	}
	return 1 + c.rng.IntN(len(col.files)-1)
}

// rename renames a file of col in its directory, or moves a context file
// to another directory of the collection.
func (c *churner) rename(col *churnCol) error {
	i := c.pickFile(col)
	if i < 0 {
		return c.addFile(col)
	}
	old := col.files[i]
	dir, base := filepath.Split(old)
	if strings.HasPrefix(dir, "context/") && c.rng.IntN(2) == 0 {
		dir = "context/moved/"
	}
	rel := fmt.Sprintf("%sr%d-%s", dir, c.seq, base)
	if err := os.MkdirAll(filepath.Join(col.dir, dir), 0o755); err != nil {
		return err
	}
	col.files[i] = rel
	return os.Rename(filepath.Join(col.dir, old), filepath.Join(col.dir, rel))
}

// deleteFile deletes a file of col other than its pyproject.
func (c *churner) deleteFile(col *churnCol) error {
	i := c.pickFile(col)
	if i < 0 {
		return nil
	}
	p := filepath.Join(col.dir, col.files[i])
	col.files = append(col.files[:i], col.files[i+1:]...)
	return os.Remove(p)
}

// drop forgets col.
func (c *churner) drop(col *churnCol) {
	for i, x := range c.cols {
		if x == col {
			c.cols = append(c.cols[:i], c.cols[i+1:]...)
			return
		}
	}
}

// deleteCollection removes col's whole directory.
func (c *churner) deleteCollection(col *churnCol) error {
	c.drop(col)
	return os.RemoveAll(col.dir)
}

// moveCollection renames a collection's directory, into another root or
// the same one; its metadata name stays.
func (c *churner) moveCollection(col *churnCol) error {
	to := filepath.Join(c.roots[c.rng.IntN(len(c.roots))], fmt.Sprintf("%s-m%d", col.name, c.seq))
	if err := os.Rename(col.dir, to); err != nil {
		return err
	}
	col.dir = to
	return nil
}

// writeFile writes content to path, making its directory; unlike
// env.write it returns its error, for goroutines other than the test's.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
