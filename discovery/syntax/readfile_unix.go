//go:build unix

package syntax

import (
	"io/fs"
	"syscall"
)

// ReadFileInto is ReadFile with a positive limit, reading into buf when it is
// large enough (into new memory otherwise). It calls the system
// directly: open, fstat, read, close. An os.File would also try to
// register the descriptor with the network poller (a failing system call
// for every regular file) and set a finalizer. The errors are those the
// os package returns.
//
// A read that brings the bytes read to the size fstat gave, short of what
// was asked for, ends the reading: the file held no more then, and one
// more read to see its end would cost a system call per file for nothing.
// A file that grows, or holds more than fstat said, is read on to its end
// (or past the limit), but when a read stops exactly at that size, as a
// pseudo-file's might.
func ReadFileInto(path string, limit int64, buf []byte) ([]byte, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if m := statMode(uint32(st.Mode)); !m.IsRegular() {
		return nil, notRegular(path, m)
	}
	if st.Size > limit {
		return nil, tooLarge(path, st.Size, limit)
	}
	// The size may change under us: read one byte more than the limit to
	// tell a file that grew.
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, st.Size+1)
	}
	buf = buf[:0]
	for {
		var n int
		err := retryEINTR(func() (err error) {
			n, err = syscall.Read(fd, buf[len(buf):cap(buf)])
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, grewPast(path, limit)
		}
		if n == 0 || int64(len(buf)) == st.Size && len(buf) < cap(buf) {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// retryEINTR calls f again as long as it fails with EINTR.
func retryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// statMode converts the file type bits of a stat mode into an fs.FileMode
// (permissions left out), as the os package does: a type it does not know
// counts as a regular file.
func statMode(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return 0
}
