package daemon

import (
	"runtime/debug"
	"testing"
)

// gcPercent returns the collector's target without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestGCTargetRaisedWhileReading: a daemon with an idle target runs at
// Go's default while any registration reads, and at its idle target once
// the last one is done; one without leaves GOGC alone.
func TestGCTargetRaisedWhileReading(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	debug.SetGCPercent(77)
	var none gcTarget
	none.settle(0)
	none.read()()
	if got := gcPercent(); got != 77 {
		t.Fatalf("a daemon without a target changed GOGC to %d", got)
	}

	var g gcTarget
	g.settle(50)
	if got := gcPercent(); got != 50 {
		t.Fatalf("idle target %d, want 50", got)
	}
	first := g.read()
	second := g.read()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target %d while reading, want 100", got)
	}
	first()
	first() // twice: counted once
	if got := gcPercent(); got != 100 {
		t.Fatalf("target %d while one registration still reads, want 100", got)
	}
	second()
	if got := gcPercent(); got != 50 {
		t.Fatalf("target %d once every registration is done, want 50", got)
	}
	// A target set while one reads takes effect when it is done.
	done := g.read()
	g.settle(40)
	if got := gcPercent(); got != 100 {
		t.Fatalf("target %d while reading after settle, want 100", got)
	}
	done()
	if got := gcPercent(); got != 40 {
		t.Fatalf("target %d after the read, want the new idle 40", got)
	}
}
