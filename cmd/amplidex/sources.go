package main

import (
	"sync"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// sources reads, once each, the files diagnostics point at: for the
// lines a baseline fingerprints and the lines a terminal shows.
type sources struct {
	mu    sync.Mutex // guards files
	files map[string]*source
}

type source struct {
	src   []byte
	lines *syntax.LineIndex
}

func newSources() *sources { return &sources{files: map[string]*source{}} }

// get returns the file at path, nil when it is not a regular file that can
// be read (a directory, a FIFO, a file too large).
func (s *sources) get(path string) *source {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[path]; ok {
		return f
	}
	var f *source
	if src, err := syntax.ReadFile(path, syntax.DefaultMaxFileSize); err == nil {
		f = &source{src: src, lines: syntax.NewLineIndex(src)}
	}
	s.files[path] = f
	return f
}

// read returns the bytes of the file at path, or nil.
func (s *sources) read(path string) []byte {
	if f := s.get(path); f != nil {
		return f.src
	}
	return nil
}

// line returns the text of the 0-based line n of the file at path, without
// its line end; "" when there is none.
func (s *sources) line(path string, n int) string {
	f := s.get(path)
	if f == nil || n < 0 || n >= f.lines.Lines() {
		return ""
	}
	return string(f.lines.Line(n))
}
