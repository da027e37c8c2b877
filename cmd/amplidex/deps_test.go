package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCostlyInitialisation: the command links no package whose
// initialisation is costly and that it does without. Every process of the
// command pays for it at start, a whole-process query (about 4 ms)
// included.
func TestNoCostlyInitialisation(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"] {
		t.Fatalf("go list -deps named %d packages, not the daemon's", len(deps))
	}
	// runtime/metrics is linked, and every process builds its table of
	// metrics (about 0.1 ms): the daemon's memory policy reads the heap's
	// allocations from it, which does not stop the world as
	// runtime.ReadMemStats does.
	for pkg, why := range map[string]string{
		"github.com/Masterminds/semver/v3": "compiles its regular expressions, about 0.5 ms",
	} {
		if deps[pkg] {
			t.Errorf("the command links %s, whose initialisation %s", pkg, why)
		}
	}
}
