package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/query"
)

// Answers before the first scan. The first scan after a restart stats every
// file and decodes every record before the catalog can answer; on a large
// tree that takes seconds. So that a no_sync resolve is answered at once, a
// daemon that stops cleanly leaves in the index a summary of its roots: for
// each root, the collections it holds in resolution order, each as
// query.Describe tells it and under the names it answers to. The next run
// reads the summary before it serves, and until its first scan ends it
// answers a no_sync resolve from it, marked unverified. The summary is
// trusted only when it describes the index as it is (the index's tick when
// it was written is the index's tick now) and was written with the same
// schema options; any other question, and any question about a root the
// summary does not hold, waits for the scan.

// summaryKey is the index state key the summary is kept under.
const summaryKey = "summary"

// summaryMagic begins an encoded summary; the digit is its version.
const summaryMagic = "amplidex summary 1\n"

// A summary is a decoded summary: the roots it holds, each with its
// entries still encoded (as encodeSummary writes them). Decoding checks
// every entry but builds nothing for them, and a lookup walks a root's
// entries: at 10,000 collections the summary is about 7 MB, and a daemon
// must answer soon after it starts.
type summary struct {
	tick   uint64
	schema byte
	roots  map[string][]byte // root path → its encoded entries, in order
}

// A summaryRoot is one root of a summary: its path and its collections in
// resolution order.
type summaryRoot struct {
	path    string
	entries []summaryEntry
}

// A summaryEntry is one collection: the names it answers to and its
// query.CollectionInfo as JSON.
type summaryEntry struct {
	names []string
	info  []byte
}

// summaryOf returns the roots of every view of st.
func summaryOf(st *catalog.State) ([]summaryRoot, error) {
	var roots []summaryRoot
	seen := map[string]bool{}
	for _, v := range st.Views() {
		for i, r := range v.Set.Roots {
			if seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			sr := summaryRoot{path: r.Path}
			for _, c := range v.Set.InRoot(i) {
				js, err := json.Marshal(query.Describe(c))
				if err != nil {
					return nil, err
				}
				sr.entries = append(sr.entries, summaryEntry{names: c.AnswersTo(), info: js})
			}
			roots = append(roots, sr)
		}
	}
	return roots, nil
}

// encodeSummary encodes a summary. The layout, after summaryMagic: the
// tick (uvarint), the schema stamp (one byte), the number of roots
// (uvarint), and for each root its path (a string: uvarint length and
// bytes), its number of entries (uvarint) and for each entry the number of
// names it answers to (uvarint), the names and its JSON (strings).
func encodeSummary(tick uint64, schema byte, roots []summaryRoot) []byte {
	b := []byte(summaryMagic)
	b = binary.AppendUvarint(b, tick)
	b = append(b, schema)
	b = binary.AppendUvarint(b, uint64(len(roots)))
	str := func(s []byte) { b = append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	for _, r := range roots {
		str([]byte(r.path))
		b = binary.AppendUvarint(b, uint64(len(r.entries)))
		for _, e := range r.entries {
			b = binary.AppendUvarint(b, uint64(len(e.names)))
			for _, n := range e.names {
				str([]byte(n))
			}
			str(e.info)
		}
	}
	return b
}

// errSummary reports a summary that does not decode.
var errSummary = errors.New("malformed summary")

// summaryReader reads the parts of an encoded summary.
type summaryReader struct{ b []byte }

func (r *summaryReader) uvarint() (uint64, bool) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, false
	}
	r.b = r.b[n:]
	return v, true
}

func (r *summaryReader) str() ([]byte, bool) {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return nil, false
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s, true
}

// entry reads one entry: the names it answers to, appended to names, and
// its JSON. No name holds a NUL.
func (r *summaryReader) entry(names [][]byte) ([][]byte, []byte, bool) {
	nn, ok := r.uvarint()
	if !ok || nn > uint64(len(r.b)) {
		return nil, nil, false
	}
	for range nn {
		name, ok := r.str()
		if !ok || bytes.IndexByte(name, 0) >= 0 {
			return nil, nil, false
		}
		names = append(names, name)
	}
	info, ok := r.str()
	return names, info, ok
}

// decodeSummary decodes what encodeSummary wrote. The roots' entries
// share b's memory.
func decodeSummary(b []byte) (*summary, error) {
	if !bytes.HasPrefix(b, []byte(summaryMagic)) {
		return nil, fmt.Errorf("%w: no header", errSummary)
	}
	r := &summaryReader{b[len(summaryMagic):]}
	bad := func(what string) (*summary, error) {
		return nil, fmt.Errorf("%w: %s", errSummary, what)
	}
	s := &summary{roots: map[string][]byte{}}
	var ok bool
	if s.tick, ok = r.uvarint(); !ok || len(r.b) == 0 {
		return bad("tick")
	}
	s.schema, r.b = r.b[0], r.b[1:]
	nroots, ok := r.uvarint()
	if !ok {
		return bad("root count")
	}
	var names [][]byte
	for range nroots {
		path, ok := r.str()
		if !ok || bytes.IndexByte(path, 0) >= 0 { // no path holds a NUL
			return bad("root path")
		}
		n, ok := r.uvarint()
		if !ok {
			return bad("entry count")
		}
		start := r.b
		for range n {
			if names, _, ok = r.entry(names[:0]); !ok {
				return bad("entry")
			}
		}
		entries := start[:len(start)-len(r.b)]
		if prev, dup := s.roots[string(path)]; dup {
			entries = append(slices.Clip(prev), entries...)
		}
		s.roots[string(path)] = entries
	}
	if len(r.b) != 0 {
		return bad("trailing bytes")
	}
	return s, nil
}

