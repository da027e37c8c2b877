package index

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// initialMmapSize is the address space mapped for the database up front,
// on 64-bit platforms: without it, bbolt remaps the file each time it
// grows, copying every key and value a large batch holds in memory, and a
// writer that must remap waits for every open read transaction. Mapping
// costs address space only; the file grows as data is written.
const initialMmapSize = 1 << 30 * (strconv.IntSize / 64)

// errUnusable marks an error that means the thing at the database path
// cannot serve as the database: it is moved aside and a new one created.
var errUnusable = errors.New("cannot be used")

// Open opens the store at path, creating the file (0600) and its directory
// (0700) when they are absent.
//
// A database that cannot be used — not a bbolt file, truncated, damaged,
// empty, a directory, unreadable, or without this package's metadata — is
// renamed to "<path>.corrupt-<unix seconds>" and kept, and an empty store is
// created in its place. A database written with another schema version is
// emptied in place. Either is recorded in Warnings and logged.
//
// When another handle holds the database for longer than Options.Timeout,
// Open returns an error wrapping ErrLocked and touches nothing.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("index open: empty path")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.LogSize <= 0 {
		opts.LogSize = DefaultLogSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Store{
		path:    filepath.Clean(path),
		logSize: opts.LogSize,
		logger:  opts.Logger,
		now:     opts.Now,
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return nil, fmt.Errorf("index open %s: %w", s.path, err)
	}
	err := s.openDB(opts)
	if errors.Is(err, errUnusable) {
		aside, moveErr := s.moveAside()
		if moveErr != nil {
			return nil, fmt.Errorf("index open %s: %w; moving it aside failed: %v", s.path, err, moveErr)
		}
		s.warn(fmt.Sprintf("index %s: %v; moved aside to %s and rebuilt empty", s.path, err, aside))
		err = s.openDB(opts)
	}
	if err != nil {
		return nil, fmt.Errorf("index open %s: %w", s.path, err)
	}
	return s, nil
}

// openDB opens s.path with bbolt and checks or initialises the metadata,
// setting s.db, s.instance and the tick. Errors that condemn the file wrap
// errUnusable; bbolt panics and memory faults on a damaged file count as
// such.
func (s *Store) openDB(opts Options) (err error) {
	o := &opener{timeout: opts.Timeout}
	var db *bbolt.DB
	defer func() {
		r := recover()
		if r != nil {
			err = fmt.Errorf("%w: fault while reading it: %v", errUnusable, r)
		}
		if err != nil {
			if db != nil {
				_ = db.Close()
			} else if o.file != nil {
				_ = o.file.Close()
			}
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))

	db, err = bbolt.Open(s.path, 0o600, &bbolt.Options{
		Timeout:         opts.Timeout,
		NoSync:          opts.NoSync,
		OpenFile:        o.open,
		InitialMmapSize: initialMmapSize,
		NoStatistics:    true, // nothing reads them
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return ErrLocked
		}
		if o.file != nil {
			// The file opened and locked; bbolt failed reading it.
			return fmt.Errorf("%w: %w", errUnusable, err)
		}
		return err
	}
	return s.prepare(db, o.file)
}

// prepare checks the metadata of a freshly opened database, initialising
// an empty one and emptying one of another schema version.
func (s *Store) prepare(db *bbolt.DB, file *os.File) error {
	info, err := file.Stat()
	if err != nil {
		return err
	}
	var fresh bool
	err = db.View(func(tx *bbolt.Tx) error {
		if tx.Size() > info.Size() {
			return fmt.Errorf("%w: file holds %d bytes, database needs %d (truncated)", errUnusable, info.Size(), tx.Size())
		}
		m := tx.Bucket([]byte(bucketMeta))
		if m == nil {
			if k, _ := tx.Cursor().First(); k != nil {
				return fmt.Errorf("%w: bucket %q missing", errUnusable, bucketMeta)
			}
			fresh = true
			return nil
		}
		v := m.Get([]byte(keySchema))
		if len(v) != 4 {
			return fmt.Errorf("%w: schema version missing", errUnusable)
		}
		if got := binary.BigEndian.Uint32(v); got != schemaVersion {
			s.warn(fmt.Sprintf("index %s has schema version %d, want %d; rebuilt empty", s.path, got, schemaVersion))
			fresh = true
			return nil
		}
		return checkTx(tx)
	})
	if err != nil {
		return err
	}
	if fresh {
		if err := db.Update(s.initTx); err != nil {
			return err
		}
	}
	return db.View(func(tx *bbolt.Tx) error {
		m := tx.Bucket([]byte(bucketMeta))
		s.instance = string(m.Get([]byte(keyInstance)))
		s.tick.Store(getUint(m, keyTick))
		s.db = db
		return nil
	})
}

