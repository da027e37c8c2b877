package prepare_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/amplidex/amplidex/prepare"
)

// TestBuildErrorCauses: thirty modules that fail for one reason, each
// with its own repository in the message, are one cause; another reason
// is another cause, in the order first met.
func TestBuildErrorCauses(t *testing.T) {
	be := &prepare.BuildError{Manifest: "/b/bundle.md"}
	for i := range 30 {
		url := fmt.Sprintf("https://nohost.invalid/org/m%d", i)
		be.Modules = append(be.Modules, &prepare.ModuleError{Module: fmt.Sprintf("tool-%d", i), Source: "git+" + url + "@main",
			Err: fmt.Errorf("git ls-remote: exit status 128: fatal: unable to access '%s/': Could not resolve host: nohost.invalid", url)})
		if i == 3 {
			be.Modules = append(be.Modules, &prepare.ModuleError{Module: "tool-local", Source: "./modules/gone",
				Err: errors.New("stat ./modules/gone: no such file or directory")})
		}
	}
	causes := be.Causes()
	if len(causes) != 2 {
		for _, c := range causes {
			t.Logf("%d: %s", len(c.Modules), c.Message)
		}
		t.Fatalf("%d causes, want 2", len(causes))
	}
	if c := causes[0]; len(c.Modules) != 30 || c.Modules[0].Module != "tool-0" ||
		c.Message != "git ls-remote: exit status 128: fatal: unable to access '<repository>': Could not resolve host: nohost.invalid" {
		t.Errorf("first cause: %d modules, %q", len(c.Modules), c.Message)
	}
	if c := causes[1]; len(c.Modules) != 1 || c.Message != "stat <path>: no such file or directory" {
		t.Errorf("second cause: %d modules, %q", len(c.Modules), c.Message)
	}
}
