package compose_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
)

// TestDiskFilesListStat holds what Stat says of the entries of a listed
// directory (taken from the listing where it can) to what it says of
// them when nothing was listed: regular files, directories, links to
// either and a dangling link.
func TestDiskFilesListStat(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file.md"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	links := true
	for name, to := range map[string]string{"to-file": "file.md", "to-sub": "sub", "dangling": "nowhere"} {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			links = false // a system that makes no links: the others still count
		}
	}
	listed := &compose.DiskFiles{}
	names, err := listed.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if links && len(names) != 5 || !links && len(names) < 2 {
		t.Fatalf("listed %v", names)
	}
	for _, n := range append(names, "missing") {
		p := filepath.Join(dir, n)
		if got, want := listed.Stat(p), (&compose.DiskFiles{}).Stat(p); got != want {
			t.Errorf("%s: %v after the listing, %v without it", n, got, want)
		}
	}
}

// TestDiskFilesBundleByContent holds the parse that finds a bundle by its
// content to the parse of the same file as a bundle, and checks that the
// second is the first.
func TestDiskFilesBundleByContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "notes", "stack.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	src := []byte("---\nbundle:\n  name: stack\n  version: 1.0.0\nincludes:\n  - bundle: ./other.md\ntools:\n  - module: tool-x # a comment\n---\nHello @stack:context/x.md.\n")
	os.WriteFile(p, src, 0o644)
	files := &compose.DiskFiles{}
	found, err := files.Parse(p, bundle.KindOther)
	if err != nil || found.Kind != bundle.KindBundle {
		t.Fatalf("parse as no kind: %v, kind %v", err, found.Kind)
	}
	asked, err := files.Parse(p, bundle.KindBundle)
	if err != nil {
		t.Fatal(err)
	}
	if asked != found {
		t.Error("the bundle's parse is not the parse that found the bundle")
	}
	want := bundle.Parse(p, src, bundle.Options{Kind: bundle.KindBundle})
	show := func(f *bundle.File) string {
		b, err := json.Marshal(struct {
			Bundle      *bundle.Bundle
			Diagnostics any
			Fixes       any
			Refused     string
			Mentions    []bundle.Mention
		}{f.Bundle, f.Diagnostics, f.Fixes, f.Refused, f.Mentions()})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := show(asked), show(want); got != want {
		t.Errorf("shared parse:\n%s\nparse as a bundle:\n%s", got, want)
	}
}
