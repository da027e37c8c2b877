package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnifiedHunks: changes far apart are hunks of their own, changes
// whose context touches are one, and a last line without a newline says
// so.
// TestWriteFix: a fix is written in place, through a link into its
// target, and only over the text it was made from; an edit saved since
// the file was read, or once it is opened, is kept and said, and a file
// nobody may write is left as it is.
// TestWriteFixLink: a fix of a link is written into its target, and the
// link stays a link.
// TestCheckFixConcurrentEdit: an edit saved while check --fix runs, after
// it read the file, is never lost: the file is left as the edit made it,
// and check says so and exits 1.
func TestCheckFixConcurrentEdit(t *testing.T) {
	for _, how := range []string{"in place", "by rename"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			writeText(t, filepath.Join(dir, "team", "pyproject.toml"), "[project]\nname = \"team\"\nversion = \"1.0.0\"\ndescription = \"Team\"\n")
			agent := writeText(t, filepath.Join(dir, "team", "agents", "a.md"), "---\nname: a\ndescripton: A\n---\n")
			const edit = "---\nname: a\ndescripton: Edited\n---\n"
			var stdout, stderr strings.Builder
			app := NewApp(strings.NewReader(""), &stdout, &stderr, lspEnv(t))
			app.setFixOpened(func(path string) {
				if how == "in place" {
					writeText(t, path, edit)
					return
				}
				tmp := writeText(t, path+".swp", edit)
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			})
			if code := app.Run(context.Background(), []string{"check", "--fix", filepath.Join(dir, "team")}); code != exitFailed {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitFailed, stderr.String())
			}
			if got, _ := os.ReadFile(agent); string(got) != edit {
				t.Errorf("the file holds %q, want the edit %q", got, edit)
			}
			if !strings.Contains(stderr.String(), agent+" not fixed: ") {
				t.Errorf("stderr does not say the file was not fixed:\n%s", stderr.String())
			}
		})
	}
}

// writeText writes text to path, making its directory, and returns path.
func writeText(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
