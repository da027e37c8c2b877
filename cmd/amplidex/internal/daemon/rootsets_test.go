package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/query"
)

// rootSet is the roots of a client whose bundled root is the i-th of the
// test's own, each holding one collection.
func (e *env) rootSet(i int) *query.Roots {
	dir := filepath.Join(e.dir, fmt.Sprintf("client-bundled-%d", i))
	e.collection(filepath.Join(dir, fmt.Sprintf("c%d", i)), fmt.Sprintf("c%d", i), "1.0.0")
	return &query.Roots{Home: e.home, Bundled: []string{dir}}
}

// sets returns the registered sets of a client's roots, by their bundled
// roots, sorted.
func sets(d *daemon.Daemon) []string {
	var out []string
	for key := range d.Registered() {
		if s, ok := catalog.ParseScopeKey(key); ok {
			out = append(out, strings.Join(s.Bundled, ":"))
		}
	}
	slices.Sort(out)
	return out
}

// watched reports whether the daemon's watcher watches path.
func watched(d *daemon.Daemon, path string) bool { return slices.Contains(d.WatchedRoots(), path) }

// TestRootSetsBounded: the sets of a client's roots are bounded apart
// from the projects (MaxRootSets): one more forgets the set used least
// recently, its watches with it, and never a project; when every set is
// followed by a subscription, one more is refused as overloaded.
func TestRootSetsBounded(t *testing.T) {
	e := newEnv(t)
	d := e.startWith(func(o *daemon.Options) { o.MaxRootSets, o.MaxProjects = 2, 2 })
	c := e.client()
	p1, p2 := e.otherProject("p1"), e.otherProject("p2")
	for _, p := range []string{p1, p2} {
		if err := callWithin(t, c, 10*time.Second, "collections", map[string]any{"project": p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	roots := []*query.Roots{e.rootSet(0), e.rootSet(1), e.rootSet(2)}
	ask := func(r *query.Roots) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _, err := query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: query.Common{Project: p1, Roots: r}})
		return err
	}
	for _, r := range roots {
		if err := ask(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := sets(d); !slices.Equal(got, []string{roots[1].Bundled[0], roots[2].Bundled[0]}) {
		t.Fatalf("sets of a client's roots %v; want the last two", got)
	}
	if watched(d, roots[0].Bundled[0]) {
		t.Errorf("the forgotten set's bundled root is still watched")
	}
	for _, p := range []string{p1, p2} {
		if _, ok := d.Registered()[p]; !ok {
			t.Errorf("project %s was forgotten for a set of a client's roots", p)
		}
	}

	// Both sets followed: a third is refused, and says why.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, r := range roots[1:] {
		ch, err := query.Subscribe(ctx, e.client(), query.MethodSubscribe, query.SubscribeParams{Common: query.Common{Project: p1, Roots: r}})
		if err != nil {
			t.Fatal(err)
		}
		<-ch // the first update
	}
	err := ask(roots[0])
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Code != query.CodeOverloaded || !strings.Contains(qe.Message, "sets of a client's roots") {
		t.Fatalf("a third set while two are followed: %v; want overloaded", err)
	}
	if got := sets(d); len(got) != 2 {
		t.Fatalf("sets %v after a refusal", got)
	}
}

// TestRootSetsExpire: a set of a client's roots that no client uses for
// ForgetRootSetsAfter is forgotten, its watches with it; one a
// subscription follows stays for as long as it does.
func TestRootSetsExpire(t *testing.T) {
	e := newEnv(t)
	const after = 100 * time.Millisecond
	d := e.startWith(func(o *daemon.Options) { o.ForgetRootSetsAfter = after })
	c := e.client()
	asked, followed := e.rootSet(0), e.rootSet(1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: query.Common{Roots: asked}}); err != nil {
		t.Fatal(err)
	}
	sub, stop := context.WithCancel(ctx)
	ch, err := query.Subscribe(sub, e.client(), query.MethodSubscribe, query.SubscribeParams{Common: query.Common{Roots: followed}})
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	if !waitUntil(30*time.Second, func() bool { return !slices.Contains(sets(d), asked.Bundled[0]) }) {
		t.Fatalf("a set nobody used for %v is still registered: %v", after, sets(d))
	}
	if watched(d, asked.Bundled[0]) {
		t.Error("the expired set's bundled root is still watched")
	}
	// Several times the expiry later, the followed set is still there.
	since := time.Now()
	waitUntil(30*time.Second, func() bool { return time.Since(since) > 5*after })
	if !slices.Contains(sets(d), followed.Bundled[0]) {
		t.Fatal("a set a subscription follows expired")
	}
	stop()
	if !waitUntil(30*time.Second, func() bool { return !slices.Contains(sets(d), followed.Bundled[0]) }) {
		t.Fatalf("a set whose subscription ended %v ago is still registered", after)
	}
}

