package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/bbolt"
)

// Batch is a set of changes that Apply makes in one transaction.
//
// Deletions apply before puts: a path that is both deleted (directly or
// under a DeletePrefix) and put ends up put. When a path is put twice, the
// last File wins.
type Batch struct {
	// Put stores these records, replacing any stored under the same path.
	Put []File
	// Delete removes the records of these paths.
	Delete []string
	// DeletePrefix removes whole subtrees: the record of each path and of
	// every path under it as a directory ("/a/b" removes "/a/b/x" but not
	// "/a/bc"). "/" removes everything.
	DeletePrefix []string
	// Tick, when not zero, is the tick the batch is logged under if it
	// changes anything, in place of the next one: a caller that numbers
	// its own versions keeps the log in its numbers, and may write one
	// version in several batches. It must not be below the current tick.
	Tick uint64
}

// Change is one entry of the change log: the path whose record was
// stored or removed by the batch that made the tick.
type Change struct {
	Tick    uint64
	Path    string
	Deleted bool
}

// filesFillPercent is how full bbolt packs the pages of the files bucket
// when it splits them. Batches arrive sorted, so most splits happen at the
// right edge, where the default of one half would leave every page half
// empty.
const filesFillPercent = 0.9

// errNoChange rolls back a write transaction that changed nothing, so a
// batch with nothing new costs no disk write.
var errNoChange = errors.New("no change")

// op is one write of a batch: a put when val is non-nil, else a delete.
type op struct {
	key []byte
	val []byte
}

// Apply makes the changes of b in one write transaction, in key order.
//
// A put whose record is identical to the stored one (same size, mtime,
// inode, mode, hash, root and data) and a delete of an absent path change
// nothing. When anything changed, the tick advances by one and every
// changed path is logged under the new tick; the oldest log entries beyond
// Options.LogSize are dropped. Apply returns the tick after the batch,
// which is the previous one when nothing changed.
//
// Every path must be absolute and clean, or Apply returns an error
// wrapping ErrInvalidPath and changes nothing. On a read-only store (see
// ReadOnly) it returns an error wrapping ErrReadOnly, whatever the batch.
func (s *Store) Apply(b Batch) (uint64, error) {
	puts, err := encodePuts(b.Put)
	if err != nil {
		return 0, fmt.Errorf("index apply %s: %w", s.path, err)
	}
	deletes, err := sortedPaths(b.Delete)
	if err != nil {
		return 0, fmt.Errorf("index apply %s: %w", s.path, err)
	}
	prefixes, err := sortedPaths(b.DeletePrefix)
	if err != nil {
		return 0, fmt.Errorf("index apply %s: %w", s.path, err)
	}

	var tick uint64
	err = s.update(func(tx *bbolt.Tx) error {
		var err error
		tick, err = s.applyTx(tx, puts, deletes, prefixes, b.Tick)
		return err
	})
	if err != nil && !errors.Is(err, errNoChange) {
		return 0, fmt.Errorf("index apply %s: %w", s.path, err)
	}
	s.advance(tick)
	return tick, nil
}

// advance raises the cached tick to t; concurrent Applies may finish out
// of order.
func (s *Store) advance(t uint64) {
	for {
		old := s.tick.Load()
		if t <= old || s.tick.CompareAndSwap(old, t) {
			return
		}
	}
}

// encodePuts validates and encodes the records to put, sorted by path,
// keeping the last record given for a path. Keys and values share one
// allocation, sized for the longest possible encodings.
func encodePuts(files []File) ([]op, error) {
	if len(files) == 0 {
		return nil, nil
	}
	order := make([]int, len(files))
	size := 0
	for i := range files {
		f := &files[i]
		if !cleanPath(f.Path) {
			return nil, fmt.Errorf("put %q: %w", f.Path, ErrInvalidPath)
		}
		order[i] = i
		size += len(f.Path) + maxHeader + len(f.Root) + len(f.Data)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return strings.Compare(files[a].Path, files[b].Path)
	})
	arena := make([]byte, 0, size)
	ops := make([]op, 0, len(files))
	for i, j := range order {
		if i+1 < len(order) && files[order[i+1]].Path == files[j].Path {
			continue // a later record for the same path wins
		}
		f := &files[j]
		start := len(arena)
		arena = append(arena, f.Path...)
		mid := len(arena)
		arena = encodeFile(arena, f)
		ops = append(ops, op{key: arena[start:mid:mid], val: arena[mid:len(arena):len(arena)]})
	}
	return ops, nil
}

// sortedPaths validates paths and returns them sorted without duplicates.
func sortedPaths(paths []string) ([]string, error) {
	for _, p := range paths {
		if !cleanPath(p) {
			return nil, fmt.Errorf("delete %q: %w", p, ErrInvalidPath)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(paths))), nil
}

