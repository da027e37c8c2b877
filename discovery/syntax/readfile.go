package syntax

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/amplidex/amplidex/discovery/diag"
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
	return ReadFileInto(path, limit, nil)
}

// notRegular is the error of ReadFile for a file of mode m.
func notRegular(path string, m fs.FileMode) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, ModeName(m))}
}

// tooLarge is the error of ReadFile for a file of size bytes, over limit.
func tooLarge(path string, size, limit int64) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than the %d read", ErrTooLarge, size, limit)}
}

// grewPast is the error of ReadFile for a file that grew past limit while
// it was read.
func grewPast(path string, limit int64) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than the %d read", ErrTooLarge, limit)}
}

// ModeName says what kind of file a mode is, for messages.
func ModeName(m fs.FileMode) string {
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

// DefaultMaxFileSize is the largest document a Loader reads.
const DefaultMaxFileSize = 8 << 20

// ReadProblem is the warning that says why the file at path was not
// read, err being the error of ReadFile (or of a stat before it): a file
// that is not regular, one too large, or one that cannot be read.
func ReadProblem(path string, err error) diag.Diagnostic {
	code, msg := diag.CodeUnreadable, "cannot read file: "+errText(err)
	switch {
	case errors.Is(err, ErrNotRegular):
		code, msg = diag.CodeNotRegular, "not read: "+errText(err)
	case errors.Is(err, ErrTooLarge):
		code, msg = diag.CodeFileTooLarge, "not read: "+errText(err)
	}
	return diag.Diagnostic{Code: code, Severity: diag.SeverityWarning, Path: path, Message: msg}
}

// errText is err's message without the path os errors repeat.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
