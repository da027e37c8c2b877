package daemon

import (
	"crypto/sha256"
	"io/fs"
	"log/slog"
	"slices"
	"sort"
	"sync"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/index"
)

// fileCache is the discovery.FileCache of the daemon, backed by the index:
// a file's record (its stat, hash and binary Facts) is looked up there,
// not kept in memory. Records the catalog's loads make wait in pending
// until the change that brought them is published (commit), then in queue
// until the persister writes them; meanwhile they answer from memory.
//
// The collections the catalog holds keep brief Facts (see
// discovery.Facts.Brief); details gives the full ones, decoded from the
// record, when a check or a query needs them.
//
// Every payload is stamped with the schema options it was analyzed with;
// a loader sees the cache through forSchema, which trusts only the records
// of its own options. The stamp is the loader's, not the cache's: a reload
// that changes the options never lets a load of the old ones stamp its
// records as the new ones'.
type fileCache struct {
	store *index.Store
	log   *slog.Logger

	mu      sync.Mutex            // guards fields below
	pending map[string]index.File // made by loads, not yet published
	queue   map[string]index.File // published, not yet written
	writing map[string]index.File // taken by the writer, not yet in the index
	suspect map[string]bool       // named by a watch event: hash again whatever the stat says
	// direct is set during the first scan, which nothing reads before it
	// ends: a record goes to the queue as soon as it is made, and the
	// writer is kicked each writeChunk records, so that the scan's records
	// are written while it runs rather than all held until it ends.
	direct bool
	kick   func()
	// fresh is set during a first scan that began on an index holding no
	// record (a cold start): the index then holds only what the scan
	// wrote itself, which Lookup and Analyze would not find there but for
	// a file read twice. They do not ask it: a first read of each file
	// costs no index lookup, and a second read, rare, reads the file
	// again.
	fresh bool
	// deleting holds the paths whose records are to be deleted from the
	// index and not yet deleted, each with the number of deletions
	// pending: what the index holds of them does not count, so that a
	// file gone and then found again (its root dropped and added back, its
	// project forgotten and registered again) is read again and its
	// record written after the deletion.
	deleting map[string]int
	reads    int // files analyzed (not taken from the cache)
	// settle, when set, is told of a document found empty; it keeps what
	// was known of it until settle has it read again. settling holds such
	// documents: waiting while the old facts are kept, due once the read
	// that believes the file is on its way.
	settle   func(path string)
	settling map[string]settleState
}

// settleState is where a document that turned empty stands.
type settleState int

const (
	settleWaiting settleState = iota + 1
	settleDue
)

func newFileCache(store *index.Store, log *slog.Logger) *fileCache {
	return &fileCache{store: store, log: log,
		pending: map[string]index.File{}, queue: map[string]index.File{}, writing: map[string]index.File{},
		suspect: map[string]bool{}, settling: map[string]settleState{}, deleting: map[string]int{}}
}

// schemaCache is the file cache as a loader of one schema options sees it:
// it trusts only the records analyzed with those options, and stamps the
// ones it makes with them. With other options every file is analyzed
// again.
type schemaCache struct {
	*fileCache
	stamp byte
}

// forSchema returns the cache of the loader of schema.
func (c *fileCache) forSchema(schema schema.Options) schemaCache {
	return schemaCache{c, schemaStamp(schema)}
}

// schemaStamp is the byte that marks the payloads analyzed with the given
// schema options.
func schemaStamp(s schema.Options) byte {
	if s.UnknownKeySeverity == diag.SeverityWarning {
		return 'w'
	}
	return 'e'
}

// encode returns the payload of a record: the schema stamp, then the
// binary Facts.
func (c schemaCache) encode(f *discovery.Facts) []byte {
	return f.AppendBinary([]byte{c.stamp})
}

// decode returns the Facts of a payload, brief or full; nil when it was
// made with other schema options or does not decode.
func (c schemaCache) decode(data []byte, brief bool) *discovery.Facts {
	if len(data) == 0 || data[0] != c.stamp {
		return nil
	}
	f, err := discovery.DecodeFacts(data[1:], brief)
	if err != nil {
		return nil
	}
	return f
}

