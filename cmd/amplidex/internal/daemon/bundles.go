package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
)

// bundles keep the prepared bundle of each watched manifest warm: when a
// manifest's bytes change, its new entry is built in the background, one
// build at a time per manifest. It owns the builds' goroutines: close
// cancels them and waits for them to end, and none starts after.
type bundles struct {
	log *slog.Logger
	now func() time.Time
	// ensure builds a manifest's entry (prepare.Cache.Ensure); it returns
	// soon once its context ends.
	ensure func(ctx context.Context, manifest string) (prepare.Entry, error)
	ctx    context.Context // ends when the bundles close; builds run under it
	stop   context.CancelFunc
	wg     sync.WaitGroup // counts the builds' goroutines
	// list and dirs are set by newBundles and never written after.
	list []*bundle
	dirs map[string][]*bundle // by the directory watched for them

	// beforeStart, when set, runs as a build is about to start (a test
	// hook: a close that lands there).
	beforeStart func()

	mu     sync.Mutex // guards closed; taken after a bundle's mu, never before
	closed bool       // close has begun: no build starts any more
}

// bundle is one watched manifest.
type bundle struct {
	manifest string

	mu      sync.Mutex // guards fields below
	status  query.BundleStatus
	last    []byte // the bytes the last build (or check) saw
	running bool
	again   bool // the bytes changed while a build ran
}

func newBundles(cache *prepare.Cache, manifests []string, log *slog.Logger, now func() time.Time) *bundles {
	bs := &bundles{log: log, now: now, dirs: map[string][]*bundle{}}
	bs.ctx, bs.stop = context.WithCancel(context.Background())
	if cache == nil {
		return bs
	}
	bs.ensure = cache.Ensure
	for _, m := range manifests {
		b := &bundle{manifest: m, status: query.BundleStatus{Manifest: m, State: query.BundleMissing}}
		bs.list = append(bs.list, b)
		dir := filepath.Dir(m)
		bs.dirs[dir] = append(bs.dirs[dir], b)
	}
	return bs
}

// watchDirs returns the directories to watch for the manifests.
func (bs *bundles) watchDirs() []string {
	out := make([]string, 0, len(bs.dirs))
	for d := range bs.dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// kickAll brings every entry up to date in the background.
func (bs *bundles) kickAll() {
	for _, b := range bs.list {
		bs.kick(b)
	}
}

// changed handles a batch of a watched directory; it reports whether dir
// is one.
func (bs *bundles) changed(dir string) bool {
	list, ok := bs.dirs[dir]
	for _, b := range list {
		bs.kick(b)
	}
	return ok
}

// readManifest reads a manifest as a document: a FIFO or a device is
// never opened, and nothing beyond the document limit is read.
func readManifest(path string) ([]byte, error) {
	return syntax.ReadFile(path, syntax.DefaultMaxFileSize)
}

// kick builds b's entry in the background unless its bytes are the ones
// already handled; a change during a build runs one more build after it.
func (bs *bundles) kick(b *bundle) {
	src, err := readManifest(b.manifest)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.status = query.BundleStatus{Manifest: b.manifest, State: query.BundleMissing, Error: err.Error()}
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
	if !bs.started() {
		return
	}
	b.running = true
	b.status.State = query.BundleBuilding
	b.status.Error = ""
	go bs.build(b)
}

// started counts one more build's goroutine, unless close has begun; it
// reports whether it did. The count and close's wait never cross: close
// marks the bundles closed under the same lock before it waits.
func (bs *bundles) started() bool {
	if bs.beforeStart != nil {
		bs.beforeStart()
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.closed {
		return false
	}
	bs.wg.Add(1)
	return true
}

// build runs Ensure until the manifest stops changing under it.
func (bs *bundles) build(b *bundle) {
	defer bs.wg.Done()
	for {
		src, _ := readManifest(b.manifest)
		e, err := bs.ensure(bs.ctx, b.manifest)
		b.mu.Lock()
		b.last = src
		st := query.BundleStatus{Manifest: b.manifest, Key: e.Key.String(), Dir: e.Dir, State: query.BundleWarm}
		if err != nil {
			st.State, st.Error = query.BundleFailed, err.Error()
			bs.log.Warn("prepared bundle build failed", "manifest", b.manifest, "err", err)
		} else if e.State != prepare.StateWarm {
			st.LastBuild, st.Took = bs.now(), e.Duration.Round(time.Millisecond).String()
			bs.log.Info("prepared bundle built", "manifest", b.manifest, "key", st.Key, "state", e.State, "took", st.Took)
		} else {
			st.LastBuild, st.Took = b.status.LastBuild, b.status.Took
		}
		b.status = st
		if !b.again || bs.ctx.Err() != nil {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.again = false
		b.status.State = query.BundleBuilding
		b.mu.Unlock()
	}
}

// status reports every watched manifest.
func (bs *bundles) status() []query.BundleStatus {
	out := []query.BundleStatus{}
	for _, b := range bs.list {
		b.mu.Lock()
		out = append(out, b.status)
		b.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Manifest < out[j].Manifest })
	return out
}

// close cancels the builds and waits for them to end; no build starts
// after it began. A build ends soon once cancelled: Ensure stops its git
// processes when its context ends.
func (bs *bundles) close() {
	bs.mu.Lock()
	bs.closed = true
	bs.mu.Unlock()
	bs.stop()
	bs.wg.Wait()
}
