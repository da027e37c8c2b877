package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// bundleScopesKey is the index's key of the places whose bundles the
// daemon serves (query.BundleScope), with their roots: a restart watches
// them again, as it registers the projects again.
const bundleScopesKey = "bundle-scopes"

// bundleIndex serves the bundles of the places clients stand in: it keeps
// a bundle catalog (package discovery/bundle/catalog) of every place asked
// about, watches the roots each place's bundles come from, and hands the
// watcher's batches to the catalog on a worker of its own, which makes
// again only the compositions and checks that read a changed path and
// wakes the subscriptions that follow them. A question waits for the
// batches delivered before it (read-your-writes), then has the catalog
// stat the paths read outside every root.
type bundleIndex struct {
	cat *bundlecat.Catalog
	w   *watcher.Watcher
	// store is the index, set once the daemon has verified (and maybe
	// replaced) it; until then the places are not saved.
	store atomic.Pointer[index.Store]
	log   *slog.Logger
	warn  func(string)
	uid   int
	// needed reports a root the daemon watches for something else (a
	// collection root, a manifest's directory): not removed with the
	// places that needed it.
	needed func(root string) bool
	// changed is told the places whose compositions or checks changed.
	changed func(envs []compose.Env)

	workers sync.WaitGroup

	mu sync.Mutex // guards fields below; never held while a file is read or a root watched
	// batches wait for the worker; queued counts those handed to it,
	// done those it has taken in; drained, on mu, says done moved.
	batches []watcher.Batch
	queued  uint64
	done    uint64
	running bool
	stopped bool
	drained *sync.Cond
	// watched are the roots watched for bundles; saved the places last
	// written to the index.
	watched map[string]bool
	saved   []query.BundleScope
	// roots serialises the changes of the watched roots; saving the
	// writes of the places to the index.
	roots  sync.Mutex
	saving sync.Mutex
}

func newBundleIndex(log *slog.Logger, warn func(string), home string, uid int) *bundleIndex {
	b := &bundleIndex{log: log, warn: warn, uid: uid, watched: map[string]bool{},
		needed: func(string) bool { return false }, changed: func([]compose.Env) {}}
	b.drained = sync.NewCond(&b.mu)
	b.cat = bundlecat.New(bundlecat.Options{Watchable: func(dir string) bool { return watchable(dir, home, uid) }})
	return b
}

// watchable reports whether a bundle root may be watched: not the file
// system's root, nor a directory that holds the home directory, nor one
// of another user. What is read below a root that may not be watched is
// stated at each question instead (bundlecat.Catalog.Refresh).
func watchable(dir, home string, uid int) bool {
	if rootRefusal(dir, home) != "" {
		return false
	}
	fi, err := os.Stat(dir)
	return err != nil || ownedBy(fi, uid)
}

// checkScope validates the place a client names and returns its Env.
func checkBundleScope(s *query.BundleScope) (compose.Env, error) {
	if s == nil {
		return compose.Env{}, query.Errorf(query.CodeInvalidParams, "bundles: where the client looks for bundles is missing")
	}
	for _, f := range []struct{ name, path string }{{"work_dir", s.WorkDir}, {"amplifier_home", s.AmplifierHome},
		{"home", s.Home}, {"project_dir", s.ProjectDir}} {
		switch p := f.path; {
		case p == "" && f.name != "work_dir":
		case strings.ContainsRune(p, 0):
			return compose.Env{}, query.Errorf(query.CodeInvalidParams, "bundles: %s %q holds a NUL byte", f.name, p)
		case !filepath.IsAbs(p) || filepath.Clean(p) != p:
			return compose.Env{}, query.Errorf(query.CodeInvalidParams, "bundles: %s %q is not an absolute, clean path", f.name, p)
		}
	}
	if fi, err := os.Stat(s.WorkDir); err != nil || !fi.IsDir() {
		return compose.Env{}, query.Errorf(query.CodeInvalidParams, "bundles: work_dir %s is not a directory", s.WorkDir)
	}
	return s.Env(), nil
}

// batch hands a watcher batch to the worker.
func (b *bundleIndex) batch(bt watcher.Batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.batches = append(b.batches, bt)
	b.queued++
	if !b.running {
		b.running = true
		b.workers.Add(1)
		go b.work()
	}
}

// work takes in the queued batches until none is left.
func (b *bundleIndex) work() {
	defer b.workers.Done()
	for {
		b.mu.Lock()
		if b.done == b.queued || b.stopped {
			b.running = false
			b.done = b.queued
			b.drained.Broadcast()
			b.mu.Unlock()
			return
		}
		batches, target := b.batches, b.queued
		b.batches = nil
		b.mu.Unlock()
		var paths, trees []string
		for _, bt := range batches {
			if bt.Rescan {
				trees = append(trees, bt.Root)
			} else {
				paths = append(paths, bt.Paths...)
			}
		}
		b.update(paths, trees)
		b.mu.Lock()
		b.done = target
		b.drained.Broadcast()
		b.mu.Unlock()
	}
}