// checkTx verifies that a database of the current schema has all its
// buckets and well-formed metadata.
func checkTx(tx *bbolt.Tx) error {
	for _, name := range []string{bucketFiles, bucketLog, bucketState} {
		if tx.Bucket([]byte(name)) == nil {
			return fmt.Errorf("%w: bucket %q missing", errUnusable, name)
		}
	}
	m := tx.Bucket([]byte(bucketMeta))
	if len(m.Get([]byte(keyInstance))) == 0 {
		return fmt.Errorf("%w: instance id missing", errUnusable)
	}
	for _, key := range []string{keyCreated, keyTick, keyFiles, keyLogCount, keyLogFloor} {
		if len(m.Get([]byte(key))) != 8 {
			return fmt.Errorf("%w: meta key %q malformed", errUnusable, key)
		}
	}
	if getUint(m, keyLogFloor) > getUint(m, keyTick) {
		return fmt.Errorf("%w: change log floor beyond the tick", errUnusable)
	}
	return nil
}

// initTx empties the database and lays down the buckets and metadata of
// the current schema under a new instance id.
func (s *Store) initTx(tx *bbolt.Tx) error {
	var names [][]byte
	if err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		names = append(names, append([]byte(nil), name...))
		return nil
	}); err != nil {
		return err
	}
	for _, name := range names {
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
	}
	var m *bbolt.Bucket
	for _, name := range []string{bucketMeta, bucketFiles, bucketLog, bucketState} {
		b, err := tx.CreateBucket([]byte(name))
		if err != nil {
			return err
		}
		if name == bucketMeta {
			m = b
		}
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id) // never fails
	if err := m.Put([]byte(keySchema), binary.BigEndian.AppendUint32(nil, schemaVersion)); err != nil {
		return err
	}
	if err := m.Put([]byte(keyInstance), []byte(hex.EncodeToString(id))); err != nil {
		return err
	}
	if err := putUint(m, keyCreated, uint64(s.now().UnixNano())); err != nil {
		return err
	}
	for _, key := range []string{keyTick, keyFiles, keyLogCount, keyLogFloor} {
		if err := putUint(m, key, 0); err != nil {
			return err
		}
	}
	return nil
}

// moveAside renames the database path to a free "<path>.corrupt-<unix>"
// name and returns that name.
func (s *Store) moveAside() (string, error) {
	base := fmt.Sprintf("%s.corrupt-%d", s.path, s.now().Unix())
	dst := base
	for i := 1; ; i++ {
		_, err := os.Lstat(dst)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		if i > 1000 {
			return "", fmt.Errorf("no free name beside %s", base)
		}
		dst = fmt.Sprintf("%s.%d", base, i)
	}
	if err := os.Rename(s.path, dst); err != nil {
		return "", err
	}
	return dst, nil
}

func (s *Store) warn(msg string) {
	s.warnings = append(s.warnings, msg)
	s.logger.Warn(msg)
}

// opener opens the database file for bbolt and takes its lock before bbolt
// looks at it, so an empty file left by a crash can be told from one just
// created, and no other process's file is ever judged while it is being
// written.
type opener struct {
	timeout time.Duration
	file    *os.File // set once the file is open and locked
}

func (o *opener) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|os.O_CREATE|os.O_EXCL, perm)
	created := err == nil
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(name, flag&^os.O_CREATE, perm)
	}
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w: %w", errUnusable, err)
		}
		return nil, err
	}
	if err := lockFile(f, o.timeout); err != nil {
		_ = f.Close()
		return nil, err
	}
	if !created {
		info, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		switch {
		case !info.Mode().IsRegular():
			_ = f.Close()
			return nil, fmt.Errorf("%w: not a regular file", errUnusable)
		case info.Size() == 0:
			_ = f.Close()
			return nil, fmt.Errorf("%w: empty file", errUnusable)
		}
	}
	o.file = f
	return f, nil
}
