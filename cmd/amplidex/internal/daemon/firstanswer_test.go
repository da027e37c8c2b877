package daemon_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/query"
)

// TestFirstResolveInANewProject: a resolve about a project the daemon
// has not read is answered while the project's registration is still
// reading its documents, and each answer is the one the registered
// project gives: winners, shadowed and skipped collections alike.
func TestFirstResolveInANewProject(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "shared"), "shared", "1.0.0")
	e.collection(filepath.Join(e.userRoot(), "mine-too"), "mine", "0.9.0")
	project := filepath.Join(e.dir, "fresh")
	root := filepath.Join(project, ".amplifier", "collections")
	e.collection(filepath.Join(root, "mine"), "mine", "1.0.0")
	e.collection(filepath.Join(root, "other"), "other", "2.0.0")
	e.write(filepath.Join(root, "broken", "pyproject.toml"), "[project]\nname = \"broken\"\nversion = \"x\"\n")
	e.write(filepath.Join(root, "broken", "agents", "a.md"), agent("a"))
	held := filepath.Join(root, "other", "agents", "helper.md")

	hold, free := holdRead(held)
	defer free()
	e.startWith(func(o *daemon.Options) { o.ReadFile = hold })
	c := e.client()
	names := []string{"mine", "other", "broken", "shared", "nowhere", "mine-too"}
	ask := func(name string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var r query.ResolveResult
		if _, err := c.Call(ctx, "resolve", map[string]any{"project": project, "name": name}, &r); err != nil {
			t.Fatalf("resolve %s while the project's documents were being read: %v", name, err)
		}
		b, _ := json.Marshal(r)
		return string(b)
	}
	first := map[string]string{}
	for _, n := range names {
		first[n] = ask(n)
	}
	free()
	deadline := time.Now().Add(30 * time.Second)
	for !registered(e, c, project) {
		if time.Now().After(deadline) {
			t.Fatal("the project was not registered after its first answers")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, n := range names {
		if got := ask(n); got != first[n] {
			t.Errorf("resolve %s: the first answer\n%s\nthe registered project's\n%s", n, first[n], got)
		}
	}
}

// registered reports whether status lists project as registered.
func registered(e *env, c *query.Client, project string) bool {
	var st query.Status
	if err := callWithin(e.t, c, 10*time.Second, "status", map[string]any{}, &st); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range st.Projects {
		if p.Dir == project {
			for _, r := range st.Registering {
				if r.Dir == project {
					return false
				}
			}
			return true
		}
	}
	return false
}

// TestFirstResolveWaitsWhenReadInPart: when a collection of the new
// project cannot be listed for a reason that says nothing of it (EMFILE),
// the first resolve is not answered from the names it could read: it
// waits for the registration, whose retries decide what the project holds.
func TestFirstResolveWaitsWhenReadInPart(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	project := filepath.Join(e.dir, "fresh")
	root := filepath.Join(project, ".amplifier", "collections")
	e.collection(filepath.Join(root, "mine"), "mine", "1.0.0")
	e.collection(filepath.Join(root, "other"), "other", "1.0.0")
	failing := filepath.Join(root, "other")
	held := filepath.Join(root, "mine", "agents", "helper.md")
	hold, free := holdRead(held)
	defer free()
	var failOnce sync.Once
	e.startWith(func(o *daemon.Options) {
		o.ReadDir = func(dir string) ([]os.DirEntry, error) {
			fail := false
			if dir == failing {
				failOnce.Do(func() { fail = true })
			}
			if fail {
				return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.EMFILE}
			}
			return os.ReadDir(dir)
		}
		o.ReadFile = hold
	})
	c := e.client()
	answered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var r query.ResolveResult
		_, err := c.Call(ctx, "resolve", map[string]any{"project": project, "name": "mine"}, &r)
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("answered (%v) from a project read in part, before its registration", err)
	case <-time.After(300 * time.Millisecond): // a bound on waiting for the wrong thing, not a timing asserted
	}
	free()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer once the registration went on")
	}
}

// holdRead returns a daemon's ReadFile that waits, reading held, until
// free is called (free may be called more than once).
func holdRead(held string) (read func(string) ([]byte, error), free func()) {
	release := make(chan struct{})
	var once sync.Once
	return func(p string) ([]byte, error) {
			if p == held {
				<-release
			}
			return os.ReadFile(p)
		}, func() {
			once.Do(func() { close(release) })
		}
}

// TestFirstAnswerEqualsRegistered: over a tree of precedence, shadowing
// and broken files (testdata/first-answer.txtar), the first answer about
// a project the daemon has not read, given while its registration still
// reads its documents, equals the registered project's answer, for every
// name any root answers to, a near miss and a name nobody has. The
// metadata read for the first answer goes through the daemon's file
// cache: the registration reads no pyproject.toml again.
func TestFirstAnswerEqualsRegistered(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	ar, err := txtar.ParseFile(filepath.Join("testdata", "first-answer.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		e.write(filepath.Join(e.dir, filepath.FromSlash(f.Name)), string(f.Data))
	}
	root := e.projectRoot()
	held := filepath.Join(root, "x", "agents", "helper.md")
	hold, free := holdRead(held)
	defer free()
	var mu sync.Mutex
	reads := map[string]int{}
	e.startWith(func(o *daemon.Options) {
		o.ReadFile = func(p string) ([]byte, error) {
			mu.Lock()
			reads[p]++
			mu.Unlock()
			return hold(p)
		}
	})
	c := e.client()

	// Every name the tree answers to, as a scan of it tells.
	cat := catalog.New(catalog.Options{Home: e.home, Bundled: []string{e.bundled}})
	st, _ := cat.AddProject(e.project)
	v, _ := st.View(e.project)
	names := append(v.Set.Names(), "hybird", "nowhere")
	for _, want := range []string{"x", "y", "z", "other", "hybrid", "bp", "bare", "noname", "unparsed"} {
		if !slices.Contains(names, want) {
			t.Fatalf("the fixture answers to %v, not to %s", names, want)
		}
	}

	ask := func(name string) string {
		t.Helper()
		var r query.ResolveResult
		if err := callWithin(t, c, 30*time.Second, "resolve", map[string]any{"project": e.project, "name": name}, &r); err != nil {
			t.Fatalf("resolve %s: %v", name, err)
		}
		b, err := json.MarshalIndent(r, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first := map[string]string{}
	for _, n := range names {
		first[n] = ask(n)
	}
	if registered(e, c, e.project) {
		t.Fatal("the project was registered while one of its documents could not be read: the first answers did not come first")
	}
	free()
	for deadline := time.Now().Add(time.Minute); !registered(e, c, e.project); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the project was not registered after its first answers")
		}
	}
	for _, n := range names {
		if got := ask(n); got != first[n] {
			t.Errorf("resolve %s: the first answer\n%s\nthe registered project's\n%s", n, first[n], got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for p, n := range reads {
		if strings.HasPrefix(p, root) && filepath.Base(p) == "pyproject.toml" && n != 1 {
			t.Errorf("%s was read %d times: the registration did not take the first answer's read from the cache", p, n)
		}
	}
}
