package lint

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWriteFix(t *testing.T) {
	const old, fixed, edited = "descripton: x\n", "description: x\n", "descripton: edited\n"
	tests := []struct {
		name string
		// setup returns the path to fix, made in dir holding text.
		setup func(t *testing.T, dir string) string
		// opened is called once the file is open (see writeFix).
		opened func(t *testing.T, path string)
		// why is what the refusal says; "": the fix is written.
		why string
		// want is the text left where the file was.
		want string
	}{
		{name: "written", want: fixed},
		{name: "edited since it was read", setup: func(t *testing.T, dir string) string {
			return writeText(t, filepath.Join(dir, "a.md"), edited)
		}, why: "it changed since it was read; run check --fix again", want: edited},
		{name: "fixed already", setup: func(t *testing.T, dir string) string {
			return writeText(t, filepath.Join(dir, "a.md"), fixed)
		}, want: fixed},
		{name: "edited in place once opened", opened: func(t *testing.T, path string) {
			writeText(t, path, edited)
		}, why: "it changed since it was read", want: edited},
		{name: "replaced once opened", opened: func(t *testing.T, path string) {
			tmp := writeText(t, path+".new", edited)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, why: "was replaced while it was fixed; the file now there is left as it is", want: edited},
		{name: "read-only", setup: func(t *testing.T, dir string) string {
			path := writeText(t, filepath.Join(dir, "a.md"), old)
			if err := os.Chmod(path, 0o444); err != nil {
				t.Fatal(err)
			}
			return path
		}, why: "is read-only (mode 0444); make it writable to fix it", want: old},
		{name: "not the user's to write", setup: func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 || runtime.GOOS == "windows" {
				t.Skip("root may write a file its group may write; Windows keeps no such modes")
			}
			path := writeText(t, filepath.Join(dir, "a.md"), old)
			if err := os.Chmod(path, 0o464); err != nil {
				t.Fatal(err)
			}
			return path
		}, why: "you may not write", want: old},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.md")
			if tc.setup != nil {
				path = tc.setup(t, dir)
			} else {
				writeText(t, path, old)
			}
			var opened func(string)
			if tc.opened != nil {
				opened = func(p string) { tc.opened(t, p) }
			}
			err := writeFix(FileFix{Path: path, old: []byte(old), new: []byte(fixed), Fixed: 1}, opened)
			switch {
			case tc.why == "" && err != nil:
				t.Errorf("error: %v", err)
			case tc.why != "" && (!errors.Is(err, errNotFixed) || !strings.Contains(err.Error(), tc.why)):
				t.Errorf("error %v, want one that says %q", err, tc.why)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("the file holds %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWriteFixLink(t *testing.T) {
	dir := t.TempDir()
	target := writeText(t, filepath.Join(dir, "outside", "a.md"), "descripton: x\n")
	link := filepath.Join(dir, "a.md")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := writeFix(FileFix{Path: link, old: []byte("descripton: x\n"), new: []byte("description: x\n"), Fixed: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v, %v", fi, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "description: x\n" {
		t.Errorf("the target holds %q", got)
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
