package migrate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// pyprojectNotes says what of pyproject.toml a bundle does not carry:
// everything but [project] name, version and description.
func (m *migration) pyprojectNotes() {
	c := m.c
	if c.Pyproject == "" {
		return
	}
	rel := filepath.ToSlash(c.Pyproject)
	if r, err := filepath.Rel(c.Dir, c.Pyproject); err == nil && !strings.HasPrefix(r, "..") {
		rel = filepath.ToSlash(r)
	}
	if md := c.Metadata; md != nil {
		if len(md.URLs) > 0 {
			keys := make([]string, 0, len(md.URLs))
			for k := range md.URLs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			m.noteAt(rel, 0, "[project.urls] (%s) not carried: bundle: holds a name, a version and a description only; put the links in a README", strings.Join(keys, ", "))
		}
		if md.Author != "" {
			m.noteAt(rel, 0, "[tool.amplifier.collection] author %q not carried: bundle: has no author", md.Author)
		}
		if len(md.Capabilities) > 0 {
			m.noteAt(rel, 0, "[tool.amplifier.collection] capabilities not carried (%d): bundle: has none; the description says what the bundle does", len(md.Capabilities))
		}
		for _, r := range md.Requires {
			m.noteAt(rel, r.Range.Start.Line+1, "requires %s %s not carried: a bundle has no requirements; it includes what it needs (the behaviors' includes come from the profiles' extends)", r.Name, r.Constraint)
		}
	}
	// Other keys of [tool.amplifier.collection], which the metadata does
	// not keep.
	src, err := syntax.ReadFile(c.Pyproject, 0)
	if err == nil {
		var doc map[string]any
		if _, err := toml.Decode(string(src), &doc); err == nil {
			tool, _ := doc["tool"].(map[string]any)
			amp, _ := tool["amplifier"].(map[string]any)
			coll, _ := amp["collection"].(map[string]any)
			var extra []string
			for k := range coll {
				switch k {
				case "author", "capabilities", "requires":
				default:
					extra = append(extra, k)
				}
			}
			slices.Sort(extra)
			for _, k := range extra {
				m.noteAt(rel, 0, "[tool.amplifier.collection] %s not carried: a bundle finds its agents and modules by where they are and by what it declares", k)
			}
		}
	}
	m.noteAt(rel, 0, "not carried: bundle.md's bundle: section holds its name, version and description; a bundle repository needs no pyproject.toml unless it is also a Python package")
}

// packageNames returns the [project] names of the pyproject.toml files in
// the directories directly under dir: the copies a Python package of the
// collection holds, which may name it otherwise.
func packageNames(dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		src, err := syntax.ReadFile(filepath.Join(dir, e.Name(), "pyproject.toml"), 0)
		if err != nil {
			continue
		}
		var doc struct {
			Project struct {
				Name string `toml:"name"`
			} `toml:"project"`
		}
		if _, err := toml.Decode(string(src), &doc); err == nil && doc.Project.Name != "" {
			out = append(out, doc.Project.Name)
		}
	}
	return out
}
