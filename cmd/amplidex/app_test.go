package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestTopCommandNames: each entry of topCommands builds the command it is
// named after, and the whole tree holds them all.
func TestTopCommandNames(t *testing.T) {
	getenv, _ := askEnv(t)
	a := NewApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, getenv)
	root := a.rootCmd(nil)
	for _, c := range topCommands {
		if got := c.make(a).Name(); got != c.name {
			t.Errorf("topCommands names %q a command named %q", c.name, got)
		}
		if cmd, _, err := root.Find([]string{c.name}); err != nil || cmd.Name() != c.name {
			t.Errorf("the whole tree has no command %q: %v", c.name, err)
		}
	}
	if n := len(root.Commands()); n != len(topCommands)+1 { // and cobra's completion
		t.Errorf("the whole tree has %d commands, topCommands %d", n, len(topCommands))
	}
}

// TestOneCommandTree: a command line that names one top-level command
// runs the same with the tree of that command alone as with the whole
// tree: the same output, errors and exit code.
func TestOneCommandTree(t *testing.T) {
	var lines [][]string
	for _, c := range topCommands {
		lines = append(lines, []string{c.name, "--help"}, []string{"--log-level", "warn", c.name, "--bogus"})
	}
	lines = append(lines,
		[]string{"query"},
		[]string{"query", "nope"},
		[]string{"query", "resolve"},
		[]string{"query", "resolve", "--help"},
		[]string{"--project=/nowhere", "query", "resolve", "a", "b"},
		[]string{"--config", "/nowhere.toml", "cache"},
		[]string{"query", "--version"},
		[]string{"rule", "metadata/missing-pyproject"},
		[]string{"schema", "profile"},
		[]string{"version"},
		[]string{"--log-level"},
	)
	for _, args := range lines {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			getenv, _ := askEnv(t)
			run := func(whole bool) (code int, stdout, stderr string) {
				var out, errb bytes.Buffer
				a := NewApp(strings.NewReader(""), &out, &errb, getenv)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				root := a.rootCmd(args)
				if whole {
					root = a.rootCmd(nil)
				}
				return a.run(ctx, root, args), out.String(), errb.String()
			}
			code, stdout, stderr := run(false)
			wcode, wstdout, wstderr := run(true)
			if code != wcode || stdout != wstdout || stderr != wstderr {
				t.Errorf("one command: exit %d\n%s%s\nwhole tree: exit %d\n%s%s", code, stdout, stderr, wcode, wstdout, wstderr)
			}
		})
	}
}

// TestNamedCommand: the command a command line names is found after the
// global flags, and only a plain name is.
func TestNamedCommand(t *testing.T) {
	getenv, _ := askEnv(t)
	a := NewApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, getenv)
	pf := a.rootCmd(nil).PersistentFlags()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "resolve", "x"}, "query"},
		{[]string{"--project", "/p", "--log-level=debug", "check", "."}, "check"},
		{[]string{"--config=/c.toml", "status"}, "status"},
		{nil, ""},
		{[]string{"help", "query"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"__complete", "query", ""}, ""},
		{[]string{"qeury"}, ""},
		{[]string{"-h"}, ""},
		{[]string{"--version"}, ""},
		{[]string{"--project"}, ""},
		{[]string{"--unknown", "query"}, ""},
		{[]string{"--", "query"}, ""},
	} {
		got := ""
		if i := namedCommand(tc.args, pf); i >= 0 {
			got = topCommands[i].name
		}
		if got != tc.want {
			t.Errorf("namedCommand(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