// lookup returns, in order, the JSON of each entry of root that answers
// to name (once for each of its names that is name), and whether the
// summary holds root.
func (s *summary) lookup(root, name string) ([][]byte, bool) {
	entries, ok := s.roots[root]
	if !ok {
		return nil, false
	}
	var (
		out   [][]byte
		names [][]byte
		info  []byte
	)
	for r := (summaryReader{entries}); len(r.b) > 0; {
		if names, info, ok = r.entry(names[:0]); !ok {
			return nil, false // decodeSummary checked every entry
		}
		for _, n := range names {
			if string(n) == name {
				out = append(out, info)
			}
		}
	}
	return out, true
}

// resolve answers resolve for name in the view of roots, or reports that
// the summary does not hold one of them. It resolves as the View does:
// the catalog makes the Set (catalog.Sketch) of each root's collections
// that answer to name, each standing for the one its entry describes.
func (s *summary) resolve(roots []discovery.Root, name string) (*query.ResolveResult, bool) {
	described := map[*discovery.Collection]query.CollectionInfo{}
	set, ok := catalog.Sketch(roots, func(r discovery.Root) ([]*discovery.Collection, bool) {
		infos, ok := s.lookup(r.Path, name)
		if !ok {
			return nil, false
		}
		var cols []*discovery.Collection
		for _, js := range infos {
			var ci query.CollectionInfo
			if json.Unmarshal(js, &ci) != nil {
				return nil, false
			}
			c := &discovery.Collection{Name: ci.Name, Version: ci.Version, Description: ci.Description, Root: r,
				Dir: ci.Dir, RealDir: ci.RealDir, Base: ci.Base, Layout: ci.Layout, Valid: ci.Valid, Problem: ci.Problem}
			ci.Status = ""
			described[c] = ci
			cols = append(cols, c)
		}
		return cols, true
	})
	if !ok {
		return nil, false
	}
	res := query.ResolveDescribed(set, name, func(c *discovery.Collection) query.CollectionInfo { return described[c] })
	res.Unverified = true
	return res, true
}

// loadSummary reads the summary the last run left, when it describes the
// index as it is; it logs why when there is one it cannot trust.
func (d *Daemon) loadSummary() *summary {
	began := d.now()
	b, err := d.persist.store.Meta(summaryKey)
	if err != nil || b == nil {
		return nil
	}
	s, err := decodeSummary(b)
	switch {
	case err != nil:
		d.log.Warn("summary of the last run not used", "err", err)
		return nil
	case s.tick != d.persist.store.Tick():
		d.log.Info("summary of the last run not used: the index changed after it was written",
			"summary_tick", s.tick, "index_tick", d.persist.store.Tick())
		return nil
	case s.schema != schemaStamp(d.cfg.Load().schema):
		d.log.Info("summary of the last run not used: the schema options changed")
		return nil
	}
	d.log.Info("summary of the last run loaded; it answers no_sync resolve until the first scan ends",
		"roots", len(s.roots), "bytes", len(b), "took", d.now().Sub(began).Round(time.Microsecond))
	return s
}

// saveSummary leaves the summary of the catalog for the next run; the
// writer has stopped, and wrote everything (the index's tick is the
// catalog's version).
func (d *Daemon) saveSummary() {
	if d.cat == nil || !d.isReady() || d.persist.lagging() || d.persist.store.ReadOnly() {
		return
	}
	roots, err := summaryOf(d.cat.State())
	if err == nil {
		err = d.persist.store.SetMeta(summaryKey, encodeSummary(d.persist.store.Tick(), schemaStamp(d.cfg.Load().schema), roots))
	}
	if err != nil {
		d.log.Warn("summary for the next run not written", "err", err)
	}
	d.saveChecks()
}

// earlyRoots are the roots a question is answered over, in precedence
// order: the daemon's own (home and bundled), or the client's own and the
// collection it stands in.
func earlyRoots(c query.Common, home string, bundled []string) []discovery.Root {
	if r := c.Roots; r != nil {
		return catalog.Scope{Project: c.Project, Home: r.Home, Bundled: r.Bundled, Collection: r.Collection}.Roots()
	}
	return discovery.Roots(c.Project, home, bundled)
}

// earlyResolve answers a no_sync resolve from the summary while the first
// scan runs; any other call goes on to next.
func (d *Daemon) earlyResolve(next query.MethodFunc) query.MethodFunc {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		s := d.early.Load()
		if s == nil || d.isReady() {
			return next(ctx, raw)
		}
		p, err := query.MethodResolve.Decode(raw)
		if err != nil || !p.NoSync || validProject(p.Project, os.Geteuid()) != nil {
			return next(ctx, raw)
		}
		res, ok := s.resolve(earlyRoots(p.Common, d.opts.Home, d.cfg.Load().bundled), p.Name)
		if !ok {
			return next(ctx, raw)
		}
		return &query.Answer{Result: res, Clock: d.clockAt(0)}, nil
	}
}
