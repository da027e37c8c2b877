package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// env is one test's world: a home with a user root, a project, a bundled
// root and amplidex's own files, all in a temp dir.
type env struct {
	t       *testing.T
	dir     string
	home    string
	project string
	bundled string
	paths   query.Paths
	reads   atomic.Int64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, home: filepath.Join(dir, "home"), project: filepath.Join(dir, "proj"),
		bundled: filepath.Join(dir, "bundled")}
	paths, err := query.DefaultPaths(func(k string) string {
		if k == "AMPLIDEX_HOME" {
			return filepath.Join(dir, "state")
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	e.paths = paths
	// The daemon only takes a project directory that holds .amplifier/;
	// its collections directory may come later.
	if err := os.MkdirAll(filepath.Join(e.project, ".amplifier"), 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) userRoot() string    { return filepath.Join(e.home, ".amplifier", "collections") }
func (e *env) projectRoot() string { return filepath.Join(e.project, ".amplifier", "collections") }

func (e *env) write(path, content string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// collection writes a small valid collection named name in dir.
func (e *env) collection(dir, name, version string) {
	e.write(filepath.Join(dir, "pyproject.toml"), pyproject(name, version))
	e.write(filepath.Join(dir, "profiles", "base.md"), profile("base", ""))
	e.write(filepath.Join(dir, "agents", "helper.md"), agent("helper"))
	e.write(filepath.Join(dir, "context", "notes.md"), "# Notes\n")
}

func pyproject(name, version string) string {
	return "[project]\nname = \"" + name + "\"\nversion = \"" + version + "\"\ndescription = \"A collection\"\n"
}

func profile(name, extends string) string {
	s := "---\nprofile:\n  name: " + name + "\n  version: 1.0.0\n  description: A profile\n"
	if extends != "" {
		s += "  extends: " + extends + "\n"
	}
	return s + "session:\n  orchestrator:\n    module: loop-basic\n  context:\n    module: context-simple\n---\nBody\n"
}

func agent(name string) string {
	return "---\nmeta:\n  name: " + name + "\n  description: Helps\n---\nInstructions\n"
}

func (e *env) start() *daemon.Daemon {
	e.t.Helper()
	d, err := daemon.Start(context.Background(), daemon.Options{
		Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}, NoSync: true,
		Watch: watcher.Options{Debounce: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond},
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

func (e *env) client() *query.Client {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := query.Dial(ctx, e.paths.Socket)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// call asks the daemon about the test's project.
func (e *env) call(c *query.Client, method string, params map[string]any, out any) error {
	e.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["project"] = e.project
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.Call(ctx, method, params, out)
	return err
}

func (e *env) resolve(c *query.Client, name string) *query.ResolveResult {
	e.t.Helper()
	var r query.ResolveResult
	if err := e.call(c, "resolve", map[string]any{"name": name}, &r); err != nil {
		if strings.Contains(err.Error(), "not-found") {
			return nil
		}
		e.t.Fatalf("resolve %s: %v", name, err)
	}
	if r.Winner == nil && len(r.Skipped) == 0 { // resolves nowhere: found false, no error
		return nil
	}
	return &r
}

func (e *env) resources(c *query.Client, name string) []string {
	e.t.Helper()
	var d query.CollectionDetail
	if err := e.call(c, "collection", map[string]any{"name": name}, &d); err != nil {
		e.t.Fatalf("collection %s: %v", name, err)
	}
	var out []string
	for _, r := range d.Resources {
		out = append(out, r.Rel)
	}
	return out
}

func (e *env) diagnostics(c *query.Client) []diag.Diagnostic {
	e.t.Helper()
	var d query.DiagnosticsResult
	if err := e.call(c, "diagnostics", nil, &d); err != nil {
		e.t.Fatal(err)
	}
	return d.Diagnostics
}

func hasCode(ds []diag.Diagnostic, code, pathSuffix string) bool {
	for _, d := range ds {
		if d.Code == code && strings.HasSuffix(d.Path, pathSuffix) {
			return true
		}
	}
	return false
}

func TestLiveChanges(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "tools"), "tools", "1.0.0")
	e.start()
	c := e.client()

	if r := e.resolve(c, "tools"); r == nil || r.Winner.Version != "1.0.0" {
		t.Fatalf("tools does not resolve at start: %+v", r)
	}
	dir := filepath.Join(e.userRoot(), "tools")

	t.Run("profile created edited renamed deleted", func(t *testing.T) {
		e.write(filepath.Join(dir, "profiles", "extra.md"), profile("extra", "tools:base"))
		if got := e.resources(c, "tools"); !contains(got, "profiles/extra.md") {
			t.Fatalf("created profile not seen: %v", got)
		}
		e.write(filepath.Join(dir, "profiles", "extra.md"), profile("extra", "tools:missing"))
		if !hasCode(e.diagnostics(c), diag.CodeExtendsUnresolved, "profiles/extra.md") {
			t.Fatal("edited profile's broken extends not reported")
		}
		if err := os.Rename(filepath.Join(dir, "profiles", "extra.md"), filepath.Join(dir, "profiles", "renamed.md")); err != nil {
			t.Fatal(err)
		}
		got := e.resources(c, "tools")
		if contains(got, "profiles/extra.md") || !contains(got, "profiles/renamed.md") {
			t.Fatalf("rename not seen: %v", got)
		}
		if err := os.Remove(filepath.Join(dir, "profiles", "renamed.md")); err != nil {
			t.Fatal(err)
		}
		if got := e.resources(c, "tools"); contains(got, "profiles/renamed.md") {
			t.Fatalf("delete not seen: %v", got)
		}
		if hasCode(e.diagnostics(c), diag.CodeExtendsUnresolved, "renamed.md") {
			t.Fatal("diagnostics of a deleted file remain")
		}
	})

	t.Run("agent and context", func(t *testing.T) {
		e.write(filepath.Join(dir, "agents", "bad.md"), "---\nmeta: [unclosed\n---\n")
		if !hasCode(e.diagnostics(c), diag.CodeFrontMatterSyntax, "agents/bad.md") {
			t.Fatal("broken agent not reported")
		}
		e.write(filepath.Join(dir, "agents", "bad.md"), agent("bad"))
		if hasCode(e.diagnostics(c), diag.CodeFrontMatterSyntax, "agents/bad.md") {
			t.Fatal("fixed agent still reported")
		}
		e.write(filepath.Join(dir, "context", "deep", "more.md"), "See @tools:context/nowhere.md\n")
		if !hasCode(e.diagnostics(c), diag.CodeMentionUnresolved, "context/deep/more.md") {
			t.Fatal("new context file's mention not checked")
		}
		if err := os.Rename(filepath.Join(dir, "context", "deep", "more.md"), filepath.Join(dir, "context", "moved.md")); err != nil {
			t.Fatal(err)
		}
		got := e.resources(c, "tools")
		if contains(got, "context/deep/more.md") || !contains(got, "context/moved.md") {
			t.Fatalf("context rename not seen: %v", got)
		}
	})

	t.Run("pyproject", func(t *testing.T) {
		e.write(filepath.Join(dir, "pyproject.toml"), pyproject("tools", "2.0.0"))
		if r := e.resolve(c, "tools"); r == nil || r.Winner.Version != "2.0.0" {
			t.Fatalf("version edit not seen: %+v", r)
		}
		e.write(filepath.Join(dir, "pyproject.toml"), pyproject("renamed-tools", "2.0.0"))
		if e.resolve(c, "tools") != nil || e.resolve(c, "renamed-tools") == nil {
			t.Fatal("name edit not seen")
		}
		if err := os.Remove(filepath.Join(dir, "pyproject.toml")); err != nil {
			t.Fatal(err)
		}
		if !hasCode(e.diagnostics(c), diag.CodeMissingPyproject, "/tools") { // reported on the directory
			t.Fatal("deleted pyproject not reported")
		}
		e.write(filepath.Join(dir, "pyproject.toml"), pyproject("tools", "3.0.0"))
		if r := e.resolve(c, "tools"); r == nil || r.Winner.Version != "3.0.0" {
			t.Fatalf("re-created pyproject not seen: %+v", r)
		}
	})

	t.Run("requires rechecked when the dependency changes", func(t *testing.T) {
		e.write(filepath.Join(e.userRoot(), "user-of", "pyproject.toml"), pyproject("user-of", "1.0.0")+
			"\n[tool.amplifier.collection.requires]\ntools = \"^3.0.0\"\n")
		e.write(filepath.Join(e.userRoot(), "user-of", "context", "a.md"), "# A\n")
		if hasCode(e.diagnostics(c), diag.CodeDepUnsatisfied, "user-of/pyproject.toml") {
			t.Fatal("requires ^3.0.0 is met by tools 3.0.0")
		}
		e.write(filepath.Join(dir, "pyproject.toml"), pyproject("tools", "4.0.0"))
		if !hasCode(e.diagnostics(c), diag.CodeDepUnsatisfied, "user-of/pyproject.toml") {
			t.Fatal("a dependency's version change did not re-check who requires it")
		}
	})

	t.Run("whole collection moved out of and into a root", func(t *testing.T) {
		outside := filepath.Join(e.dir, "outside-tools")
		if err := os.Rename(dir, outside); err != nil {
			t.Fatal(err)
		}
		if e.resolve(c, "tools") != nil {
			t.Fatal("collection moved out still resolves")
		}
		if err := os.Rename(outside, filepath.Join(e.projectRoot(), "tools")); err != nil {
			if err := os.MkdirAll(e.projectRoot(), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(outside, filepath.Join(e.projectRoot(), "tools")); err != nil {
				t.Fatal(err)
			}
		}
		r := e.resolve(c, "tools")
		if r == nil || r.Winner.Root != discovery.RootProject {
			t.Fatalf("collection moved into the project root not seen: %+v", r)
		}
	})

	t.Run("root removed and re-created", func(t *testing.T) {
		if err := os.RemoveAll(e.projectRoot()); err != nil {
			t.Fatal(err)
		}
		if e.resolve(c, "tools") != nil {
			t.Fatal("collection of a removed root still resolves")
		}
		e.collection(filepath.Join(e.projectRoot(), "tools"), "tools", "5.0.0")
		if r := e.resolve(c, "tools"); r == nil || r.Winner.Version != "5.0.0" {
			t.Fatalf("re-created root not seen: %+v", r)
		}
	})
}

// TestRestartReadsNothingUnchanged stops the daemon, changes one file, and
// restarts: only that file is read again, and the index equals a scan.
func TestRestartReadsNothingUnchanged(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.collection(filepath.Join(e.userRoot(), n), n, "1.0.0")
	}
	e.collection(filepath.Join(e.bundled, "foundation"), "foundation", "1.0.0")
	d := e.start()
	c := e.client()
	e.resolve(c, "a") // registers the project
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(e.userRoot(), "b", "agents", "helper.md"), agent("helper")+"changed\n")
	if err := os.RemoveAll(filepath.Join(e.userRoot(), "c")); err != nil {
		t.Fatal(err)
	}
	e.reads.Store(0)
	e.start()
	if n := e.reads.Load(); n != 1 {
		t.Errorf("restart read %d files, want 1 (the changed agent)", n)
	}
	c = e.client()
	if e.resolve(c, "c") != nil {
		t.Error("collection removed while the daemon was down still resolves")
	}
	var st query.Status
	if err := e.call(c, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	// a, b (4 files each) and foundation (4) remain.
	if st.Files != 12 {
		t.Errorf("index holds %d files, want 12", st.Files)
	}
}

// TestRestartSeesRestoredMtime rewrites a file while the daemon is down
// with bytes of the same size and its old modification time, as cp -p and
// tar x do: the restarted daemon reads it again.
func TestRestartSeesRestoredMtime(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	d := e.start()
	e.resolve(e.client(), "a")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(e.userRoot(), "a", "agents", "helper.md")
	fi, err := os.Stat(helper)
	if err != nil {
		t.Fatal(err)
	}
	e.write(helper, agent("hepler"))
	if err := os.Chtimes(helper, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	e.reads.Store(0)
	e.start()
	if n := e.reads.Load(); n != 1 {
		t.Errorf("restart read %d files, want 1 (the rewritten agent)", n)
	}
}

func TestChanges(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	e.start()
	c := e.client()
	var first query.ChangesResult
	if err := e.call(c, "changes", map[string]any{"since": "c:1:1:0"}, &first); err != nil {
		t.Fatal(err)
	}
	if !first.IsFreshInstance || len(first.Files) != 4 {
		t.Fatalf("changes from another instance: fresh=%v files=%d, want fresh with 4", first.IsFreshInstance, len(first.Files))
	}
	e.write(filepath.Join(e.userRoot(), "a", "context", "new.md"), "# New\n")
	var next query.ChangesResult
	if err := e.call(c, "changes", map[string]any{"since": first.Clock.String()}, &next); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range next.Files {
		paths = append(paths, filepath.Base(f.Path))
	}
	sort.Strings(paths)
	if next.IsFreshInstance || strings.Join(paths, ",") != "new.md" {
		t.Fatalf("changes since %s: fresh=%v %v, want new.md only", first.Clock, next.IsFreshInstance, paths)
	}
}

func TestSecondDaemonFailsFast(t *testing.T) {
	e := newEnv(t)
	e.start()
	_, err := daemon.Start(context.Background(), daemon.Options{Paths: e.paths, Home: e.home, NoSync: true})
	if err == nil || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second daemon: %v, want an error naming the pid", err)
	}
}

func TestCorruptIndexIsRebuilt(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	e.write(e.paths.Index, strings.Repeat("garbage ", 1000))
	d := e.start()
	c := e.client()
	if e.resolve(c, "a") == nil {
		t.Fatal("daemon on a rebuilt index does not answer")
	}
	st := d.Status()
	if len(st.Warnings) == 0 {
		t.Error("no warning about the corrupt index")
	}
	kept, _ := filepath.Glob(e.paths.Index + ".corrupt-*")
	if len(kept) != 1 {
		t.Errorf("corrupt index not kept aside: %v", kept)
	}
}

// TestRescanWarnings: every rescan is a warning in status, except one for
// a root that only appeared; an overflow that comes in the same batch as
// the root appearing is one.
func TestRescanWarnings(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	d := e.start()
	tests := []struct {
		name    string
		reasons watcher.Reason
		want    string // the end of the warning; empty for none
	}{
		{"root appeared", watcher.ReasonRootAppeared, ""},
		{"overflow as the root appeared", watcher.ReasonOverflow | watcher.ReasonRootAppeared,
			"rescanned kernel event queue overflowed; root appeared"},
		{"root vanished", watcher.ReasonRootVanished, "rescanned root vanished"},
		{"too many open files", watcher.ReasonTooManyFiles | watcher.ReasonPolling,
			"rescanned too many open files; switched to polling"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(d.Status().Warnings)
			d.HandleBatch(watcher.Batch{Root: e.userRoot(), Rescan: true, Reasons: tc.reasons})
			added := d.Status().Warnings[before:]
			switch {
			case tc.want == "" && len(added) > 0:
				t.Errorf("warnings added: %q, want none", added)
			case tc.want != "" && (len(added) != 1 || !strings.HasSuffix(added[0], e.userRoot()+": "+tc.want)):
				t.Errorf("warnings added: %q, want one ending %q", added, e.userRoot()+": "+tc.want)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCorruptRecordIsRebuilt damages one record inside a sound database:
// the daemon keeps the file aside, rebuilds and answers.
func TestCorruptRecordIsRebuilt(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	d := e.start()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(e.paths.Index)
	if err != nil {
		t.Fatal(err)
	}
	// The byte before a payload is its length: make it disagree. A
	// context file's payload starts with the schema stamp, the version of
	// the facts' encoding and its kind, as the encoding writes them.
	start := (&discovery.Facts{Kind: discovery.KindContext}).AppendBinary([]byte("e"))
	i := strings.Index(string(b), string(start[:len("e\x03\x07context")]))
	if i < 1 {
		t.Fatal("no payload found in the index file")
	}
	if b[i-1] == 1 {
		b[i-1] = 2
	} else {
		b[i-1] = 1
	}
	if err := os.WriteFile(e.paths.Index, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d = e.start()
	if e.resolve(e.client(), "a") == nil {
		t.Fatal("the daemon does not answer after rebuilding")
	}
	if w := strings.Join(d.Status().Warnings, "\n"); !strings.Contains(w, "unreadable record") {
		t.Errorf("warnings %q do not mention the unreadable record", w)
	}
	if kept, _ := filepath.Glob(e.paths.Index + ".corrupt-*"); len(kept) != 1 {
		t.Errorf("corrupt index not kept aside: %v", kept)
	}
}

// TestSaveReadsOneFile: a change under context/ re-reads that file only;
// a save that leaves the bytes as they were is read (to compare) but not
// analyzed again, and changes no diagnostic.
func TestSaveReadsOneFile(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b"} {
		e.collection(filepath.Join(e.userRoot(), n), n, "1.0.0")
	}
	d := e.start()
	c := e.client()
	e.resolve(c, "a")
	before := d.Analyzed()
	e.reads.Store(0)
	notes := filepath.Join(e.userRoot(), "a", "context", "notes.md")
	e.write(notes, "# Notes, edited\n")
	e.resolve(c, "a")
	if n := e.reads.Load(); n != 1 {
		t.Errorf("an edit of one context file read %d files, want 1", n)
	}
	if n := d.Analyzed() - before; n != 1 {
		t.Errorf("an edit of one context file analyzed %d files, want 1", n)
	}
	// The same bytes again, with a new modification time.
	before = d.Analyzed()
	e.write(notes, "# Notes, edited\n")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(notes, future, future); err != nil {
		t.Fatal(err)
	}
	e.resolve(c, "a")
	if n := d.Analyzed() - before; n != 0 {
		t.Errorf("a save with unchanged bytes analyzed %d files, want 0", n)
	}
}

// TestNoSyncSeesHandledChanges: a client that never waits for its writes
// still sees every change the daemon has handled.
func TestNoSyncSeesHandledChanges(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "a"), "a", "1.0.0")
	d := e.start()
	c := e.client()
	noSync := func() string {
		var r query.ResolveResult
		if err := e.call(c, "resolve", map[string]any{"name": "a", "no_sync": true}, &r); err != nil {
			t.Fatal(err)
		}
		return r.Winner.Version
	}
	if v := noSync(); v != "1.0.0" {
		t.Fatalf("version %s", v)
	}
	e.write(filepath.Join(e.userRoot(), "a", "pyproject.toml"), pyproject("a", "2.0.0"))
	if err := d.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := noSync(); v != "2.0.0" {
		t.Fatalf("a no_sync query after the change was handled answers %s, want 2.0.0", v)
	}
}