// peek calls fn with the record of path, and reports whether there was
// one: from memory when a load made it and it is not written yet, else
// from the index. A record from the index is read in place: its
// Data is valid only while fn runs (see index.Store.Peek). With known set
// (Lookup and Analyze, which ask whether a file is known), a fresh index
// is not read (see fileCache.fresh).
func (c *fileCache) peek(path string, known bool, fn func(index.File)) bool {
	c.mu.Lock()
	r, ok := c.pending[path]
	if !ok {
		r, ok = c.queue[path]
	}
	if !ok {
		r, ok = c.writing[path]
	}
	deleting := c.deleting[path] > 0
	fresh := known && c.fresh
	c.mu.Unlock()
	if ok {
		fn(r)
		return true
	}
	if deleting || fresh {
		return false
	}
	ok, err := c.store.Peek(path, fn)
	if err != nil {
		c.log.Warn("index read failed; the file will be read again", "path", path, "err", err)
		return false
	}
	return ok
}

// distrust makes the next Lookup of each path miss, so that the file is
// hashed again.
func (c *fileCache) distrust(paths []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		c.suspect[p] = true
	}
}

// Lookup implements discovery.FileCache: the brief Facts of an unchanged
// file.
func (c schemaCache) Lookup(path string, fi fs.FileInfo, k discovery.Kind) (*discovery.Facts, bool) {
	c.mu.Lock()
	if c.suspect[path] {
		delete(c.suspect, path)
		c.mu.Unlock()
		return nil, false
	}
	c.mu.Unlock()
	var f *discovery.Facts
	c.peek(path, true, func(r index.File) {
		if r.SameStat(index.StatOf(fi)) {
			f = c.decode(r.Data, true)
		}
	})
	if f == nil || f.Kind != k {
		return nil, false
	}
	return f, true
}

