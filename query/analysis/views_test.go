package analysis_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query/analysis"
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

// TestLocalRereads: a Local keeps its View until a file is saved or its
// roots are older than MaxAge.
func TestLocalRereads(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	clk := &clock{now: time.Unix(1e9, 0)}
	project := filepath.Join(dir, "project")
	l := analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home"), MaxAge: time.Minute, Now: clk.Now})
	ctx := context.Background()
	first, err := l.View(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	if first.Set.Lookup("foundation") == nil {
		t.Fatal("the project's collections were not read")
	}
	newColl := filepath.Join(dir, "home/.amplifier/collections/extra")
	if err := os.MkdirAll(filepath.Join(newColl, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(newColl, "pyproject.toml")
	if err := os.WriteFile(py, []byte("[project]\nname = \"extra\"\nversion = \"1.0.0\"\ndescription = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.View(ctx, project); got != first || got.Set.Lookup("extra") != nil {
		t.Fatal("a fresh View was not reused")
	}
	clk.advance(2 * time.Minute)
	second, _ := l.View(ctx, project)
	if second == first || second.Set.Lookup("extra") == nil {
		t.Fatal("an old View was reused")
	}
	if got, _ := l.View(ctx, project); got != second {
		t.Fatal("the View read again was not reused")
	}
	// A save reads the collection again, even when its size and time stay.
	fi, _ := os.Stat(py)
	if err := os.WriteFile(py, []byte("[project]\nname = \"extra\"\nversion = \"2.0.0\"\ndescription = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(py, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	l.Changed(py)
	third, _ := l.View(ctx, project)
	if third == second || third.Set.Lookup("extra") == nil || third.Set.Lookup("extra").Version != "2.0.0" {
		t.Fatalf("a saved file was not read again: %+v", third.Set.Lookup("extra"))
	}
	// A second project shares the user root.
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, ".amplifier"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := l.View(ctx, other); err != nil || v.Set.Lookup("extra") == nil || v.Set.Lookup("foundation") == nil {
		t.Fatalf("another project's View: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.View(cctx, project); err == nil {
		t.Fatal("a View under a cancelled context")
	}
}

// TestLocalConcurrentViews: Views asked for at once, while files are
// saved, all come back (run with -race).
func TestLocalConcurrentViews(t *testing.T) {
	dir := unpack(t, "workspace.txtar")
	project := filepath.Join(dir, "project")
	l := analysis.NewLocal(analysis.LocalOptions{Home: filepath.Join(dir, "home"), MaxAge: time.Millisecond})
	base := filepath.Join(dir, "project/.amplifier/collections/foundation/profiles/base.md")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if i%2 == 0 {
					l.Changed(base)
				}
				if v, err := l.View(context.Background(), project); err != nil || v.Set.Lookup("foundation") == nil {
					t.Errorf("View: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
