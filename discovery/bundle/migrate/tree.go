package migrate

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery"
)

// junk reports the names a copied tree leaves out without a note: caches,
// virtual environments, version control and editor droppings.
func junk(name string, dir bool) bool {
	if dir {
		return name == ".git" || name == "__pycache__" || name == "node_modules" || name == ".venv" || name == "venv" ||
			name == ".mypy_cache" || name == ".pytest_cache" || name == ".ruff_cache" ||
			strings.HasSuffix(name, ".egg-info") || strings.HasSuffix(name, ".dist-info")
	}
	return name == ".DS_Store" || strings.HasSuffix(name, ".pyc") ||
		(discovery.IsEditorDropping(name) && !strings.HasPrefix(name, "."))
}

// copyTree carries every file under dir (relative to the base), its
// Markdown with the mentions rewritten when rewrite is set.
func (m *migration) copyTree(dir string, rewrite bool) {
	root := m.abs(dir)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return
	}
	_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if m.tooMany {
			return filepath.SkipAll
		}
		r, rerr := filepath.Rel(m.c.Base, p)
		if rerr != nil {
			return nil
		}
		rel := filepath.ToSlash(r)
		if err != nil {
			m.note(rel, 0, "not carried: %s", errText(err))
			return nil
		}
		if e.IsDir() {
			if p != root && junk(e.Name(), true) {
				return filepath.SkipDir
			}
			return nil
		}
		if junk(e.Name(), false) {
			return nil
		}
		m.copyFile(rel, rewrite && strings.HasSuffix(rel, ".md"))
		return nil
	})
}

// copyFile carries one file under the base.
func (m *migration) copyFile(rel string, rewrite bool) {
	if m.carried[rel] {
		return
	}
	m.carried[rel] = true
	if reserved(rel) {
		m.note(rel, 0, "not carried, though the collection names it: the migration writes its own %s", rel)
		return
	}
	src, ok := m.readFile(rel)
	if !ok {
		return
	}
	if rewrite {
		src = m.body(src, 0, rel)
	}
	m.add(&File{Path: rel, Data: src, From: m.rel(rel)})
}

// mentionTargets carries the files and directories the collection's own
// mentions name that nothing else carried.
func (m *migration) mentionTargets() {
	for i := 0; i < len(m.targets); i++ { // copying Markdown may add targets
		t := m.targets[i]
		if m.isCarried(t) {
			continue
		}
		fi, err := os.Stat(m.abs(t))
		switch {
		case err != nil:
			continue // the mention resolves to nothing; check says so
		case fi.IsDir():
			m.copyTree(t, false)
		default:
			m.copyFile(t, false)
		}
	}
}

// isCarried reports whether the path under the base, a file or a
// directory, was carried whole.
func (m *migration) isCarried(p string) bool {
	if m.carried[p] {
		return true
	}
	for _, tree := range []string{"context", "scenario-tools", "modules"} {
		if p == tree || strings.HasPrefix(p, tree+"/") {
			return true
		}
	}
	return false
}

// carriedUnder counts the files carried under a directory (relative to
// the base).
func (m *migration) carriedUnder(dir string) int {
	n := 0
	for p := range m.carried {
		if strings.HasPrefix(p, dir+"/") {
			n++
		}
	}
	return n
}

// leftovers notes every entry of the collection's directory (and of its
// resource base) that was not carried.
func (m *migration) leftovers() {
	dirEntries := func(abs string) []os.DirEntry {
		es, err := os.ReadDir(abs)
		if err != nil {
			return nil
		}
		return es
	}
	// The directory above the base (a nested layout): all but the base.
	if m.base != "" {
		for _, e := range dirEntries(m.c.Dir) {
			name := e.Name()
			if name == ".git" || junk(name, e.IsDir()) || name == strings.Split(m.base, "/")[0] {
				continue
			}
			if filepath.Join(m.c.Dir, name) == m.c.Pyproject {
				continue // its notes are said
			}
			m.noteAt(name+slash(e), 0, "not carried: it is not part of the collection's resources (%s/)", m.base)
		}
	}
	for _, e := range dirEntries(m.c.Base) {
		name := e.Name()
		if name == ".git" || junk(name, e.IsDir()) {
			continue
		}
		switch {
		case filepath.Join(m.c.Base, name) == m.c.Pyproject:
			continue
		case name == "profiles" || name == "agents":
			m.resourceDirLeftovers(name)
		case name == "context" || name == "scenario-tools" || name == "modules":
			if !e.IsDir() {
				m.note(name, 0, "not carried: not a directory")
			}
		case m.carried[name]:
		case name == "bundle.md" || name == "bundle.yaml" || name == "behaviors" || name == "bundles":
			m.note(name+slash(e), 0, "not carried: the migration writes its own %s; compare them", name)
		case name == "MIGRATION.md":
			m.note(name, 0, "not carried: the migration writes its own MIGRATION.md")
		case e.IsDir() && m.carriedUnder(name) > 0:
			m.note(name+"/", 0, "not carried, but for the %s under it that the collection names (in a mention or a module's source)", count(m.carriedUnder(name), "file"))
		case m.base != "" && name == "pyproject.toml":
			m.note(name, 0, "not carried: the package's copy of the metadata")
		case m.base != "" && name == "__init__.py":
			m.note(name, 0, "not carried: the Python package's marker; a bundle is no package")
		default:
			m.note(name+slash(e), 0, "not carried: it is not a resource of the collection (profiles, agents, context, scenario tools, modules) and nothing mentions it")
		}
	}
}

// resourceDirLeftovers notes the entries of profiles/ or agents/ that are
// not profiles or agents.
func (m *migration) resourceDirLeftovers(dir string) {
	es, err := os.ReadDir(m.abs(dir))
	if err != nil {
		return
	}
	kind := strings.TrimSuffix(dir, "s")
	for _, e := range es {
		rel := path.Join(dir, e.Name())
		if m.carried[rel] || junk(e.Name(), e.IsDir()) {
			continue
		}
		if e.IsDir() && m.carriedUnder(rel) > 0 {
			continue
		}
		if slices.Contains(m.targets, rel) && !e.IsDir() {
			continue
		}
		m.note(rel+slash(e), 0, "not carried: not a %s (a %s is a .md file directly in %s/, README.md aside)", kind, kind, dir)
	}
}

// slash is "/" for a directory's entry.
func slash(e os.DirEntry) string {
	if e.IsDir() {
		return "/"
	}
	return ""
}

// count writes n things: "1 file", "2 files".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// reserved reports the paths the migration makes itself, which no file of
// the collection is copied to.
func reserved(rel string) bool {
	switch rel {
	case "bundle.md", "bundle.yaml", "MIGRATION.md":
		return true
	}
	return strings.HasPrefix(rel, "behaviors/") || strings.HasPrefix(rel, "bundles/")
}
