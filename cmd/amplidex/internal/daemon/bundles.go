package daemon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/amplidex/amplidex/prepare"
)

// BundleState is how a watched manifest's prepared bundle stands.
type BundleState string

// The states of a watched manifest.
const (
	BundleWarm     BundleState = "warm"     // the entry of the current bytes exists
	BundleBuilding BundleState = "building" // a cold build runs in the background
	BundleFailed   BundleState = "failed"   // the last build failed; Error says why
	BundleMissing  BundleState = "missing"  // the manifest cannot be read
)

// BundleStatus is one watched manifest in a "status" answer.
type BundleStatus struct {
	Manifest string      `json:"manifest"`
	Key      string      `json:"key,omitempty"`
	Dir      string      `json:"dir,omitempty"`
	State    BundleState `json:"state"`
	Error    string      `json:"error,omitempty"`
	// LastBuild is when the last cold build finished, and Took how long
	// it ran; zero when the entry was found warm.
	LastBuild time.Time `json:"last_build,omitzero"`
	Took      string    `json:"took,omitempty"`
}

// bundle keeps one manifest's prepared bundle warm: when the manifest's
// bytes change, it builds the new entry in the background, once at a time.
type bundle struct {
	manifest string
	cache    *prepare.Cache

	mu      sync.Mutex // guards fields below
	status  BundleStatus
	last    []byte // the bytes the last build (or check) saw
	running bool
	again   bool // the bytes changed while a build ran
}

// startBundles watches each manifest's directory and brings each entry up
// to date in the background.
func (d *Daemon) startBundles() error {
	if d.opts.Prepare == nil {
		return nil
	}
	for _, m := range d.opts.Manifests {
		b := &bundle{manifest: m, cache: d.opts.Prepare, status: BundleStatus{Manifest: m, State: BundleMissing}}
		d.bundles = append(d.bundles, b)
		dir := filepath.Dir(m)
		d.bundleDirs[dir] = append(d.bundleDirs[dir], b)
		if err := d.w.AddRoot(dir); err != nil {
			return err
		}
		d.kick(b)
	}
	return nil
}

// kick builds b's entry in the background unless its bytes are the ones
// already handled; a change during a build runs one more build after it.
func (d *Daemon) kick(b *bundle) {
	src, err := os.ReadFile(b.manifest)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.status = BundleStatus{Manifest: b.manifest, State: BundleMissing, Error: err.Error()}
		b.last = nil
		return
	}
	if b.last != nil && bytes.Equal(src, b.last) {
		return
	}
	if b.running {
		b.again = true
		return
	}
	b.running = true
	b.status.State = BundleBuilding
	b.status.Error = ""
	d.builds.Add(1)
	go d.build(b)
}

// build runs Ensure until the manifest stops changing under it.
func (d *Daemon) build(b *bundle) {
	defer d.builds.Done()
	for {
		src, _ := os.ReadFile(b.manifest)
		e, err := b.cache.Ensure(d.ctx, b.manifest)
		b.mu.Lock()
		b.last = src
		st := BundleStatus{Manifest: b.manifest, Key: e.Key.String(), Dir: e.Dir, State: BundleWarm}
		if err != nil {
			st.State, st.Error = BundleFailed, err.Error()
			d.log.Warn("prepared bundle build failed", "manifest", b.manifest, "err", err)
		} else if e.State != prepare.StateWarm {
			st.LastBuild, st.Took = d.now(), e.Duration.Round(time.Millisecond).String()
			d.log.Info("prepared bundle built", "manifest", b.manifest, "key", st.Key, "state", e.State, "took", st.Took)
		} else {
			st.LastBuild, st.Took = b.status.LastBuild, b.status.Took
		}
		b.status = st
		if !b.again || d.ctx.Err() != nil {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.again = false
		b.status.State = BundleBuilding
		b.mu.Unlock()
	}
}

// bundleBatch handles a batch of a manifest directory. d.mu is held.
func (d *Daemon) bundleBatch(dir string) {
	for _, b := range d.bundleDirs[dir] {
		d.kick(b)
	}
}

// bundleStatus reports every watched manifest.
func (d *Daemon) bundleStatus() []BundleStatus {
	out := []BundleStatus{}
	for _, b := range d.bundles {
		b.mu.Lock()
		out = append(out, b.status)
		b.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Manifest < out[j].Manifest })
	return out
}

// waitBundles waits for the background builds; ctx bounds the wait.
func (d *Daemon) waitBundles(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		d.builds.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
