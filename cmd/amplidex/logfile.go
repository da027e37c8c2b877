package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
)

// maxLogSize is the size at which the daemon's log file is rotated: it
// becomes FILE.1 (replacing the one before) and a new FILE begins.
const maxLogSize = 10 << 20

// logFile is the daemon's log when it runs in the background: a file
// capped at max bytes, with one rotated file kept beside it. When redirect
// is set, the process's stdout and stderr follow the current file, so
// that a panic or the runtime's own messages land in it too.
type logFile struct {
	path     string
	max      int64
	redirect bool

	mu   sync.Mutex // guards fields below
	f    *os.File
	size int64
}

// openLogFile opens (appending to) the log file at path.
func openLogFile(path string, max int64, redirect bool) (*logFile, error) {
	l := &logFile{path: path, max: max, redirect: redirect}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// open opens l.path for appending and points stdout and stderr at it when
// l.redirect is set. l.mu is held, or l is not shared yet.
func (l *logFile) open() error {
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
// cap. A write never fails because rotation did: it goes on in the old
// file.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		l.rotate()
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate moves the file to FILE.1 and opens a new one. l.mu is held.
func (l *logFile) rotate() {
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return
	}
	old := l.f
	if err := l.open(); err != nil {
		l.f = old
		return
	}
	old.Close()
}

// Close closes the current file.
func (l *logFile) Close() error {
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
