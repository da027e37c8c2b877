package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// errNotFixed is wrapped by the error of a file check --fix leaves as it
// is, saying why: one it may not write, one that is not a regular file,
// one that changed since it was read.
var errNotFixed = errors.New("not fixed")

// notFixed is the error for a file check --fix refuses to write.
func notFixed(path, format string, args ...any) error {
	return fmt.Errorf("%s %w: %s", path, errNotFixed, fmt.Sprintf(format, args...))
}

// writeFix writes the fixed text of f over its file, in place: through
// the real path when f.Path is a symbolic link (the link stays a link,
// its target is fixed), and into the same file, so that its owner, mode,
// hard links and extended attributes stay what they were. A file whose
// text is no longer the one the fixes were made from (an edit saved since
// it was read) is left as it is, as is one already as fixed; so is a file
// the user may not write: one whose mode lets nobody write it (even when
// root runs amplidex, who may), one whose permissions or file system
// refuse, one that is not a regular file. Each refusal wraps errNotFixed
// and says why.
//
// opened, when set, is called with the real path once the file is open,
// before its text is compared: tests edit the file there, as an editor
// saving it would.
//
// The text is written over the old one and the file cut to its length,
// then synced; should a write fail, the old text is written back. A
// save that replaces the file (an editor's rename) after it was opened
// keeps the new file, and is reported: the fix went to the file
// replaced. One edit escapes: one written into the same file in the
// instant between the comparison and the write, which no file system
// lets a program rule out without the editor taking a lock.
func writeFix(f FileFix, opened func(target string)) (err error) {
	target, err := filepath.EvalSymlinks(f.Path)
	if err != nil {
		return fmt.Errorf("fix %s: %w", f.Path, err)
	}
	// Said before opening it, which the system would refuse too, but
	// not to root.
	if fi, err := os.Stat(target); err == nil && readOnly(fi) {
		return notFixed(f.Path, "%s is read-only (mode %04o); make it writable to fix it", target, fi.Mode().Perm())
	}
	file, err := openToFix(target)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return notFixed(f.Path, "you may not write %s (%v)", target, errors.Unwrap(err))
	case isReadOnlyFS(err):
		return notFixed(f.Path, "%s is on a read-only file system", target)
	case isLoop(err):
		return notFixed(f.Path, "%s became a symbolic link while it was fixed", target)
	case err != nil:
		return fmt.Errorf("fix %s: %w", f.Path, err)
	}
	defer func() {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("fix %s: %w", f.Path, cerr)
		}
	}()
	fi, err := file.Stat()
	if err != nil {
		return fmt.Errorf("fix %s: %w", f.Path, err)
	}
	if !fi.Mode().IsRegular() {
		return notFixed(f.Path, "%s is not a regular file", target)
	}
	if readOnly(fi) {
		return notFixed(f.Path, "%s is read-only (mode %04o); make it writable to fix it", target, fi.Mode().Perm())
	}
	if opened != nil {
		opened(target)
	}
	cur, err := io.ReadAll(io.LimitReader(file, syntax.DefaultMaxFileSize+1))
	if err != nil {
		return fmt.Errorf("fix %s: %w", f.Path, err)
	}
	switch {
	case bytes.Equal(cur, f.new):
		return nil // fixed already, through another name of the same file
	case !bytes.Equal(cur, f.old):
		return notFixed(f.Path, "it changed since it was read; run check --fix again")
	}
	if err := overwrite(file, f.new); err != nil {
		if rerr := overwrite(file, f.old); rerr != nil {
			return fmt.Errorf("fix %s: %w; writing its old text back: %v", f.Path, err, rerr)
		}
		return fmt.Errorf("fix %s: %w (its old text is back)", f.Path, err)
	}
	if now, err := os.Stat(target); err != nil || !os.SameFile(fi, now) {
		return notFixed(f.Path, "%s was replaced while it was fixed; the file now there is left as it is", target)
	}
	return nil
}

// overwrite makes text the whole content of file, and syncs it.
func overwrite(file *os.File, text []byte) error {
	if _, err := file.WriteAt(text, 0); err != nil {
		return err
	}
	if err := file.Truncate(int64(len(text))); err != nil {
		return err
	}
	return file.Sync()
}

// readOnly reports whether fi's mode lets nobody write the file.
func readOnly(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o222 == 0 }
