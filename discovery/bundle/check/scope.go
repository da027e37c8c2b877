package check

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/suppress"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// RootOf returns the root of the bundle repository that holds path (a
// file, or a directory): the nearest directory at or above it (a file's
// own directory first) that has a root bundle, bundle.md or bundle.yaml.
// The search stops at the top of a repository (a directory that holds
// .git) and never reaches home (whose bundle.md would make a repository
// of every directory below it); "" when it finds none.
func RootOf(files compose.Files, path, home string) string {
	dir := filepath.Clean(path)
	if files.Stat(dir) != compose.Directory {
		dir = filepath.Dir(dir)
	}
	if home != "" {
		home = filepath.Clean(home)
	}
	for {
		if dir == home {
			return ""
		}
		for _, n := range []string{"bundle.md", "bundle.yaml"} {
			if files.Stat(filepath.Join(dir, n)) == compose.RegularFile {
				return dir
			}
		}
		up := filepath.Dir(dir)
		if up == dir || files.Stat(filepath.Join(dir, ".git")) != compose.Missing {
			return ""
		}
		dir = up
	}
}

// LoneRoot returns where the check of a bundle file that no root bundle
// is above is rooted: the directory above the one its kind is told by
// (behaviors/, providers/, bundles/, modes/, recipes/, skills/NAME/),
// else its own directory; ok is false for a file that is no bundle,
// mode, skill or recipe (an agent or a context file outside a bundle
// repository is a collection's, or nothing amplidex checks).
func LoneRoot(files compose.Files, path string) (root string, ok bool) {
	dir := filepath.Dir(path)
	rel := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir) + "/" + filepath.Base(path)
	kind := bundle.Classify(rel)
	switch kind {
	case bundle.KindSkill:
		return filepath.Dir(filepath.Dir(dir)), true
	case bundle.KindBundle, bundle.KindMode, bundle.KindRecipe:
		switch filepath.Base(dir) {
		case "behaviors", "providers", "bundles", "modes", "recipes":
			return filepath.Dir(dir), true
		}
		return dir, true
	case bundle.KindOther:
		ext := strings.ToLower(filepath.Ext(path))
		if ext != ".md" && ext != ".yaml" && ext != ".yml" {
			return "", false
		}
		if f, err := files.Parse(path, bundle.KindOther); err == nil && (f.Kind == bundle.KindBundle || f.Kind == bundle.KindRecipe) {
			return dir, true
		}
	}
	return "", false
}

// PackagedManifest reports whether the bundle file at path is an
// amplifier-agent manifest by where it lies: a bundle.md in a Python
// package (an __init__.py beside it), as amplifier-agent ships its own
// (amplifier_agent_lib/bundle/bundle.md, which its engine reads for
// default_provider). A bundle repository's bundle.md is no package's
// data. The command adds the manifests its configuration names
// ([prepare] manifest and manifests).
func PackagedManifest(files compose.Files, path string) bool {
	return filepath.Base(path) == "bundle.md" && files.Stat(filepath.Join(filepath.Dir(path), "__init__.py")) == compose.RegularFile
}

// Report returns what a check reports of the repository's files in scope,
// paths (files or directories of the repository; none: all of it): their
// diagnostics, with the suppression comments of the files checked
// applied (`# amplidex: ignore[…]` in front matter and YAML, `<!--
// amplidex: ignore[…] -->` in a Markdown body, as in collections), and
// the files checked in scope, in the order of Repo.Entries.
func (r *Result) Report(paths ...string) ([]diag.Diagnostic, []string) {
	in := func(p string) bool {
		if len(paths) == 0 {
			return true
		}
		return slices.ContainsFunc(paths, func(s string) bool { return syntax.Within(p, s) })
	}
	var files []string
	sups := suppress.Files{}
	for _, f := range r.Files {
		if !in(f.Path) {
			continue
		}
		files = append(files, f.Path)
		sups.Add(f.Path, f.Text())
	}
	var ds []diag.Diagnostic
	for _, d := range r.Diagnostics {
		if in(d.Path) {
			ds = append(ds, d)
		}
	}
	if len(sups) > 0 {
		ds = sups.Apply(ds)
	}
	return ds, files
}

// maxFixRounds bounds the rounds of fixes made to one file.
const maxFixRounds = 10

// Fix returns the text of f, a file r checked, with the fixes of its
// diagnostics that need no choice made (see bundle.Fix): those of the
// diagnostics that the suppression comments of the text leave, as Report
// leaves them, and keep reports (the caller's selection), round after
// round over the text the round before left. The first round fixes what
// the check reported of f (the fixes of the file and r.Fixes), the next
// ones what f's text says of itself once parsed again. It returns f's
// text and 0 when there is nothing to fix.
func (r *Result) Fix(f *bundle.File, keep func(path string, ds []diag.Diagnostic) []diag.Diagnostic) ([]byte, int) {
	text, n := f.Text(), 0
	cur := f
	var own []diag.Diagnostic
	for _, d := range r.Diagnostics {
		if d.Path == f.Path {
			own = append(own, d)
		}
	}
	ds, more := own, r.Fixes[f.Path]
	for range maxFixRounds {
		type at struct {
			code string
			r    diag.Range
		}
		reported := map[at]bool{}
		for _, d := range keep(f.Path, suppress.File(f.Path, text, ds)) {
			reported[at{d.Code, d.Range}] = true
		}
		var fixes []bundle.Fix
		for _, x := range append(slices.Clip(cur.Fixes), more...) {
			if reported[at{x.Code, x.At}] {
				fixes = append(fixes, x)
			}
		}
		if len(fixes) == 0 {
			break
		}
		slices.SortFunc(fixes, func(a, b bundle.Fix) int { return a.Start - b.Start })
		var out []byte
		last := 0
		for _, x := range fixes {
			if x.Start < last {
				continue // overlaps the one before: the next round has it
			}
			out = append(append(out, text[last:x.Start]...), x.Text...)
			last = x.End
			n++
		}
		text = append(out, text[last:]...)
		cur = bundle.Parse(f.Path, text, bundle.Options{Kind: f.Kind})
		ds, more = cur.Diagnostics, nil
	}
	return text, n
}
