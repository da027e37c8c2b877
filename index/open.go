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
	"strings"
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

// errNotWritable marks an error opening an existing database file for
// writing that opening it read-only may avoid: permission denied, or a
// read-only file system.
var errNotWritable = errors.New("cannot be written")

// Open opens the store at path, creating the file (0600) and its directory
// (0700) when they are absent.
//
// A database that cannot be used — not a bbolt file, truncated, damaged,
// empty, a directory, unreadable, or without this package's metadata — is
// renamed to "<path>.corrupt-<unix seconds>" and kept, and an empty store is
// created in its place. Only the newest such copy is kept: moving a
// database aside removes the regular files named "<path>.corrupt-*" that
// earlier moves left. A database written with another schema version is
// emptied in place. Each of these is recorded in Warnings and logged.
//
// A sound database file that can be read but not written (its mode, or a
// read-only file system) is opened read-only rather than moved aside:
// ReadOnly reports true, Warnings says why, and Apply and SetMeta return
// ErrReadOnly. When such a file has another schema version or no metadata
// yet, the store cannot empty it and reads as empty instead.
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
	err := s.openDB(opts, false)
	var notWritable error
	if errors.Is(err, errNotWritable) {
		notWritable = err
		err = s.openDB(opts, true)
	}
	if errors.Is(err, errUnusable) {
		aside, removed, moveErr := s.moveAside()
		if moveErr != nil {
			return nil, fmt.Errorf("index open %s: %w; moving it aside failed: %v", s.path, err, moveErr)
		}
		msg := fmt.Sprintf("index %s: %v; moved aside to %s and rebuilt empty", s.path, err, aside)
		if removed > 0 {
			msg += fmt.Sprintf(" (older copies removed: %d)", removed)
		}
		s.warn(msg)
		notWritable = nil
		err = s.openDB(opts, false)
	}
	if err != nil {
		return nil, fmt.Errorf("index open %s: %w", s.path, err)
	}
	if notWritable != nil {
		s.warn(fmt.Sprintf("index %s: %v; opened read-only, so changes are not saved", s.path, notWritable))
	}
	return s, nil
}

// openDB opens s.path with bbolt, read-only when readOnly is set, and
// checks or initialises the metadata, setting s.db, s.instance, the tick
// and the read-only state. Errors that condemn the file wrap errUnusable;
// bbolt panics and memory faults on a damaged file count as such. An
// existing file that cannot be opened for writing gives an error wrapping
// errNotWritable.
func (s *Store) openDB(opts Options, readOnly bool) (err error) {
	o := &opener{timeout: opts.Timeout, openFile: opts.openFile}
	if o.openFile == nil {
		o.openFile = os.OpenFile
	}
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
		ReadOnly:        readOnly,
		OpenFile:        o.open,
		InitialMmapSize: initialMmapSize,
		NoStatistics:    !opts.statistics, // only tests read them
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
	return s.prepare(db, o.file, readOnly)
}

// prepare checks the metadata of a freshly opened database, initialising
// an empty one and emptying one of another schema version. A read-only
// database that would need either reads as empty.
func (s *Store) prepare(db *bbolt.DB, file *os.File, readOnly bool) error {
	info, err := file.Stat()
	if err != nil {
		return err
	}
	var (
		fresh bool
		other uint32 // the schema version found, when it is not ours
	)
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
			other, fresh = got, true
			return nil
		}
		return checkTx(tx)
	})
	if err != nil {
		return err
	}
	switch {
	case fresh && readOnly:
		what := "holds no index yet"
		if other != 0 {
			what = fmt.Sprintf("has schema version %d, want %d,", other, schemaVersion)
		}
		s.warn(fmt.Sprintf("index %s %s and cannot be emptied while read-only; the store reads as empty", s.path, what))
		s.db, s.readOnly, s.blank, s.instance = db, true, true, newInstance()
		return nil
	case fresh:
		if other != 0 {
			s.warn(fmt.Sprintf("index %s has schema version %d, want %d; rebuilt empty", s.path, other, schemaVersion))
		}
		if err := db.Update(s.initTx); err != nil {
			return err
		}
	}
	return db.View(func(tx *bbolt.Tx) error {
		m := tx.Bucket([]byte(bucketMeta))
		s.instance = string(m.Get([]byte(keyInstance)))
		s.tick.Store(getUint(m, keyTick))
		s.db, s.readOnly = db, readOnly
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
	if err := m.Put([]byte(keySchema), binary.BigEndian.AppendUint32(nil, schemaVersion)); err != nil {
		return err
	}
	if err := m.Put([]byte(keyInstance), []byte(newInstance())); err != nil {
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

// newInstance returns a new random instance id.
func newInstance() string {
	id := make([]byte, 8)
	_, _ = rand.Read(id) // never fails
	return hex.EncodeToString(id)
}

// moveAside renames the database path to a free "<path>.corrupt-<unix>"
// name and returns that name. It then removes the other regular files
// named "<path>.corrupt-*", as far as it can, and returns how many went:
// the newest copy is enough to study, and each may be as large as the
// database. Directories moved aside are left alone.
func (s *Store) moveAside() (dst string, removed int, err error) {
	base := fmt.Sprintf("%s.corrupt-%d", s.path, s.now().Unix())
	dst = base
	for i := 1; ; i++ {
		_, err := os.Lstat(dst)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", 0, err
		}
		if i > 1000 {
			return "", 0, fmt.Errorf("no free name beside %s", base)
		}
		dst = fmt.Sprintf("%s.%d", base, i)
	}
	if err := os.Rename(s.path, dst); err != nil {
		return "", 0, err
	}
	dir := filepath.Dir(s.path)
	entries, _ := os.ReadDir(dir) // removing older copies is best effort
	prefix := filepath.Base(s.path) + ".corrupt-"
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || name == filepath.Base(dst) || !e.Type().IsRegular() {
			continue
		}
		if os.Remove(filepath.Join(dir, name)) == nil {
			removed++
		}
	}
	return dst, removed, nil
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
	timeout  time.Duration
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
	file     *os.File // set once the file is open and locked
}

// open opens name for bbolt. For writing, it creates the file when it is
// absent, and reports an existing file it may not write with an error
// wrapping errNotWritable. Read-only, it creates nothing and does not
// block on a FIFO.
func (o *opener) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	var (
		f       *os.File
		err     error
		created bool
	)
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		f, err = o.openFile(name, flag&^os.O_CREATE|syscall.O_NONBLOCK, perm)
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w: %w", errUnusable, err) // unreadable
		}
	} else {
		f, err = o.openFile(name, flag|os.O_CREATE|os.O_EXCL, perm)
		created = err == nil
		if err != nil {
			createErr := err
			f, err = o.openFile(name, flag&^os.O_CREATE, perm)
			switch {
			case errors.Is(err, fs.ErrNotExist) && !errors.Is(createErr, fs.ErrExist):
				return nil, createErr // absent, and it cannot be created
			case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
				return nil, fmt.Errorf("%w: %w", errNotWritable, err)
			}
		}
	}
	if err != nil {
		if errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ELOOP) {
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
