package watcher

import (
	"strings"
	"testing"
	"unsafe"
)

// TestPathsFromChunks: joined paths read as joinPath's, and consecutive
// ones sit side by side in one chunk; a path too long for one goes to the
// heap as any string.
func TestPathsFromChunks(t *testing.T) {
	var ps paths
	first := ps.join("/home/u/.amplifier/collections", "alpha")
	second := ps.join("/", "beta")
	if first != joinPath("/home/u/.amplifier/collections", "alpha") || second != joinPath("/", "beta") {
		t.Fatalf("joined %q and %q", first, second)
	}
	if unsafe.StringData(second) != (*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(first)), len(first))) {
		t.Error("two paths joined one after the other are not side by side in a chunk")
	}
	long := strings.Repeat("x", pathChunk)
	if got := ps.join("/d", long); got != "/d/"+long {
		t.Errorf("a long path joined as %d bytes", len(got))
	}
	if len(ps.chunk) != len(first)+len(second) {
		t.Errorf("the chunk holds %d bytes, want the two short paths' %d", len(ps.chunk), len(first)+len(second))
	}
}

// TestLogicalOfSharesThePath: a mount whose logical path is its real one
// reports a path as the very string it was given (no copy, so that a
// listener keeping it keeps the walk's chunk), and one reached through a
// link translates it.
func TestLogicalOfSharesThePath(t *testing.T) {
	var ps paths
	p := ps.join("/r/c", "agents")
	same := &mount{real: "/r", logical: "/r"}
	if got := same.logicalOf(p); got != p || unsafe.StringData(got) != unsafe.StringData(p) {
		t.Errorf("logicalOf(%q) = %q, a copy", p, got)
	}
	linked := &mount{real: "/r", logical: "/l"}
	if got := linked.logicalOf(p); got != "/l/c/agents" {
		t.Errorf("through a link, logicalOf(%q) = %q", p, got)
	}
	if got := linked.logicalOf("/r"); got != "/l" {
		t.Errorf("through a link, logicalOf of the mount = %q", got)
	}
}
