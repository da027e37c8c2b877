package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lsp"
)

// fakeDaemon answers the queries a DaemonResolver sends from fixed data.
type fakeDaemon struct {
	mu    sync.Mutex // guards fields below
	tick  uint64
	calls map[string]int
	down  bool

	collections []query.CollectionInfo
	resources   map[string][]query.ResourceInfo
}

func (f *fakeDaemon) Call(ctx context.Context, method string, params, result any) (query.Clock, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return query.Clock{}, query.ErrNoDaemon
	}
	f.calls[method]++
	var v any = f.resources[method]
	if method == "collections" {
		v = f.collections
	}
	b, _ := json.Marshal(v)
	return query.Clock{Start: 1, PID: 2, Tick: f.tick}, json.Unmarshal(b, result)
}

func (f *fakeDaemon) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// countingResolver is a fallback Resolver that counts its use.
type countingResolver struct {
	mu   sync.Mutex // guards fields below
	sets int
}

func (c *countingResolver) Set(context.Context) (*discovery.Set, error) {
	c.mu.Lock()
	c.sets++
	c.mu.Unlock()
	return discovery.NewSet(nil, nil), nil
}

func (c *countingResolver) Invalidate(string) {}

func TestDaemonResolver(t *testing.T) {
	dir := t.TempDir()
	found := filepath.Join(dir, "user", "foundation")
	old := filepath.Join(dir, "bundled", "foundation")
	f := &fakeDaemon{
		tick:  1,
		calls: map[string]int{},
		collections: []query.CollectionInfo{
			{Name: "foundation", Version: "1.2.0", Root: discovery.RootUser, RootPath: filepath.Join(dir, "user"),
				Dir: found, RealDir: found, Base: found, Valid: true, Status: "active"},
			{Name: "foundation", Version: "1.0.0", Root: discovery.RootBundled, RootPath: filepath.Join(dir, "bundled"),
				Dir: old, RealDir: old, Base: old, Valid: true, Status: "shadowed"},
		},
		resources: map[string][]query.ResourceInfo{
			"profiles": {{Collection: "foundation", Kind: discovery.KindProfile, Name: "base", Path: filepath.Join(found, "profiles/base.md"), Rel: "profiles/base.md", Description: "Base"}},
			"agents":   {{Collection: "foundation", Kind: discovery.KindAgent, Name: "explorer", Path: filepath.Join(found, "agents/explorer.md"), Rel: "agents/explorer.md"}},
		},
	}
	fallback := &countingResolver{}
	r := lsp.NewDaemonResolver(f, "", fallback, nil)
	ctx := context.Background()

	set, err := r.Set(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := set.Resolve("foundation")
	if res.Winner == nil || res.Winner.Version != "1.2.0" || len(res.Shadowed) != 1 || res.Shadowed[0].Version != "1.0.0" {
		t.Fatalf("resolution = %+v", res)
	}
	if p, err := set.ResolveProfile("foundation:base", nil); err != nil || p.Path != filepath.Join(found, "profiles/base.md") {
		t.Fatalf("foundation:base = %+v, %v", p, err)
	}
	if _, _, ok := set.ResolveAgent("explorer", nil); !ok {
		t.Fatal("agent explorer does not resolve")
	}

	// Same clock: the resources are not fetched again.
	if again, _ := r.Set(ctx); again != set || f.count("profiles") != 1 {
		t.Fatalf("unchanged clock refetched (profiles asked %d times)", f.count("profiles"))
	}
	// The clock moved: fetched again.
	f.mu.Lock()
	f.tick = 2
	f.mu.Unlock()
	if again, _ := r.Set(ctx); again == set || f.count("profiles") != 2 {
		t.Fatalf("moved clock did not refetch (profiles asked %d times)", f.count("profiles"))
	}
	// The daemon goes away: the fallback answers.
	f.mu.Lock()
	f.down = true
	f.mu.Unlock()
	if _, err := r.Set(ctx); err != nil || fallback.sets != 1 {
		t.Fatalf("with the daemon down: err %v, fallback used %d times", err, fallback.sets)
	}
	// Without a fallback the error comes through.
	if _, err := lsp.NewDaemonResolver(f, "", nil, nil).Set(ctx); !errors.Is(err, query.ErrNoDaemon) {
		t.Fatalf("err = %v, want ErrNoDaemon", err)
	}
}
