package service

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
)

// MaxLogSize is the size at which the daemon's log file is rotated: it
// becomes FILE.1 (replacing the one before) and a new FILE begins.
const MaxLogSize = 10 << 20

// LogFile is the daemon's log when it runs in the background: a file
// capped at max bytes, with one rotated file kept beside it. When redirect
// is set, the process's stdout and stderr follow the current file, so
// that a panic or the runtime's own messages land in it too.
//
// The cap holds even when rotation fails (FILE.1 is a directory, say):
// the file then starts again, with a line saying why; should it not even
// be emptied, what would pass the cap is dropped, and said once on stderr
// unless stderr is the log itself.
type LogFile struct {
	path     string
	max      int64
	redirect bool

	mu   sync.Mutex // guards fields below
	f    *os.File
	size int64
	// full is set while the file is at its cap and can neither be rotated
	// nor emptied: writes are dropped.
	full bool
}

// OpenLogFile opens (appending to) the log file at path.
func OpenLogFile(path string, max int64, redirect bool) (*LogFile, error) {
	l := &LogFile{path: path, max: max, redirect: redirect}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// open opens l.path for appending and points stdout and stderr at it when
// l.redirect is set. l.mu is held, or l is not shared yet.
func (l *LogFile) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open log: %w", err)
	}
	if l.redirect {
		if err := redirectOutput(f); err != nil {
			f.Close()
			return fmt.Errorf("open log: %w", err)
		}
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating the file first when p would take it past the
// cap. When the file can neither be rotated nor emptied, p is dropped and
// Write fails.
func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		if !l.rotate() {
			return 0, fmt.Errorf("log %s is at its cap of %d bytes and can be neither rotated nor emptied", l.path, l.max)
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate moves the file to FILE.1 and opens a new one. When that fails,
// it empties the file and writes why at its start. It reports whether the
// file has room again. l.mu is held.
func (l *LogFile) rotate() bool {
	err := os.Rename(l.path, l.path+".1")
	if err == nil {
		old := l.f
		if err = l.open(); err == nil {
			old.Close()
			l.full = false
			return true
		}
		// The file is FILE.1 now, and stays the one written: emptied.
	}
	if terr := l.f.Truncate(0); terr != nil {
		if !l.full && !l.redirect {
			fmt.Fprintf(os.Stderr, "amplidex: log %s is at its cap and cannot be rotated (%v) or emptied (%v); what follows is dropped\n",
				l.path, err, terr)
		}
		l.full = true
		return false
	}
	l.full = false
	n, _ := fmt.Fprintf(l.f, "amplidex: the log could not be rotated (%v); it starts again here\n", err)
	l.size = int64(n)
	return true
}

// Close closes the current file.
func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// lastLogLine returns the last non-empty line of the file at path (of its
// last 4 KiB), or "".
func lastLogLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, tail))
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	return string(bytes.TrimSpace(lines[len(lines)-1]))
}
