package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/watcher"
)

const testManifest = `---
bundle:
  name: demo
  version: 0.1.0
  description: Demo
default_provider: anthropic
session:
  orchestrator:
    module: loop-basic
    source: ./modules/loop-basic
  context:
    module: context-simple
    source: ./modules/context-simple
---
`

// waitBundle waits until the daemon reports the manifest warm under a key
// other than not, and returns its status.
func waitBundle(t *testing.T, d *daemon.Daemon, not string) query.BundleStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := d.Status()
		if len(st.Bundles) == 1 {
			b := st.Bundles[0]
			if b.State == query.BundleFailed {
				t.Fatalf("build failed: %s", b.Error)
			}
			if b.State == query.BundleWarm && b.Key != not {
				return b
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warm entry other than %q: %+v", not, st.Bundles)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestManifestChangeBuildsInBackground: when the manifest's bytes change,
// the new entry appears without anyone calling prepare, and the old one is
// left alone.
func TestManifestChangeBuildsInBackground(t *testing.T) {
	e := newEnv(t)
	bdir := filepath.Join(e.dir, "bundle")
	manifest := filepath.Join(bdir, "bundle.md")
	e.write(manifest, testManifest)
	e.write(filepath.Join(bdir, "modules", "loop-basic", "__init__.py"), "")
	e.write(filepath.Join(bdir, "modules", "context-simple", "__init__.py"), "")
	cache, err := prepare.New(prepare.Options{Home: filepath.Join(e.dir, "agent-home"), Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(context.Background(), daemon.Options{
		Paths: e.paths, Home: e.home, NoSync: true, Prepare: cache, Manifests: []string{manifest},
		Watch: watcher.Options{Debounce: 5 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	first := waitBundle(t, d, "")
	e.write(manifest, testManifest+"\nOne more line of body.\n")
	second := waitBundle(t, d, first.Key)
	if second.LastBuild.IsZero() {
		t.Error("the rebuilt entry reports no build time")
	}
	for _, dir := range []string{first.Dir, second.Dir} {
		for _, f := range []string{"prepared.json", "manifest.json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("entry file missing: %v", err)
			}
		}
	}
	if first.Dir == second.Dir {
		t.Fatalf("the changed manifest kept its entry %s", first.Dir)
	}
	if e2, err := cache.Lookup(manifest); err != nil || e2.Dir != second.Dir {
		t.Errorf("prepare finds %v, %v; want the warm entry %s", e2.Dir, err, second.Dir)
	}
}
