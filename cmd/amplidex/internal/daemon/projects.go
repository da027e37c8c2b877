package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/index"
	"github.com/amplidex/amplidex/query"
)

// DefaultForgetAfter is how long a project nobody asks about stays
// registered when Options.ForgetAfter is zero.
const DefaultForgetAfter = 30 * 24 * time.Hour

// DefaultPruneEvery is how often the registered projects are checked when
// Options.PruneEvery is zero.
const DefaultPruneEvery = time.Hour

// DefaultForgetRootSetsAfter is how long a set of a client's roots that
// no client uses stays registered when Options.ForgetRootSetsAfter is
// zero: long enough for the commands of a shell session with another
// AMPLIDEX_BUNDLED, short enough that a root named once is not watched
// for days.
const DefaultForgetRootSetsAfter = 10 * time.Minute

// lastUsedKey is the index meta key of the projects' last use, kept
// beside the list of projects so that a restart does not make every
// project look fresh.
const lastUsedKey = "projects_last_used"

// pruner drops, on a timer, the registered projects whose directory is
// gone or that nobody asked about for ForgetAfter. It is started after the
// first scan and stopped first by Close.
type pruner struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

// startPruner checks the projects now and then every PruneEvery, and the
// sets of a client's roots four times per ForgetRootSetsAfter.
func (d *Daemon) startPruner() *pruner {
	every := d.opts.PruneEvery
	if every <= 0 {
		every = DefaultPruneEvery
	}
	p := &pruner{stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		sets := time.NewTicker(max(d.opts.ForgetRootSetsAfter/4, time.Millisecond))
		defer sets.Stop()
		d.prune()
		for {
			select {
			case <-t.C:
				d.prune()
			case <-sets.C:
				d.expireSets()
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

// expireSets forgets the sets of a client's roots that no client used for
// ForgetRootSetsAfter: their watches go, and their roots are read no more.
func (d *Daemon) expireSets() {
	after := d.opts.ForgetRootSetsAfter
	for _, key := range d.ingest.idleSets(d.now().Add(-after)) {
		d.log.Info("forgetting a client's roots", "project", catalog.Label(key), "reason", fmt.Sprintf("no client used them for %s", after))
		d.ingest.forget(key)
	}
}

// close stops the pruner and waits for it.
func (p *pruner) close() {
	close(p.stop)
	p.wg.Wait()
}

// prune forgets the projects whose directory (or its .amplifier) is gone
// and those unused for longer than ForgetAfter, saying so in the log, then
// saves the last use of those left.
func (d *Daemon) prune() {
	after := d.opts.ForgetAfter
	if after == 0 {
		after = DefaultForgetAfter
	}
	now := d.now()
	for p, last := range d.ingest.registered() {
		reason := ""
		dir := d.cat.KeyScope(p).Project
		if _, err := os.Stat(filepath.Join(dir, ".amplifier")); dir != "" && errors.Is(err, fs.ErrNotExist) {
			reason = "its directory is gone"
		} else if after > 0 && now.Sub(last) > after {
			reason = fmt.Sprintf("nobody asked about it for %s", now.Sub(last).Round(time.Minute))
		}
		if reason != "" {
			d.log.Info("forgetting a project", "project", catalog.Label(p), "reason", reason, "last_used", last.Format(time.RFC3339))
			d.ingest.forget(p)
		}
	}
	d.saveLastUsed()
}

// forget answers "forget": it drops a registered project.
func (d *Daemon) forget(ctx context.Context, p query.ForgetParams) (*query.ForgetResult, error) {
	switch {
	case p.Dir == "" || strings.ContainsRune(p.Dir, 0):
		return nil, query.Errorf(query.CodeInvalidParams, "forget: dir %q is not a directory name", p.Dir)
	case !filepath.IsAbs(p.Dir):
		return nil, query.Errorf(query.CodeInvalidParams, "forget: dir %q is not an absolute path", p.Dir)
	}
	if err := d.waitReady(ctx); err != nil {
		return nil, err
	}
	dir := d.cat.ProjectKey(p.Dir)
	if dir == "" {
		return &query.ForgetResult{Dir: p.Dir}, nil // the home directory is no project
	}
	// The project's View of the daemon's own roots, and those of the
	// clients' other roots.
	var keys []string
	for key := range d.ingest.registered() {
		if key == dir || catalog.IsScopeKey(key) && d.cat.KeyScope(key).Project == dir {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return &query.ForgetResult{Dir: dir}, nil
	}
	sort.Strings(keys)
	for _, key := range keys {
		d.log.Info("forgetting a project", "project", catalog.Label(key), "reason", "a client asked")
		d.ingest.forget(key)
	}
	d.saveLastUsed()
	return &query.ForgetResult{Dir: dir, Forgotten: true}, nil
}

// saveLastUsed stores when each registered project was last asked about;
// the sets of a client's roots are not remembered.
func (d *Daemon) saveLastUsed() {
	used := d.ingest.registered()
	maps.DeleteFunc(used, func(key string, _ time.Time) bool { return catalog.IsScopeKey(key) })
	b, err := json.Marshal(used)
	if err == nil {
		err = d.persist.store.SetMeta(lastUsedKey, b)
	}
	if err != nil && !errors.Is(err, index.ErrReadOnly) {
		d.log.Warn("the projects' last use not saved", "err", err)
	}
}

// restoreLastUsed gives the projects remembered from the last run the
// last use saved then, instead of the time they were registered again.
func (d *Daemon) restoreLastUsed() {
	b, err := d.persist.store.Meta(lastUsedKey)
	if err != nil || b == nil {
		return
	}
	var saved map[string]time.Time
	if json.Unmarshal(b, &saved) != nil {
		return
	}
	in := d.ingest
	in.mu.Lock()
	defer in.mu.Unlock()
	for p, t := range saved {
		if now, ok := in.projects[p]; ok && t.Before(now) {
			in.projects[p] = t
		}
	}
}
