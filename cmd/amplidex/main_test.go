package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"amplidex": func() {
			app := NewApp(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
			os.Exit(app.Run(context.Background(), os.Args[1:]))
		},
	})
}

// TestScripts runs the end-to-end scripts in testdata/script. Each runs in
// its own $WORK with HOME, AMPLIDEX_HOME and XDG_* inside it, and with
// $CORPUS set to $AMPLIDEX_CORPUS (scripts that need it skip without it).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("AMPLIDEX_HOME", filepath.Join(work, ".amplidex"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, ".state"))
			env.Setenv("XDG_RUNTIME_DIR", filepath.Join(work, ".run"))
			env.Setenv("AMPLIFIER_AGENT_HOME", filepath.Join(work, ".agent"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("CORPUS", os.Getenv("AMPLIDEX_CORPUS"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "corpus":
				return os.Getenv("AMPLIDEX_CORPUS") != "", nil
			}
			return false, nil
		},
	})
}
