//go:build unix

package service

import (
	"os"
	"testing"
)

// TestFDOpen: an open descriptor is open, and one closed is not.
func TestFDOpen(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fd := int(r.Fd())
	if !fdOpen(fd) {
		t.Errorf("descriptor %d of an open pipe is not open", fd)
	}
	r.Close()
	if fdOpen(fd) {
		t.Errorf("descriptor %d is open after its close", fd)
	}
	if fdOpen(-1) {
		t.Error("descriptor -1 is open")
	}
}
