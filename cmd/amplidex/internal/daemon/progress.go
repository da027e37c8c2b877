package daemon

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
)

// The phases of the first scan, as status names them.
const (
	phaseStarting = iota
	phaseLoading
	phaseReading
)

var phaseNames = [...]string{phaseStarting: "starting", phaseLoading: "loading index, adding watches", phaseReading: "reading roots"}

// The phases of a project's registration, as status names them.
const (
	regWatching = iota
	regReading
)

var regPhaseNames = [...]string{regWatching: "adding watches", regReading: "reading collections"}

// progress counts what the daemon's loads have seen, for status to show
// how far the first scan got, and each registration in progress. It is
// written by the loads (from any goroutine) and read by status without a
// lock.
type progress struct {
	now         func() time.Time
	start       time.Time
	phase       atomic.Int32
	files       atomic.Int64
	collections atomic.Int64
	// regs are the registrations in progress. A list published is never
	// written again: begin and end publish a new one, under regMu.
	regs  atomic.Pointer[[]*registering]
	regMu sync.Mutex // guards writes of regs
}

// registering counts the files a load sees below the roots of one
// project being registered, by path (the loads look files up by their
// path in the root, a linked collection's too).
type registering struct {
	dir   string
	roots *query.Roots // set for a View of a client's own roots
	paths []string     // the roots read for it, each with a trailing separator
	start time.Time

	phase       atomic.Int32
	files       atomic.Int64
	collections atomic.Int64
}

func newProgress(now func() time.Time) *progress {
	return &progress{now: now, start: now()}
}

func (p *progress) setPhase(ph int32) { p.phase.Store(ph) }

// saw counts one file a load looked at: for the first scan, and for each
// registration whose roots hold it.
func (p *progress) saw(path string) {
	p.files.Add(1)
	isMeta := filepath.Base(path) == "pyproject.toml"
	if isMeta {
		p.collections.Add(1)
	}
	rs := p.regs.Load()
	if rs == nil {
		return
	}
	for _, r := range *rs {
		for _, root := range r.paths {
			if strings.HasPrefix(path, root) {
				r.files.Add(1)
				if isMeta {
					r.collections.Add(1)
				}
				break
			}
		}
	}
}

// begin starts counting the registration of the project dir (with the
// client's roots, when set), whose loads read the roots given.
func (p *progress) begin(dir string, roots *query.Roots, read []discovery.Root) *registering {
	r := &registering{dir: dir, roots: roots, start: p.now()}
	for _, root := range read {
		r.paths = append(r.paths, filepath.Clean(root.Path)+string(filepath.Separator))
	}
	p.regMu.Lock()
	defer p.regMu.Unlock()
	var list []*registering
	if old := p.regs.Load(); old != nil {
		list = append(list, *old...)
	}
	list = append(list, r)
	p.regs.Store(&list)
	return r
}

// end stops counting a registration.
func (p *progress) end(r *registering) {
	p.regMu.Lock()
	defer p.regMu.Unlock()
	old := p.regs.Load()
	if old == nil {
		return
	}
	list := slices.DeleteFunc(slices.Clone(*old), func(x *registering) bool { return x == r })
	if len(list) == 0 {
		p.regs.Store(nil)
		return
	}
	p.regs.Store(&list)
}

// registrations returns how far each registration in progress got, in
// the order they began.
func (p *progress) registrations() []query.RegistrationProgress {
	out := []query.RegistrationProgress{}
	rs := p.regs.Load()
	if rs == nil {
		return out
	}
	for _, r := range *rs {
		out = append(out, query.RegistrationProgress{Dir: r.dir, Roots: r.roots,
			Phase: regPhaseNames[r.phase.Load()], Files: int(r.files.Load()), Collections: int(r.collections.Load()),
			Elapsed: p.now().Sub(r.start).Round(100 * time.Millisecond).String()})
	}
	return out
}

// snapshot returns the counts so far.
func (p *progress) snapshot() *query.ScanProgress {
	return &query.ScanProgress{
		Phase:       phaseNames[p.phase.Load()],
		Files:       int(p.files.Load()),
		Collections: int(p.collections.Load()),
		Elapsed:     p.now().Sub(p.start).Round(100 * time.Millisecond).String(),
	}
}

// countingCache is the loader's view of the file cache: every file a load
// looks up is counted before the cache answers.
type countingCache struct {
	discovery.FileCache
	p *progress
}

// Lookup implements discovery.FileCache.
func (c countingCache) Lookup(path string, fi fs.FileInfo, k discovery.Kind) (*discovery.Facts, bool) {
	c.p.saw(path)
	return c.FileCache.Lookup(path, fi, k)
}
