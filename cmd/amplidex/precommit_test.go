package main

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// hook is one hook of .pre-commit-hooks.yaml, with the keys pre-commit
// reads to decide whether and how to run it.
type hook struct {
	ID            string   `yaml:"id"`
	Name          string   `yaml:"name"`
	Entry         string   `yaml:"entry"`
	Language      string   `yaml:"language"`
	Files         string   `yaml:"files"`
	Exclude       string   `yaml:"exclude"`
	Args          []string `yaml:"args"`
	PassFilenames *bool    `yaml:"pass_filenames"`
	AlwaysRun     bool     `yaml:"always_run"`
}

// readHooks reads the repository's .pre-commit-hooks.yaml.
func readHooks() ([]byte, []hook, error) {
	b, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		return nil, nil, err
	}
	var hooks []hook
	err = yaml.Unmarshal(b, &hooks)
	return b, hooks, err
}

// runHook runs the hook of .pre-commit-hooks.yaml in the script's working
// directory, a git repository, as pre-commit runs it at commit time: on
// the staged files that are not deleted (git diff --staged
// --diff-filter=ACMRTUXB), kept when files matches and exclude does not;
// skipped when none is kept unless always_run; with the entry split as a
// shell splits it, then args, then the files unless pass_filenames is
// false. run-hook CODE checks its exit code.
func runHook(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: run-hook CODE")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	_, hooks, err := readHooks()
	ts.Check(err)
	if len(hooks) != 1 {
		ts.Fatalf("%d hooks, want 1", len(hooks))
	}
	h := hooks[0]
	cmd := exec.Command("git", "diff", "--staged", "--name-only", "--no-ext-diff", "-z", "--diff-filter=ACMRTUXB")
	cmd.Dir = ts.MkAbs(".")
	out, err := cmd.Output()
	ts.Check(err)
	files, err := regexp.Compile(h.Files)
	ts.Check(err)
	exclude := regexp.MustCompile("^$")
	if h.Exclude != "" {
		exclude, err = regexp.Compile(h.Exclude)
		ts.Check(err)
	}
	var staged []string
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if f != "" && files.MatchString(f) && !exclude.MatchString(f) {
			staged = append(staged, f)
		}
	}
	ts.Logf("staged files the hook matches: %q", staged)
	if len(staged) == 0 && !h.AlwaysRun {
		ts.Logf("hook skipped: no files to check")
		if want != 0 {
			ts.Fatalf("hook skipped, want exit %d", want)
		}
		return
	}
	argv := append(strings.Fields(h.Entry), h.Args...)
	if h.PassFilenames == nil || *h.PassFilenames {
		argv = append(argv, staged...)
	}
	ts.Logf("hook runs: %q", argv)
	got := 0
	if err := ts.Exec(argv[0], argv[1:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", argv[0], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("hook exited %d, want %d", got, want)
	}
}

// TestPreCommitHooks keeps .pre-commit-hooks.yaml, which pre-commit reads
// from the repository's top, in step with check: the hook runs check in
// isolation with --ignore-unknown, builds with Go, and hands it the files
// check reads, context files (for their mentions) included, whose
// collections it checks whole (--whole); it runs when no such file is
// staged too (always_run), as a commit that deletes one stages none.
// (The script precommit.txtar runs it as pre-commit does.) Its example,
// and the README's, pin rev to something that exists: a commit SHA, until
// there is a release tag.
func TestPreCommitHooks(t *testing.T) {
	b, hooks, err := readHooks()
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 {
		t.Fatalf("%d hooks, want 1", len(hooks))
	}
	h := hooks[0]
	const entry = "amplidex check --isolated --ignore-unknown --whole"
	if h.ID != "amplidex-check" || h.Name == "" || h.Language != "golang" || h.Entry != entry || !h.AlwaysRun {
		t.Errorf("hook %+v: want id amplidex-check, language golang, entry %s, always_run", h, entry)
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
