package lint

import (
	"sync"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// Sources reads, once each, the files diagnostics point at: for the
// lines a baseline fingerprints and the lines a terminal shows.
type Sources struct {
	mu    sync.Mutex // guards files
	files map[string]*source
}

type source struct {
	src   []byte
	lines *syntax.LineIndex
}

func newSources() *Sources { return &Sources{files: map[string]*source{}} }

// get returns the file at path, nil when it is not a regular file that can
// be read (a directory, a FIFO, a file too large).
func (s *Sources) get(path string) *source {
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

// Read returns the bytes of the file at path, or nil.
func (s *Sources) Read(path string) []byte {
	if f := s.get(path); f != nil {
		return f.src
	}
	return nil
}

// line returns the text of the 0-based line n of the file at path, without
// its line end; "" when there is none.
func (s *Sources) line(path string, n int) string {
	f := s.get(path)
	if f == nil || n < 0 || n >= f.lines.Lines() {
		return ""
	}
	return string(f.lines.Line(n))
}