// update has the catalog take in paths and trees, watches what its
// places need now (and reads again what is below a root watched from
// now on), and wakes the subscriptions of the places that changed.
func (b *bundleIndex) update(paths, trees []string) {
	var envs []compose.Env
	for range 4 { // a root watched anew may relocate a place, which may need another
		d := b.cat.Update(paths, trees)
		envs = append(envs, d.Envs...)
		if len(d.Relocated) == 0 {
			break
		}
		if paths, trees = nil, b.reconcile(); len(trees) == 0 {
			break
		}
	}
	if len(envs) > 0 {
		b.changed(envs)
	}
}

// wait waits until every batch handed over before it was called is taken
// in, or ctx ends.
func (b *bundleIndex) wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.drained.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	target := b.queued
	for b.done < target && !b.stopped {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.drained.Wait()
	}
	return nil
}

// view returns the bundle View of the place a question names: on its
// first question the place's roots are watched, then read. Unless noSync
// is set, the changes made before the question are taken in first.
func (b *bundleIndex) view(ctx context.Context, s *query.BundleScope, noSync bool) (*bundlecat.View, error) {
	env, err := checkBundleScope(s)
	if err != nil {
		return nil, err
	}
	b.cat.View(env) // the place is known, so that reconcile watches its roots
	if added := b.reconcile(); len(added) > 0 {
		// Watched now: what was read below them before may have changed
		// unseen; read it again.
		b.update(nil, added)
	}
	b.remember()
	if !noSync {
		if err := b.w.Flush(ctx); err != nil {
			return nil, err
		}
		if err := b.wait(ctx); err != nil {
			return nil, err
		}
		if d := b.cat.Refresh(env); len(d.Envs) > 0 {
			if len(d.Relocated) > 0 {
				if added := b.reconcile(); len(added) > 0 {
					b.update(nil, added)
				}
			}
			b.changed(d.Envs)
		}
	}
	return b.cat.View(env), nil
}

// reconcile watches the roots the catalog's places need and are not
// watched yet, and stops watching those no place needs any more (unless
// the daemon needs them otherwise). It returns the roots it added.
func (b *bundleIndex) reconcile() []string {
	b.roots.Lock()
	defer b.roots.Unlock()
	want := b.cat.Roots()
	b.mu.Lock()
	var add, drop []string
	for _, r := range want {
		if !b.watched[r] {
			add = append(add, r)
		}
	}
	for r := range b.watched {
		if !slices.Contains(want, r) {
			drop = append(drop, r)
		}
	}
	b.mu.Unlock()
	var added []string
	for _, r := range add {
		err := b.w.AddRoot(r)
		if errors.Is(err, watcher.ErrTooLarge) {
			b.warn(fmt.Sprintf("bundle root %s: %v: read, not watched, so changes in it are not seen", r, err))
		} else if err != nil {
			b.log.Warn("bundle root not watched", "root", r, "err", err)
			continue
		}
		added = append(added, r)
		b.mu.Lock()
		b.watched[r] = true
		b.mu.Unlock()
	}
	for _, r := range drop {
		b.mu.Lock()
		delete(b.watched, r)
		b.mu.Unlock()
		if !b.needed(r) {
			_ = b.w.RemoveRoot(r)
		}
	}
	return added
}

// isRoot reports a root watched for bundles.
func (b *bundleIndex) isRoot(root string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.watched[root]
}

// remember writes the places the catalog keeps to the index when they
// changed, for the next run.
func (b *bundleIndex) remember() {
	b.saving.Lock()
	defer b.saving.Unlock()
	var scopes []query.BundleScope
	for _, e := range b.cat.Envs() {
		scopes = append(scopes, query.BundleScope{WorkDir: e.WorkDir, AmplifierHome: e.AmplifierHome, Home: e.Home, ProjectDir: e.ProjectDir})
	}
	store := b.store.Load()
	if store == nil || store.ReadOnly() {
		return
	}
	b.mu.Lock()
	same := slices.Equal(scopes, b.saved)
	b.saved = scopes
	b.mu.Unlock()
	if same {
		return
	}
	js, err := json.Marshal(scopes)
	if err == nil {
		err = store.SetMeta(bundleScopesKey, js)
	}
	if err != nil {
		b.log.Warn("bundle places not saved for the next run", "err", err)
	}
}

// restore serves again the places the last run served: their roots are
// watched and their bundles located.
func (b *bundleIndex) restore() {
	js, err := b.store.Load().Meta(bundleScopesKey)
	if err != nil || js == nil {
		return
	}
	var scopes []query.BundleScope
	if err := json.Unmarshal(js, &scopes); err != nil {
		b.log.Warn("bundle places of the last run not restored", "err", err)
		return
	}
	for _, s := range scopes {
		env, err := checkBundleScope(&s)
		if err != nil {
			b.log.Info("bundle place of the last run not restored", "work_dir", s.WorkDir, "err", err)
			continue
		}
		b.cat.View(env)
	}
	b.reconcile()
	b.remember()
}

// close stops the worker; the watcher is closed first, so that no batch
// comes any more.
func (b *bundleIndex) close() {
	b.mu.Lock()
	b.stopped = true
	b.drained.Broadcast()
	b.mu.Unlock()
	b.workers.Wait()
}