// TestRootSetsNotRestored: a restart does not bring back the sets of a
// client's roots: they are watched and read again only when a client asks.
func TestRootSetsNotRestored(t *testing.T) {
	e := newEnv(t)
	d := e.start()
	c := e.client()
	r := e.rootSet(0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, roots := range []*query.Roots{nil, r} {
		if _, _, err := query.Call(ctx, c, query.MethodCollections, query.ListParams{Common: query.Common{Project: e.project, Roots: roots}}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = e.start()
	if got := sets(d); len(got) != 0 {
		t.Errorf("after a restart, sets of a client's roots %v are registered; want none", got)
	}
	if watched(d, r.Bundled[0]) {
		t.Error("after a restart, a client's bundled root is watched with no client")
	}
	if _, ok := d.Registered()[e.project]; !ok {
		t.Error("the project itself was not restored")
	}
}

// TestAbandonedRegistration: a registration whose client goes away while
// it runs is taken back (no View, no watch of its roots); another client
// that waited for it registers the set itself.
func TestAbandonedRegistration(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	r := e.rootSet(0)
	var (
		mu   sync.Mutex
		hold = true
	)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	d := e.startWith(func(o *daemon.Options) {
		o.Watch.BeforeWatch = func(dir string) error {
			mu.Lock()
			h := hold && dir == r.Bundled[0]
			mu.Unlock()
			if h {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-release
			}
			return nil
		}
	})
	scope := query.Common{Roots: r, NoSync: true}
	first, leave := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := d.ViewWithin(first, scope)
		done <- err
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the registration never watched the client's bundled root")
	}
	leave()
	mu.Lock()
	hold = false
	mu.Unlock()
	close(release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned question returned %v", err)
	}
	if got := sets(d); len(got) != 0 {
		t.Errorf("an abandoned registration left sets %v", got)
	}
	if watched(d, r.Bundled[0]) {
		t.Error("an abandoned registration left its bundled root watched")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, err := d.ViewWithin(ctx, scope); err != nil || v.Set.Lookup("c0") == nil {
		t.Fatalf("the set asked for again: %v", err)
	}
}

// TestWaiterOfAbandonedRegistration: a question that waits for another's
// registration of the same set, whose client then goes away, registers
// the set itself rather than failing.
func TestWaiterOfAbandonedRegistration(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	r := e.rootSet(0)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	d := e.startWith(func(o *daemon.Options) {
		o.Watch.BeforeWatch = func(dir string) error {
			if dir == r.Bundled[0] {
				once.Do(func() {
					entered <- struct{}{}
					<-release
				})
			}
			return nil
		}
	})
	scope := query.Common{Roots: r, NoSync: true}
	first, leave := context.WithCancel(context.Background())
	go d.ViewWithin(first, scope)
	<-entered
	second := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		v, err := d.ViewWithin(ctx, scope)
		if err == nil && v.Set.Lookup("c0") == nil {
			err = errors.New("c0 does not resolve")
		}
		second <- err
	}()
	if !waitUntil(30*time.Second, func() bool { return d.Waiting() > 0 }) {
		t.Fatal("the second question never waited for the first's registration")
	}
	leave()
	close(release)
	if err := <-second; err != nil {
		t.Fatalf("the question that waited: %v", err)
	}
}
