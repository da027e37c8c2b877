package discovery

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is returned by ReadFile when the path names something
// other than a regular file (a FIFO, a socket, a device, a directory),
// directly or through a symbolic link.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned by ReadFile when a file holds more bytes than the
// limit it was given.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads the regular file at path, which may be a symbolic link to
// one, and at most limit bytes of it (DefaultMaxFileSize when limit is 0).
// It never blocks on a FIFO and never reads an endless device: the file is
// opened without blocking, checked to be regular on the open descriptor
// (so a swap after a stat cannot fool it), and read through a limit. The
// errors wrap ErrNotRegular or ErrTooLarge, and name the path.
func ReadFile(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxFileSize
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, modeName(fi.Mode()))}
	}
	if fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than the %d read", ErrTooLarge, fi.Size(), limit)}
	}
	// The size may change under us: read one byte more than the limit to
	// tell a file that grew.
	buf := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than the %d read", ErrTooLarge, limit)}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// modeName says what kind of file a mode is, for messages.
func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}