// applyTx writes a validated batch and returns the new tick, or the
// current tick and errNoChange when nothing changed.
func (s *Store) applyTx(tx *bbolt.Tx, puts []op, deletes, prefixes []string, next uint64) (uint64, error) {
	meta := tx.Bucket([]byte(bucketMeta))
	files := tx.Bucket([]byte(bucketFiles))
	files.FillPercent = filesFillPercent
	tick := getUint(meta, keyTick)
	if next != 0 && next < tick {
		return 0, fmt.Errorf("%w: batch tick %d is below the current tick %d", ErrTickOrder, next, tick)
	}
	count := getUint(meta, keyFiles)

	isPut := func(key []byte) bool {
		_, found := slices.BinarySearchFunc(puts, key, func(o op, k []byte) int { return bytes.Compare(o.key, k) })
		return found
	}
	var dels []op
	for _, p := range deletes {
		if key := []byte(p); !isPut(key) {
			dels = append(dels, op{key: key})
		}
	}
	for _, p := range prefixes {
		err := walkTree(files.Cursor(), p, func(k, _ []byte) error {
			if !isPut(k) {
				dels = append(dels, op{key: slices.Clone(k)})
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	if len(prefixes) > 0 {
		slices.SortFunc(dels, func(a, b op) int { return bytes.Compare(a.key, b.key) })
		dels = slices.CompactFunc(dels, func(a, b op) bool { return bytes.Equal(a.key, b.key) })
	}

	var changed []op // the ops that changed something
	write := func(o op) error {
		old := files.Get(o.key)
		switch {
		case o.val == nil && old == nil:
			return nil
		case o.val == nil:
			count--
			changed = append(changed, o)
			return files.Delete(o.key)
		case old != nil && bytes.Equal(old, o.val):
			return nil
		case old == nil:
			count++
		}
		changed = append(changed, o)
		return files.Put(o.key, o.val)
	}
	// Merge the two sorted, disjoint lists so writes go in key order.
	i, j := 0, 0
	for i < len(puts) || j < len(dels) {
		var o op
		if j == len(dels) || (i < len(puts) && bytes.Compare(puts[i].key, dels[j].key) < 0) {
			o, i = puts[i], i+1
		} else {
			o, j = dels[j], j+1
		}
		if err := write(o); err != nil {
			return 0, err
		}
	}
	if len(changed) == 0 {
		return tick, errNoChange
	}

	if tick++; next != 0 {
		tick = next
	}
	if err := s.logTx(tx, tick, changed); err != nil {
		return 0, err
	}
	if err := putUint(meta, keyTick, tick); err != nil {
		return 0, err
	}
	return tick, putUint(meta, keyFiles, count)
}

// logTx appends the changes of one tick to the change log and trims the
// log to s.logSize entries, oldest first, raising the log floor to the
// greatest tick that lost an entry.
func (s *Store) logTx(tx *bbolt.Tx, tick uint64, changed []op) error {
	meta := tx.Bucket([]byte(bucketMeta))
	log := tx.Bucket([]byte(bucketLog))
	count := getUint(meta, keyLogCount)
	floor := getUint(meta, keyLogFloor)
	limit := uint64(s.logSize)

	if uint64(len(changed)) >= limit {
		// Every older entry falls out: drop the bucket whole rather than
		// entry by entry, and skip entries that would be trimmed at once.
		if count > 0 {
			if err := tx.DeleteBucket([]byte(bucketLog)); err != nil {
				return err
			}
			var err error
			if log, err = tx.CreateBucket([]byte(bucketLog)); err != nil {
				return err
			}
			floor = tick - 1
		}
		if extra := len(changed) - s.logSize; extra > 0 {
			changed = changed[extra:]
			floor = tick
		}
		count = 0
	}

	log.FillPercent = 1 // keys only ever grow
	size := 0
	for _, c := range changed {
		size += 8 + len(c.key)
	}
	arena := make([]byte, 0, size)
	put, deleted := []byte{logPut}, []byte{logDeleted}
	for _, c := range changed {
		start := len(arena)
		arena = binary.BigEndian.AppendUint64(arena, tick)
		arena = append(arena, c.key...)
		val := put
		if c.val == nil {
			val = deleted
		}
		if err := log.Put(arena[start:len(arena):len(arena)], val); err != nil {
			return err
		}
	}
	count += uint64(len(changed))

	if count > limit {
		c := log.Cursor()
		for ; count > limit; count-- {
			k, _ := c.First()
			if len(k) < 8 {
				return fmt.Errorf("%w: change log key %x", ErrCorrupt, k)
			}
			floor = max(floor, binary.BigEndian.Uint64(k))
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	if err := putUint(meta, keyLogCount, count); err != nil {
		return err
	}
	return putUint(meta, keyLogFloor, floor)
}

// Changes returns the log entries with a tick after since, ordered by tick
// and then by path; a path changed by several batches appears once for
// each. complete is false, and no changes are returned, when entries after
// since were trimmed from the log, or when since is beyond the current tick
// (a clock from another life of the database): the caller must then start
// again from the full state.
func (s *Store) Changes(since uint64) (changes []Change, complete bool, err error) {
	err = s.view(nil, func(tx *bbolt.Tx) error {
		meta := tx.Bucket([]byte(bucketMeta))
		if since > getUint(meta, keyTick) || since < getUint(meta, keyLogFloor) {
			return nil
		}
		complete = true
		c := tx.Bucket([]byte(bucketLog)).Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, since+1)); k != nil; k, v = c.Next() {
			if len(k) < 8 || len(v) != 1 {
				return fmt.Errorf("%w: change log entry %x", ErrCorrupt, k)
			}
			changes = append(changes, Change{
				Tick:    binary.BigEndian.Uint64(k),
				Path:    string(k[8:]),
				Deleted: v[0] == logDeleted,
			})
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("index changes %s: %w", s.path, err)
	}
	return changes, complete, nil
}
