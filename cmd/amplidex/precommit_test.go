package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestPreCommitHooks keeps .pre-commit-hooks.yaml, which pre-commit reads
// from the repository's top, in step with check: the hook runs check with
// --ignore-unknown, builds with Go, and hands it the files check reads.
func TestPreCommitHooks(t *testing.T) {
	b, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID       string `yaml:"id"`
		Name     string `yaml:"name"`
		Entry    string `yaml:"entry"`
		Language string `yaml:"language"`
		Files    string `yaml:"files"`
	}
	if err := yaml.Unmarshal(b, &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 {
		t.Fatalf("%d hooks, want 1", len(hooks))
	}
	h := hooks[0]
	if h.ID != "amplidex-check" || h.Name == "" || h.Language != "golang" || h.Entry != "amplidex check --ignore-unknown" {
		t.Errorf("hook %+v: want id amplidex-check, language golang, entry amplidex check --ignore-unknown", h)
	}
	re, err := regexp.Compile(h.Files)
	if err != nil {
		t.Fatalf("files %q: %v", h.Files, err)
	}
	for _, f := range []string{"profiles/dev.md", "agents/helper.md", "pkg/agents/helper.md", "bundle.md", "x/bundle.md",
		"pyproject.toml", "pkg/pyproject.toml", ".amplifier/collections.lock", "collections.lock"} {
		if !re.MatchString(f) {
			t.Errorf("files %q does not match %s", h.Files, f)
		}
	}
	for _, f := range []string{"README.md", "profiles/sub/x.md", "context/a.md", "src/main.py", "agents.md", "mybundle.md", "pyproject.toml.bak"} {
		if re.MatchString(f) {
			t.Errorf("files %q matches %s", h.Files, f)
		}
	}
	if !strings.Contains(string(b), "repo: https://github.com/amplidex/amplidex") {
		t.Errorf(".pre-commit-hooks.yaml does not show how to add it")
	}
}
