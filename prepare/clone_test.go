package prepare_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/prepare"
)

// deadPid returns the id of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestStaleClones: holding a repository's lock, a build removes the clone
// directories of processes that are gone and those named without a pid,
// and keeps those of live processes.
func TestStaleClones(t *testing.T) {
	f := newFixture(t)
	c, _ := f.cache(t)
	ensure(t, c, f.manifest)
	repoDirs, err := filepath.Glob(filepath.Join(c.ModulesDir(), "git", "*"))
	if err != nil || len(repoDirs) != 3 {
		t.Fatalf("repositories in the module cache: %q, %v", repoDirs, err)
	}
	dead := deadPid(t)
	names := map[string]bool{ // name → kept
		fmt.Sprintf(".clone-%d-123", dead):        false,
		fmt.Sprintf(".clone-%d-456", os.Getpid()): true,
		".clone-789": false, // an older build's name
	}
	for _, dir := range repoDirs {
		for name := range names {
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, name, "README"), nil)
		}
	}
	// Move every branch, so that the next build clones every repository
	// again.
	for _, repo := range f.repos {
		write(t, filepath.Join(repo, "moved"), []byte("moved\n"))
		gitCommit(t, repo, "move")
	}
	if _, _, err := prepare.Clear(t.Context(), f.home); err != nil {
		t.Fatal(err)
	}
	ensure(t, c, f.manifest)
	for _, dir := range repoDirs {
		for name, kept := range names {
			_, err := os.Stat(filepath.Join(dir, name))
			if kept != (err == nil) {
				t.Errorf("%s: kept %v (%v), want kept %v", filepath.Join(dir, name), err == nil, err, kept)
			}
		}
	}
}