// Analyze implements discovery.FileCache.
func (c schemaCache) Analyze(path string, fi fs.FileInfo, src []byte, k discovery.Kind, analyze func() *discovery.Facts) *discovery.Facts {
	var hash [32]byte
	if src != nil {
		hash = sha256.Sum256(src)
	}
	var (
		oldHash  [32]byte
		oldFacts *discovery.Facts
	)
	c.peek(path, true, func(r index.File) {
		oldHash = r.Hash
		if oldFacts = c.decode(r.Data, false); oldFacts != nil && oldFacts.Kind != k {
			oldFacts = nil
		}
	})
	c.mu.Lock()
	if src != nil && len(src) == 0 && c.settle != nil && k != discovery.KindContext {
		// An empty document is not believed at once: an editor's save
		// caught between its truncate and its write looks the same. Keep
		// what was known of it (nothing, for a file never read), and not
		// the new stat, so that the next load reads the file again.
		kept := oldFacts
		if kept == nil {
			kept = &discovery.Facts{Kind: k}
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
	if oldFacts != nil && src != nil && oldHash == hash {
		facts = oldFacts // same bytes: nothing to analyze
	} else {
		facts = analyze()
		c.mu.Lock()
		c.reads++
		c.mu.Unlock()
	}
	r := index.StatOf(fi)
	r.Path, r.Hash, r.Data = path, hash, c.encode(facts)
	c.mu.Lock()
	if !c.direct {
		c.pending[path] = r
		c.mu.Unlock()
		return facts
	}
	c.queue[path] = r
	full := len(c.queue) >= writeChunk
	c.mu.Unlock()
	if full {
		c.kick()
	}
	return facts
}

// isDirect reports whether records go to the writer as they are made.
func (c *fileCache) isDirect() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.direct
}

// writeDirect makes records go to the writer as they are made (see
// fileCache.direct), or, with on false, wait for their change to be
// published again. Turned on over an index with no record, it makes the
// cache fresh until it is turned off (see fileCache.fresh).
func (c *fileCache) writeDirect(on bool, kick func()) {
	fresh := false
	if on {
		n, err := c.store.Len()
		fresh = err == nil && n == 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.direct, c.kick, c.fresh = on, kick, fresh
}

// details is the discovery.Loader's Details: the full Facts of a file,
// from its record.
func (c schemaCache) details(path string) *discovery.Facts {
	var f *discovery.Facts
	c.peek(path, false, func(r index.File) { f = c.decode(r.Data, false) })
	return f
}

// mentions is the discovery.Loader's Mentions: the mentions of a file,
// from its record, without decoding its front matter.
func (c schemaCache) mentions(path string) ([]syntax.Mention, bool) {
	var (
		ms []syntax.Mention
		ok bool
	)
	c.peek(path, false, func(r index.File) {
		if len(r.Data) > 0 && r.Data[0] == c.stamp {
			var err error
			ms, err = discovery.DecodeMentions(r.Data[1:])
			ok = err == nil
		}
	})
	return ms, ok
}

// settled marks a document whose settle period is over: its next read is
// believed.
func (c *fileCache) settled(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settling[path] == settleWaiting {
		c.settling[path] = settleDue
	}
}

// commit moves the pending records of loaded to the queue the persister
// writes, and drops those of gone from memory; it returns gone, whose
// records the persister deletes.
func (c *fileCache) commit(loaded, gone []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range loaded {
		if r, ok := c.pending[p]; ok {
			delete(c.pending, p)
			c.queue[p] = r
		}
	}
	for _, p := range gone {
		delete(c.pending, p)
		delete(c.queue, p)
		delete(c.writing, p)
		delete(c.suspect, p)
		delete(c.settling, p)
		c.deleting[p]++
	}
	c.pending = emptied(c.pending)
	return gone
}

// emptied returns m, or a new map when m is empty: a map keeps the room
// of the most entries it ever held, and the first scan passes every
// file's record through these.
func emptied(m map[string]index.File) map[string]index.File {
	if len(m) == 0 {
		return map[string]index.File{}
	}
	return m
}

// takeQueue returns up to max queued records, sorted by path, and moves
// them from the queue to writing, where they still answer until written
// (see written); the rest stays for the next call.
func (c *fileCache) takeQueue(max int) []index.File {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]index.File, 0, min(max, len(c.queue)))
	for p, r := range c.queue {
		if len(out) == max {
			break
		}
		out = append(out, r)
		delete(c.queue, p)
		c.writing[p] = r
	}
	c.queue = emptied(c.queue)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// written forgets the records an index write stored: the index answers
// for them now.
func (c *fileCache) written(files []index.File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range files {
		delete(c.writing, f.Path)
	}
	c.writing = emptied(c.writing)
}

// deleted forgets the deletions an index write made: the index answers
// for those paths again.
func (c *fileCache) deleted(paths []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		if c.deleting[p]--; c.deleting[p] <= 0 {
			delete(c.deleting, p)
		}
	}
	if len(c.deleting) == 0 {
		c.deleting = map[string]int{}
	}
}

// waiting reports whether a record of path waits in memory.
func (c *fileCache) waiting(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, pending := c.pending[path]
	_, queued := c.queue[path]
	_, writing := c.writing[path]
	return pending || queued || writing
}

// requeue puts back, for the next takeQueue, the records an index write
// failed to store, unless a newer one came since.
func (c *fileCache) requeue(files []index.File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range files {
		delete(c.writing, f.Path)
		_, newer := c.queue[f.Path]
		_, unpublished := c.pending[f.Path]
		if !newer && !unpublished {
			c.queue[f.Path] = f
		}
	}
}

// paths returns every path the index holds, and those waiting to be
// written, sorted.
func (c *fileCache) paths() ([]string, error) {
	seen := map[string]bool{}
	err := c.store.Paths(func(p string) error {
		seen[p] = true
		return nil
	})
	c.mu.Lock()
	for p := range c.queue {
		seen[p] = true
	}
	for p := range c.writing {
		seen[p] = true
	}
	c.mu.Unlock()
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, err
}

// absent returns the paths that the index holds, or that wait to be
// written, and that keep, sorted in byte order, is without.
func (c *fileCache) absent(keep []string) ([]string, error) {
	out, err := c.store.Absent(keep)
	c.mu.Lock()
	for _, m := range []map[string]index.File{c.queue, c.writing} {
		for p := range m {
			if _, found := slices.BinarySearch(keep, p); !found {
				out = append(out, p)
			}
		}
	}
	c.mu.Unlock()
	slices.Sort(out)
	return slices.Compact(out), err
}

// analyzed returns how many files were analyzed rather than taken from the
// cache.
func (c *fileCache) analyzed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}
