package daemon

import (
	"io/fs"
	"path/filepath"
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

// progress counts what the daemon's loads have seen, for status to show
// how far the first scan got. It is written by the loads (from any
// goroutine) and read by status without a lock.
type progress struct {
	now         func() time.Time
	start       time.Time
	phase       atomic.Int32
	files       atomic.Int64
	collections atomic.Int64
}

func newProgress(now func() time.Time) *progress {
	return &progress{now: now, start: now()}
}

func (p *progress) setPhase(ph int32) { p.phase.Store(ph) }

// saw counts one file a load looked at.
func (p *progress) saw(path string) {
	p.files.Add(1)
	if filepath.Base(path) == "pyproject.toml" {
		p.collections.Add(1)
	}
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
