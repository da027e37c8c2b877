package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestVSCodeRestrictedSettings: no setting a repository's
// .vscode/settings.json could set chooses the program the extension
// runs, its arguments or its environment, unless the user trusts the
// workspace: each such setting is machine-scoped (a workspace cannot set
// it) or restricted (VS Code ignores the workspace's value until it is
// trusted), as the extensions of ruff, Go and rust-analyzer do.
func TestVSCodeRestrictedSettings(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "editors", "vscode", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Capabilities struct {
			UntrustedWorkspaces struct {
				Supported                any      `json:"supported"`
				RestrictedConfigurations []string `json:"restrictedConfigurations"`
			} `json:"untrustedWorkspaces"`
		} `json:"capabilities"`
		Contributes struct {
			Configuration struct {
				Properties map[string]struct {
					Scope string `json:"scope"`
				} `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	uw := m.Capabilities.UntrustedWorkspaces
	if uw.Supported != "limited" {
		t.Errorf("capabilities.untrustedWorkspaces.supported = %v, want \"limited\"", uw.Supported)
	}
	// What names a program, a path or an environment.
	runs := regexp.MustCompile(`(?i)(path|env|command|args|executable|binary|interpreter)`)
	for _, name := range []string{"amplidex.path", "amplidex.env"} {
		if _, ok := m.Contributes.Configuration.Properties[name]; !ok {
			t.Errorf("package.json has no setting %s", name)
		}
	}
	for name, p := range m.Contributes.Configuration.Properties {
		if !runs.MatchString(name) {
			continue
		}
		machine := p.Scope == "machine" || p.Scope == "application"
		if !machine && !slices.Contains(uw.RestrictedConfigurations, name) {
			t.Errorf("%s (scope %q) may be set by a workspace and is not in restrictedConfigurations", name, p.Scope)
		}
	}
}
