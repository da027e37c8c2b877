package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestPreCommitHooks keeps .pre-commit-hooks.yaml, which pre-commit reads
// from the repository's top, in step with check: the hook runs check in
// isolation with --ignore-unknown, builds with Go, and hands it the files
// check reads, context files (for their mentions) included. Its example,
// and the README's, pin rev to something that exists: a commit SHA, until
// there is a release tag.
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
	if h.ID != "amplidex-check" || h.Name == "" || h.Language != "golang" || h.Entry != "amplidex check --isolated --ignore-unknown" {
		t.Errorf("hook %+v: want id amplidex-check, language golang, entry amplidex check --isolated --ignore-unknown", h)
	}
	re, err := regexp.Compile(h.Files)
	if err != nil {
		t.Fatalf("files %q: %v", h.Files, err)
	}
	for _, f := range []string{"profiles/dev.md", "agents/helper.md", "pkg/agents/helper.md", "bundle.md", "x/bundle.md",
		"pyproject.toml", "pkg/pyproject.toml", ".amplifier/collections.lock", "collections.lock",
		"context/a.md", "context/sub/b.md", "pkg/context/guide.md"} {
		if !re.MatchString(f) {
			t.Errorf("files %q does not match %s", h.Files, f)
		}
	}
	for _, f := range []string{"README.md", "profiles/sub/x.md", "context/a.txt", "src/main.py", "agents.md", "mybundle.md", "pyproject.toml.bak", "mycontext/a.md"} {
		if re.MatchString(f) {
			t.Errorf("files %q matches %s", h.Files, f)
		}
	}
	if !strings.Contains(string(b), "repo: https://github.com/amplidex/amplidex") {
		t.Errorf(".pre-commit-hooks.yaml does not show how to add it")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{".pre-commit-hooks.yaml": string(b), "README.md": string(readme)} {
		revs := revRE.FindAllStringSubmatch(text, -1)
		if len(revs) == 0 {
			t.Errorf("%s shows no rev:", name)
		}
		for _, m := range revs {
			// There are no release tags yet: a rev must be a commit SHA,
			// and say that it is one until the first tag.
			if !shaRE.MatchString(m[1]) || !strings.Contains(m[2], "a commit SHA until the first release tag") {
				t.Errorf("%s: rev %q %q: want a 40-hex commit SHA, said to be one until the first release tag", name, m[1], m[2])
			}
		}
	}
}

var (
	revRE = regexp.MustCompile(`(?m)^[#\s]*rev:\s*(\S+)\s*(.*)$`)
	shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
)
