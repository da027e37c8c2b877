package daemon

import (
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"maps"
	"runtime"
	"sort"
	"sync"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/index"
)

// record is what the engine knows of one file: its index record (without
// the payload) and its decoded facts.
type record struct {
	file  index.File
	kind  discovery.Kind
	facts *discovery.Facts
}

// payload is the encoding of a record's facts in the index.
type payload struct {
	Kind  discovery.Kind   `json:"k"`
	Facts *discovery.Facts `json:"f"`
}

// fileCache is the discovery.FileCache of the daemon: the records of every
// file it has read, loaded from the index at start. Records the catalog's
// loads make wait in pending until the change that brought them is
// published (commit), then in queue until the persister writes them.
type fileCache struct {
	mu      sync.Mutex // guards fields below
	recs    map[string]*record
	pending map[string]*record // made by loads, not yet published
	queue   map[string]*record // published, not yet written
	suspect map[string]bool    // named by a watch event: hash again whatever the stat says
	reads   int                // files analyzed (not taken from the cache)
	// settle, when set, is told of a document found empty; it keeps what
	// was known of it until settle has it read again. settling
	// holds such documents: waiting while the old facts are kept, due once
	// the read that believes the file is on its way.
	settle   func(path string)
	settling map[string]settleState
}

// settleState is where a document that turned empty stands.
type settleState int

const (
	settleWaiting settleState = iota + 1
	settleDue
)

// settled marks a document whose settle period is over: its next read is
// believed.
func (c *fileCache) settled(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settling[path] == settleWaiting {
		c.settling[path] = settleDue
	}
}

func newFileCache() *fileCache {
	return &fileCache{recs: map[string]*record{}, pending: map[string]*record{},
		queue: map[string]*record{}, suspect: map[string]bool{}, settling: map[string]settleState{}}
}

// load fills the cache from the index, decoding the payloads on every
// core. Records whose payload does not decode are dropped, so those files
// are read again.
func (c *fileCache) load(store *index.Store) (dropped int, err error) {
	files := make(chan index.File, 256)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex // guards decoded and dropped while decoding
		decoded = make(map[string]*record)
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range files {
				var p payload
				if json.Unmarshal(f.Data, &p) != nil || p.Facts == nil {
					mu.Lock()
					dropped++
					mu.Unlock()
					continue
				}
				f.Data = nil
				r := &record{file: f, kind: p.Kind, facts: p.Facts}
				mu.Lock()
				decoded[f.Path] = r
				mu.Unlock()
			}
		}()
	}
	err = store.Walk("", func(f index.File) error {
		files <- f
		return nil
	})
	close(files)
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(c.recs, decoded)
	return dropped, err
}

// distrust makes the next Lookup of each path miss, so that the file is
// hashed again.
func (c *fileCache) distrust(paths []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		if _, ok := c.recs[p]; ok {
			c.suspect[p] = true
		}
	}
}

// Lookup implements discovery.FileCache.
func (c *fileCache) Lookup(path string, fi fs.FileInfo, k discovery.Kind) (*discovery.Facts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.suspect[path] {
		delete(c.suspect, path)
		return nil, false
	}
	r := c.recs[path]
	if r == nil || r.kind != k || !r.file.SameStat(index.StatOf(fi)) {
		return nil, false
	}
	return r.facts, true
}

// Analyze implements discovery.FileCache.
func (c *fileCache) Analyze(path string, fi fs.FileInfo, src []byte, k discovery.Kind, analyze func() *discovery.Facts) *discovery.Facts {
	var hash [32]byte
	if src != nil {
		hash = sha256.Sum256(src)
	}
	c.mu.Lock()
	old := c.recs[path]
	if src != nil && len(src) == 0 && c.settle != nil && k != discovery.KindContext {
		// An empty document is not believed at once: an editor's save
		// caught between its truncate and its write looks the same. Keep
		// what was known of it (nothing, for a file never read), and not
		// the new stat, so that the next load reads the file again.
		kept := &discovery.Facts{Kind: k}
		if old != nil && old.facts != nil && old.kind == k {
			kept = old.facts
		}
		switch c.settling[path] {
		case 0:
			c.settling[path] = settleWaiting
			c.mu.Unlock()
			c.settle(path)
			return kept
		case settleWaiting:
			c.mu.Unlock()
			return kept
		}
	}
	delete(c.settling, path)
	c.mu.Unlock()
	var facts *discovery.Facts
	if old != nil && old.kind == k && src != nil && old.file.Hash == hash {
		facts = old.facts // same bytes: nothing to analyze
	} else {
		facts = analyze()
		c.mu.Lock()
		c.reads++
		c.mu.Unlock()
	}
	r := &record{kind: k, facts: facts, file: index.StatOf(fi)}
	r.file.Path, r.file.Hash = path, hash
	c.mu.Lock()
	c.recs[path] = r
	c.pending[path] = r
	c.mu.Unlock()
	return facts
}

// commit moves the pending records of loaded to the queue the persister
// writes, and forgets the records of gone; it returns the gone paths that
// had a record.
func (c *fileCache) commit(loaded, gone []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range loaded {
		if r, ok := c.pending[p]; ok {
			delete(c.pending, p)
			c.queue[p] = r
		}
	}
	var out []string
	for _, p := range gone {
		delete(c.pending, p)
		delete(c.queue, p)
		delete(c.suspect, p)
		delete(c.settling, p)
		if _, ok := c.recs[p]; ok {
			delete(c.recs, p)
			out = append(out, p)
		}
	}
	return out
}

// takeQueue returns the queued records, as index files with their
// payloads, sorted by path, and empties the queue.
func (c *fileCache) takeQueue() ([]index.File, error) {
	c.mu.Lock()
	queue := c.queue
	c.queue = map[string]*record{}
	c.mu.Unlock()
	out := make([]index.File, 0, len(queue))
	for _, r := range queue {
		data, err := json.Marshal(payload{Kind: r.kind, Facts: r.facts})
		if err != nil {
			return nil, err
		}
		f := r.file
		f.Data = data
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// requeue puts back, for the next takeQueue, the records of files an
// index write failed to store, unless they changed or went since.
func (c *fileCache) requeue(files []index.File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range files {
		r, ok := c.recs[f.Path]
		_, newer := c.queue[f.Path]
		_, unpublished := c.pending[f.Path]
		if ok && !newer && !unpublished {
			c.queue[f.Path] = r
		}
	}
}

// paths returns every path the cache holds, sorted.
func (c *fileCache) paths() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.recs))
	for p := range c.recs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// len returns how many records the cache holds.
func (c *fileCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.recs)
}

// analyzed returns how many files were analyzed rather than taken from the
// cache.
func (c *fileCache) analyzed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// clearFacts forgets every record's facts so that the next load analyzes
// every file again (the schema options changed).
func (c *fileCache) clearFacts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, r := range c.recs {
		f := r.file
		f.Hash = [32]byte{}
		c.recs[p] = &record{file: f} // no kind: never matches again
	}
}
