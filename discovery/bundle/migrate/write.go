package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// ErrRefused is returned by Write when the directory holds files that are
// not an earlier migration of the same collection, or that were changed
// since it wrote them.
var ErrRefused = errors.New("migrate: directory refused")

// Change is one file that writing a Result changes in a directory.
type Change struct {
	Path string // slash-separated, relative to the directory
	// Old is the file's bytes in the directory (nil when it is created),
	// New what is written (nil when it is removed).
	Old, New []byte
	Created  bool
	Removed  bool
}

// Plan is what writing a Result into a directory would do.
type Plan struct {
	Dir string
	// Changes are the files created, changed or removed, by path.
	Changes []Change
	// Refused says why Write refuses the directory; "" when it writes.
	Refused string
}

// Written counts the files the plan creates or changes.
func (p *Plan) Written() int {
	n := 0
	for _, c := range p.Changes {
		if !c.Removed {
			n++
		}
	}
	return n
}

// Removed counts the files the plan removes.
func (p *Plan) Removed() int { return len(p.Changes) - p.Written() }

// Plan compares r with the directory dir: the files it would create,
// change and remove (those an earlier migration of the same collection
// wrote, unchanged since, that r no longer has). Write refuses a
// directory that holds anything else than such a migration, a .git and
// nothing; Refused says so.
func (r *Result) Plan(dir string) (*Plan, error) {
	p := &Plan{Dir: dir}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		for _, f := range r.Files {
			p.Changes = append(p.Changes, Change{Path: f.Path, New: f.Data, Created: true})
		}
		return p, nil
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	empty := true
	for _, e := range entries {
		if e.Name() != ".git" {
			empty = false
		}
	}
	var earlier manifest
	var ok bool
	if !empty {
		if src, err := syntax.ReadFile(filepath.Join(dir, "MIGRATION.md"), 0); err == nil {
			earlier, ok = parseManifest(src)
		}
		switch {
		case !ok:
			p.Refused = fmt.Sprintf("%s is not empty and holds no earlier migration (MIGRATION.md): write into a new or empty directory", dir)
		case earlier.collection != r.Collection:
			p.Refused = fmt.Sprintf("%s holds a migration of the collection %s, not of %s: write into a new or empty directory", dir, earlier.collection, r.Collection)
			ok = false
		}
	}
	writes := map[string]bool{}
	var edited []string
	for _, f := range r.Files {
		writes[f.Path] = true
		old, err := readUnder(dir, f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			p.Changes = append(p.Changes, Change{Path: f.Path, New: f.Data, Created: true})
			continue
		case err != nil:
			return nil, err
		case bytes.Equal(old, f.Data):
			continue
		}
		p.Changes = append(p.Changes, Change{Path: f.Path, Old: old, New: f.Data})
		if ok && f.Path != "MIGRATION.md" && earlier.files[f.Path] != sum(old) {
			edited = append(edited, f.Path)
		}
	}
	if ok {
		for fp, h := range earlier.files {
			if writes[fp] {
				continue
			}
			old, err := readUnder(dir, fp)
			if err != nil || sum(old) != h {
				continue // gone, or the author's now: left alone
			}
			p.Changes = append(p.Changes, Change{Path: fp, Old: old, Removed: true})
		}
	}
	if len(edited) > 0 {
		sort.Strings(edited)
		more := ""
		if len(edited) > 3 {
			more = fmt.Sprintf(" and %d more", len(edited)-3)
			edited = edited[:3]
		}
		p.Refused = fmt.Sprintf("%s holds an earlier migration of %s, but %s%s changed since it was written, or was not written by it: move the changes away, or write into a new directory",
			dir, r.Collection, strings.Join(edited, ", "), more)
	}
	sort.Slice(p.Changes, func(i, j int) bool { return diag.ComparePaths(p.Changes[i].Path, p.Changes[j].Path) < 0 })
	return p, nil
}

// readUnder reads the file at the slash-separated rel under dir, which
// must be a regular file reached through no symbolic link.
func readUnder(dir, rel string) ([]byte, error) {
	if err := noLinks(dir, rel); err != nil {
		return nil, err
	}
	return syntax.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)), 0)
}

// noLinks fails when a component of rel under dir exists and is a
// symbolic link: writing through it would write outside dir.
func noLinks(dir, rel string) error {
	cur := dir
	for part := range strings.SplitSeq(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: a symbolic link; the migration writes through none", cur)
		}
	}
	return nil
}

// Write writes r into dir (made when missing) and returns what it did.
// It refuses, with ErrRefused and writing nothing, a directory Plan
// refuses. Each file is written to a temporary file and renamed into
// place; MIGRATION.md, which records the files, is written last.
func (r *Result) Write(dir string) (*Plan, error) {
	p, err := r.Plan(dir)
	if err != nil {
		return nil, err
	}
	if p.Refused != "" {
		return p, fmt.Errorf("%w: %s", ErrRefused, p.Refused)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return p, err
	}
	var last *Change
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Path == "MIGRATION.md" {
			last = c
			continue
		}
		if err := apply(dir, c); err != nil {
			return p, err
		}
	}
	if last != nil {
		if err := apply(dir, last); err != nil {
			return p, err
		}
	}
	return p, nil
}

// apply makes one change in dir.
func apply(dir string, c *Change) error {
	target := filepath.Join(dir, filepath.FromSlash(c.Path))
	if err := noLinks(dir, c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if c.Removed {
		if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// Remove the directories the file leaves empty, up to dir.
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			if os.Remove(filepath.Join(dir, filepath.FromSlash(d))) != nil {
				break
			}
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".migrate-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(c.New)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), target)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", target, werr)
	}
	return nil
}

// Diff writes the plan's changes as a unified diff, paths relative to the
// directory (a/PATH, b/PATH), as git diff writes them.
func (p *Plan) Diff(w io.Writer) error {
	var b strings.Builder
	for _, c := range p.Changes {
		from, to := "a/"+c.Path, "b/"+c.Path
		if c.Created {
			from = "/dev/null"
		}
		if c.Removed {
			to = "/dev/null"
		}
		if binary(c.Old) || binary(c.New) {
			fmt.Fprintf(&b, "Binary files %s and %s differ\n", from, to)
			continue
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		b.WriteString(syntax.UnifiedDiff(c.Old, c.New))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
