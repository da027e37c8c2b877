package discovery_test

import (
	"os"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
)

// TestREADMEListsEveryCode keeps the README's table of diagnostic codes
// complete.
func TestREADMEListsEveryCode(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range diag.Codes {
		if !strings.Contains(string(b), "| `"+c.Code+"` | "+string(c.Severity)+" |") {
			t.Errorf("README.md does not list %s (%s)", c.Code, c.Severity)
		}
	}
}
