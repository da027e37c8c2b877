package lsp_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query/lsp"
)

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex // guards fields below
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestScannerRescans(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	clk := &clock{now: time.Unix(1e9, 0)}
	roots := discovery.Roots(filepath.Join(dir, "project"), filepath.Join(dir, "home"), nil)
	s := lsp.NewScanner(roots, lsp.ScannerOptions{MaxAge: time.Minute, Now: clk.Now})
	ctx := context.Background()
	first, err := s.Set(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newColl := filepath.Join(dir, "home/.amplifier/collections/extra")
	if err := os.MkdirAll(filepath.Join(newColl, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(newColl, "pyproject.toml"), []byte("[project]\nname = \"extra\"\nversion = \"1.0.0\"\ndescription = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Set(ctx); got != first || got.Lookup("extra") != nil {
		t.Fatal("a fresh scan was not reused")
	}
	clk.advance(2 * time.Minute)
	if got, _ := s.Set(ctx); got == first || got.Lookup("extra") == nil {
		t.Fatal("an old scan was reused")
	}
	second, _ := s.Set(ctx)
	s.Invalidate(filepath.Join(newColl, "pyproject.toml"))
	if got, _ := s.Set(ctx); got == second {
		t.Fatal("an invalidated scan was reused")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s.Invalidate("")
	if _, err := s.Set(cctx); err == nil {
		t.Fatal("a scan under a cancelled context succeeded")
	}
}
