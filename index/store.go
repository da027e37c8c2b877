package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

var (
	// ErrLocked is returned by Open when another handle, usually another
	// process, holds the database and does not release it within
	// Options.Timeout.
	ErrLocked = errors.New("index: database is locked by another process")

	// ErrClosed is returned when a Store is used after Close.
	ErrClosed = errors.New("index: store is closed")

	// ErrCorrupt is returned when a stored record cannot be decoded or the
	// database faults while it is read.
	ErrCorrupt = errors.New("index: corrupt data")

	// ErrInvalidPath is returned by Apply when a path in the batch is empty,
	// relative or not cleaned.
	ErrInvalidPath = errors.New("index: path must be absolute and clean")

	// ErrReadOnly is returned by Apply and SetMeta when the store was
	// opened read-only because its file cannot be written; see ReadOnly.
	ErrReadOnly = errors.New("index: database is read-only")

	// ErrTickOrder is returned by Apply when a batch names a tick below
	// the current one.
	ErrTickOrder = errors.New("index: tick out of order")
)

const (
	// DefaultTimeout is the lock wait used when Options.Timeout is zero.
	DefaultTimeout = time.Second
	// DefaultLogSize is the change log bound used when Options.LogSize is
	// zero.
	DefaultLogSize = 100_000
)

// Options configure Open. The zero value is ready to use.
type Options struct {
	// Timeout bounds the wait for the database lock; DefaultTimeout when
	// zero or negative.
	Timeout time.Duration
	// LogSize bounds the change log; DefaultLogSize when zero or negative.
	LogSize int
	// Logger receives the warnings Open records; discarded when nil.
	Logger *slog.Logger
	// Now tells the time; time.Now when nil.
	Now func() time.Time
	// NoSync skips fsync after each commit. A crash may then lose recent
	// batches; for tests and benchmarks only.
	NoSync bool

	// openFile opens the database file; os.OpenFile when nil. Tests set it
	// to simulate a read-only file system.
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
	// statistics keeps bbolt's statistics, which tests read.
	statistics bool
}

// Store is the persistent index: per-file records keyed by path, a tick
// that advances with every batch that changes something, a bounded log of
// what changed at each tick, and a little state for the caller.
//
// A Store is safe for concurrent use.
type Store struct {
	db       *bbolt.DB
	path     string
	instance string
	warnings []string
	readOnly bool // the file is open read-only: writes return ErrReadOnly
	blank    bool // read-only, and its data is not of this schema: reads find nothing
	logSize  int
	logger   *slog.Logger
	now      func() time.Time

	tick atomic.Uint64
}

// Bucket names and the keys of the meta bucket.
const (
	bucketMeta  = "meta"  // the keys below
	bucketFiles = "files" // path → encoded File
	bucketLog   = "log"   // tick (8 bytes, big endian) + path → logPut or logDeleted
	bucketState = "state" // the caller's keys, each a bucket holding stateValue: see SetMeta
	stateValue  = "value"

	keySchema            = "schema"    // uint32
	keyInstance          = "instance"  // string
	keyCreated           = "created"   // unix nanoseconds
	keyTick              = "tick"      // the last tick
	keyFiles             = "files"     // number of records in bucketFiles
	keyLogCount          = "log-count" // number of entries in bucketLog
	keyLogFloor          = "log-floor" // the greatest tick with a trimmed entry
	schemaVersion uint32 = 3           // 2: records carry Ctime; 3: state keys are buckets; another version is emptied on Open

	logPut     byte = 0
	logDeleted byte = 1
)

// Path returns the path of the database file.
func (s *Store) Path() string { return s.path }

// Instance returns the id given to the database when it was created. It
// changes whenever the database is created anew (first use, moved aside,
// schema rebuild), so a clock from another life of the database is
// recognised by it.
func (s *Store) Instance() string { return s.instance }

// Warnings returns what Open had to do to produce a working store: a
// database moved aside, a rebuild for a new schema, a file opened
// read-only. It is empty when the database opened as it was.
func (s *Store) Warnings() []string { return slices.Clone(s.warnings) }

// ReadOnly reports whether Open found the database file sound but could
// not open it for writing (its mode, or a read-only file system), and
// opened it read-only. Reads then answer from the file as it is, or as an
// empty store when it holds data of another schema version; Apply and
// SetMeta return ErrReadOnly, and the tick never advances.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Tick returns the tick of the last batch that changed something; 0 for a
// store that never changed.
func (s *Store) Tick() uint64 { return s.tick.Load() }

