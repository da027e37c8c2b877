package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/query"
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

// TestVSCodeManifestFixAll: the extension declares the server's fix-all
// kind (query.ActionFixAll) as a code action, in the array form VS Code
// reads, so that editor.codeActionsOnSave offers it; it contributes the
// Show Logs command, and no longer the polling interval of the status.
func TestVSCodeManifestFixAll(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "editors", "vscode", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Contributes struct {
			CodeActions []struct {
				Languages []string `json:"languages"`
				Actions   []struct {
					Kind  string `json:"kind"`
					Title string `json:"title"`
				} `json:"actions"`
			} `json:"codeActions"`
			Commands []struct {
				Command string `json:"command"`
			} `json:"commands"`
			Configuration struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	declared := false
	for _, ca := range m.Contributes.CodeActions {
		for _, a := range ca.Actions {
			if a.Kind == query.ActionFixAll && a.Title != "" && slices.Contains(ca.Languages, "markdown") {
				declared = true
			}
		}
	}
	if !declared {
		t.Errorf("package.json declares no code action %s for markdown: %+v", query.ActionFixAll, m.Contributes.CodeActions)
	}
	if !slices.ContainsFunc(m.Contributes.Commands, func(c struct {
		Command string `json:"command"`
	}) bool {
		return c.Command == "amplidex.showLogs"
	}) {
		t.Error("package.json contributes no amplidex.showLogs command")
	}
	if _, ok := m.Contributes.Configuration.Properties["amplidex.statusInterval"]; ok {
		t.Error("package.json still has amplidex.statusInterval: the status follows the server's notifications")
	}
}
