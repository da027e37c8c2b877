package watcher

import (
	"os"
	"path/filepath"
	"unsafe"
)

// pathChunk is the size of a chunk of paths: large enough to have a span
// of its own.
const pathChunk = 64 << 10

// paths hands out the paths of the directories a walk watches from chunks
// of pathChunk bytes. A watched directory's path lives as long as its
// watch (fsnotify keeps it, and the tree of watched directories shares
// it); made one at a time among the garbage of a scan, tens of thousands
// of them would be scattered over spans that the scan mostly freed, which
// the runtime can then neither reuse whole nor give back. From chunks,
// they sit together.
//
// Invariants: a path is a string over chunk memory that is never written
// again once handed out; a chunk lives while any of its paths does, so a
// long life of watches added and removed may keep some chunks partly
// dead (at most one chunk per live path, and in practice a few). Not safe
// for concurrent use: the Watcher's goroutine owns it.
type paths struct {
	chunk []byte
}

// join returns dir and name joined as joinPath joins them, in chunk
// memory.
func (ps *paths) join(dir, name string) string {
	sep := 1
	if dir != "" && os.IsPathSeparator(dir[len(dir)-1]) {
		sep = 0
	}
	n := len(dir) + sep + len(name)
	if n > pathChunk/8 {
		return joinPath(dir, name) // rare: not worth a chunk's room
	}
	if cap(ps.chunk)-len(ps.chunk) < n {
		ps.chunk = make([]byte, 0, pathChunk)
	}
	start := len(ps.chunk)
	ps.chunk = append(ps.chunk, dir...)
	if sep == 1 {
		ps.chunk = append(ps.chunk, filepath.Separator)
	}
	ps.chunk = append(ps.chunk, name...)
	b := ps.chunk[start:len(ps.chunk):len(ps.chunk)]
	return unsafe.String(unsafe.SliceData(b), len(b))
}