// Get returns the record stored for path, and false when there is none.
func (s *Store) Get(path string) (File, bool, error) {
	var (
		f     File
		found bool
	)
	err := s.view(nil, func(tx *bbolt.Tx) error {
		val := tx.Bucket([]byte(bucketFiles)).Get([]byte(path))
		if val == nil {
			return nil
		}
		found = true
		var err error
		f, err = decodeFile([]byte(path), val)
		return err
	})
	if err != nil {
		return File{}, false, fmt.Errorf("index get %s: %w", path, err)
	}
	return f, found, nil
}

// verifyYield is how many records Verify checks between two yields of
// the processor: about a tenth of a millisecond of work.
const verifyYield = 256

// Verify reads every record and reports the first that does not decode,
// as Walk would, without keeping or copying what the records hold: what a
// daemon checks of its index before it trusts it.
func (s *Store) Verify() error {
	n := 0
	err := s.view(nil, func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte(bucketFiles)).ForEach(func(k, v []byte) error {
			if n++; n%verifyYield == 0 {
				// The daemon verifies while it already answers: let
				// the goroutine of a question run.
				runtime.Gosched()
			}
			_, err := decodeRecord(string(k), v, false)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("index verify: %w", err)
	}
	return nil
}

// Peek calls fn with the record of path, when the index has one, inside a
// read transaction, and reports whether it had one. The record's Data is
// the index's own memory, valid only while fn runs: fn must not keep or
// change it. What fn decodes from it costs no copy of the record.
func (s *Store) Peek(path string, fn func(File)) (bool, error) {
	var (
		inFn  bool
		found bool
	)
	err := s.view(&inFn, func(tx *bbolt.Tx) error {
		val := tx.Bucket([]byte(bucketFiles)).Get([]byte(path))
		if val == nil {
			return nil
		}
		f, err := decodeRecord(path, val, false)
		if err != nil {
			return err
		}
		found = true
		inFn = true
		fn(f)
		inFn = false
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("index peek %s: %w", path, err)
	}
	return found, nil
}

// Paths calls fn with the path of every record, in byte order, without
// decoding the records. An error from fn stops the walk and is returned
// unchanged; fn runs inside a read transaction, as Walk's does.
func (s *Store) Paths(fn func(path string) error) error {
	var (
		inFn  bool
		fnErr error
	)
	err := s.view(&inFn, func(tx *bbolt.Tx) error {
		c := tx.Bucket([]byte(bucketFiles)).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			inFn = true
			fnErr = fn(string(k))
			inFn = false
			if fnErr != nil {
				return fnErr
			}
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("index paths %s: %w", s.path, err)
	}
	return nil
}

// Absent returns, in byte order, the paths of the records that keep is
// without. keep must be sorted in byte order (as slices.Sort sorts
// strings); what it holds and the index does not is no matter. It reads
// the paths in place: only those it returns are copied.
func (s *Store) Absent(keep []string) ([]string, error) {
	var out []string
	err := s.view(nil, func(tx *bbolt.Tx) error {
		c := tx.Bucket([]byte(bucketFiles)).Cursor()
		i := 0
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			for i < len(keep) && keep[i] < string(k) {
				i++
			}
			if i == len(keep) || keep[i] != string(k) {
				out = append(out, string(k))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index paths %s: %w", s.path, err)
	}
	return out, nil
}

// Walk calls fn for every record at or under prefix, in byte order of the
// paths. The prefix is a path whose subtree is walked: "/a/b" visits
// "/a/b" and "/a/b/…" but not "/a/bc". An empty prefix or "/" walks all.
// An error from fn stops the walk and is returned unchanged.
//
// fn runs inside a read transaction: it must not call Apply, SetMeta or
// Close, which may wait for that transaction to end. The File it receives
// is its own to keep and change.
func (s *Store) Walk(prefix string, fn func(File) error) error {
	var (
		inFn  bool
		fnErr error
	)
	err := s.view(&inFn, func(tx *bbolt.Tx) error {
		c := tx.Bucket([]byte(bucketFiles)).Cursor()
		return walkTree(c, prefix, func(k, v []byte) error {
			f, err := decodeFile(k, v)
			if err != nil {
				return err
			}
			inFn = true
			fnErr = fn(f)
			inFn = false
			return fnErr
		})
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("index walk %s: %w", prefix, err)
	}
	return nil
}

// walkTree calls fn for the key equal to prefix and every key under it as
// a directory, in key order.
func walkTree(c *bbolt.Cursor, prefix string, fn func(k, v []byte) error) error {
	if prefix == "" || prefix == string(filepath.Separator) {
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := fn(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	// The key equal to prefix, then its children: keys such as prefix+"-x"
	// sort between the two and are skipped by seeking.
	if k, v := c.Seek([]byte(prefix)); k != nil && string(k) == prefix {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	dir := []byte(prefix + string(filepath.Separator))
	for k, v := c.Seek(dir); k != nil && bytes.HasPrefix(k, dir); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// Len returns the number of records.
func (s *Store) Len() (int, error) {
	var n uint64
	err := s.view(nil, func(tx *bbolt.Tx) error {
		n = getUint(tx.Bucket([]byte(bucketMeta)), keyFiles)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("index len %s: %w", s.path, err)
	}
	return int(n), nil
}

// SetMeta stores val under key in the caller's state, such as the
// configured roots or a summary of the catalog for the next run. A nil val
// removes the key. The state is cleared with everything else when the
// database is rebuilt. On a read-only store it returns an error wrapping
// ErrReadOnly.
//
// Each key is a bucket of its own, holding its value under stateValue, so
// that writing one key writes nothing of the others: bbolt writes a leaf
// whole, and a leaf holds two keys at least, so a few bytes stored beside
// a summary of several megabytes cost a write of them all.
func (s *Store) SetMeta(key string, val []byte) error {
	err := s.update(func(tx *bbolt.Tx) error {
		state := tx.Bucket([]byte(bucketState))
		if val == nil {
			if err := state.DeleteBucket([]byte(key)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
				return err
			}
			return nil
		}
		b, err := state.CreateBucketIfNotExists([]byte(key))
		if err != nil {
			return err
		}
		return b.Put([]byte(stateValue), slices.Clone(val))
	})
	if err != nil {
		return fmt.Errorf("index set meta %q: %w", key, err)
	}
	return nil
}

// Meta returns a copy of the value SetMeta stored under key, or nil when
// there is none.
func (s *Store) Meta(key string) ([]byte, error) {
	var val []byte
	err := s.view(nil, func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(bucketState)).Bucket([]byte(key)); b != nil {
			if v := b.Get([]byte(stateValue)); v != nil {
				val = append([]byte{}, v...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index meta %q: %w", key, err)
	}
	return val, nil
}

// Close closes the database. It waits for transactions in progress,
// including a Walk, to end. Using the Store afterwards returns ErrClosed;
// a second Close returns nil.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("index close %s: %w", s.path, err)
	}
	return nil
}

// view runs fn in a read transaction; see protect for userCode. On a
// blank store fn does not run, so every read finds nothing.
func (s *Store) view(userCode *bool, fn func(*bbolt.Tx) error) (err error) {
	if s.blank {
		fn = func(*bbolt.Tx) error { return nil }
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer protect(&err, userCode)
	return mapClosed(s.db.View(fn))
}

// update runs fn in a write transaction, or returns ErrReadOnly (ErrClosed
// after Close) when the store is read-only.
func (s *Store) update(fn func(*bbolt.Tx) error) (err error) {
	if s.readOnly {
		if err := s.view(nil, func(*bbolt.Tx) error { return nil }); err != nil {
			return err
		}
		return ErrReadOnly
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer protect(&err, nil)
	return mapClosed(s.db.Update(fn))
}

// protect turns a panic or memory fault raised while bbolt reads a damaged
// database into an ErrCorrupt error. A panic raised while *userCode is set
// came from the caller's function and is passed on unchanged.
func protect(err *error, userCode *bool) {
	r := recover()
	if r == nil {
		return
	}
	if userCode != nil && *userCode {
		panic(r)
	}
	*err = fmt.Errorf("%w: %v", ErrCorrupt, r)
}

func mapClosed(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

func getUint(b *bbolt.Bucket, key string) uint64 {
	v := b.Get([]byte(key))
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func putUint(b *bbolt.Bucket, key string, v uint64) error {
	return b.Put([]byte(key), binary.BigEndian.AppendUint64(nil, v))
}

// cleanPath reports whether p is absolute and clean, as keys must be.
func cleanPath(p string) bool {
	return filepath.IsAbs(p) && filepath.Clean(p) == p && !strings.ContainsRune(p, 0)
}
