package daemon_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
)

// TestFirstScanTakesTheWatchersListings: the first scan lists no
// directory again that the watcher's walk listed, and a file made just
// after the walk listed its directory, before the scan read it, is not
// lost. (c0, where that file is made, is listed again once its change is
// applied: only c1 and c2 are looked at.)
func TestFirstScanTakesTheWatchersListings(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	var dirs []string
	for i := range 3 {
		dir := filepath.Join(e.userRoot(), fmt.Sprintf("c%d", i))
		e.collection(dir, fmt.Sprintf("c%d", i), "1.0.0")
		if i > 0 {
			dirs = append(dirs, dir, filepath.Join(dir, "agents"), filepath.Join(dir, "profiles"))
		}
	}
	agents := filepath.Join(e.userRoot(), "c0", "agents")
	var mu sync.Mutex
	var listed []string // by the loader, after the watcher
	var made error
	var once sync.Once
	e.startWith(func(o *daemon.Options) {
		o.ReadDir = func(dir string) ([]os.DirEntry, error) {
			mu.Lock()
			listed = append(listed, dir)
			mu.Unlock()
			return os.ReadDir(dir)
		}
		o.Watch.OnListing = func(_, dir string, _ []fs.DirEntry) {
			if dir == agents {
				once.Do(func() { made = os.WriteFile(filepath.Join(agents, "late.md"), []byte(agent("late")), 0o644) })
			}
		}
	})
	if made != nil {
		t.Fatal(made)
	}
	mu.Lock()
	for _, dir := range dirs {
		if slices.Contains(listed, dir) {
			t.Errorf("the first scan listed %s again", dir)
		}
	}
	mu.Unlock()
	c := e.client()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := e.resources(c, "c0")
		if slices.ContainsFunc(res, func(r string) bool { return strings.Contains(r, "late") }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent made after the walk listed its directory is lost: c0 holds %v", res)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
