package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// bundleDoc is a document of a bundle repository, with what it is read
// through: the open buffers over the disk.
type bundleDoc struct {
	path  string
	root  string      // the repository's root: the directory of its root bundle
	kind  bundle.Kind // as a check of the repository gives it
	files compose.Files
	// buffers are the open buffers, path's text included.
	buffers map[string][]byte
}

// skippedDirs are the directories a check of a bundle repository does
// not walk (package check): a file below one is no document of it.
var skippedDirs = map[string]bool{".git": true, "node_modules": true, "__pycache__": true, ".venv": true, "venv": true, ".tox": true}

// bundleDocOf returns the bundle repository document at path, read with
// text and the other buffers over the disk; nil when path is no
// document of a bundle repository: no root bundle (bundle.md or
// bundle.yaml) is at or above it, the root bundle is an amplifier-agent
// manifest (a bundle.md in a Python package), or the check of the
// repository does not check it (a collection's file, a README, a file in
// a directory it does not walk).
func (w *Workspace) bundleDocOf(path string, text []byte, overlay map[string][]byte) *bundleDoc {
	switch kindOf(path) {
	case fileProfile, filePyproject, fileLock:
		return nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".md" && ext != ".yaml" && ext != ".yml" {
		return nil
	}
	buffers := make(map[string][]byte, len(overlay)+1)
	for p, t := range overlay {
		buffers[p] = t
	}
	buffers[path] = text
	files := compose.NewOverlay(&compose.DiskFiles{}, buffers)
	root := bundleRootOf(files, path, w.bundleEnv.Home)
	if root == "" || isManifest(files, root) {
		return nil
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil
	}
	rel = filepath.ToSlash(rel)
	dirs := strings.Split(rel, "/")
	for i, d := range dirs[:len(dirs)-1] {
		if skippedDirs[d] || strings.HasPrefix(d, ".") && d != ".amplifier" || i == 1 && dirs[0] == ".amplifier" && d == "collections" {
			return nil
		}
	}
	kind := bundle.Classify(rel)
	if kind == bundle.KindOther && !strings.EqualFold(filepath.Base(path), "README.md") {
		if f, err := files.Parse(path, bundle.KindOther); err == nil {
			kind = f.Kind
		}
	}
	if kind == bundle.KindOther {
		return nil
	}
	return &bundleDoc{path: path, root: root, kind: kind, files: files, buffers: buffers}
}

// bundleRootOf returns the root of the bundle repository holding path:
// the nearest directory at or above the file's that has a root bundle,
// bundle.md or bundle.yaml. The search stops at the top of a git
// repository and never reaches home; "" when there is none.
func bundleRootOf(files compose.Files, path, home string) string {
	dir := filepath.Dir(filepath.Clean(path))
	for {
		if home != "" && dir == filepath.Clean(home) {
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

// isManifest reports whether the root bundle of the repository at root
// is an amplifier-agent manifest, which the manifest check serves: a
// bundle.md in a Python package (an __init__.py beside it), as
// amplifier-agent ships its own.
func isManifest(files compose.Files, root string) bool {
	return files.Stat(filepath.Join(root, "bundle.md")) == compose.RegularFile &&
		files.Stat(filepath.Join(root, "__init__.py")) == compose.RegularFile
}

// env returns where the bundles of the repository at root are looked
// for: the repository first, as when the runtime is started in it.
func (w *Workspace) envFor(root string) compose.Env {
	env := w.bundleEnv
	env.WorkDir = root
	if env.ProjectDir == "" {
		env.ProjectDir = root
	}
	if env.AmplifierHome == "" && env.Home != "" {
		env.AmplifierHome = filepath.Join(env.Home, ".amplifier")
	}
	return env
}

// bundleChecks keeps the last check of each bundle repository, so that
// the open documents of one repository re-diagnosed after an edit share
// one check. A check holds while the buffers are the same slices (a
// buffer is never modified in place: an edit makes a new one), no file
// was saved or changed on disk (Invalidate), and it is younger than
// maxBundleAge, for changes no one reported.
type bundleChecks struct {
	mu      sync.Mutex // guards fields below
	entries map[string]bundleCheck
}

type bundleCheck struct {
	buffers map[string][]byte // kept alive, so that their addresses name them
	at      time.Time
	res     *check.Result
}

// maxBundleAge bounds how long a check of a repository is reused.
const maxBundleAge = 2 * time.Second

// maxBundleChecks bounds the repositories whose check is kept.
const maxBundleChecks = 8

func sameBuffers(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for p, x := range a {
		y, ok := b[p]
		if !ok || len(x) != len(y) || len(x) > 0 && &x[0] != &y[0] {
			return false
		}
	}
	return true
}

func (c *bundleChecks) get(root string, buffers map[string][]byte, now time.Time) *check.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[root]
	if !ok || now.Sub(e.at) > maxBundleAge || !sameBuffers(e.buffers, buffers) {
		return nil
	}
	return e.res
}

func (c *bundleChecks) put(root string, buffers map[string][]byte, at time.Time, res *check.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]bundleCheck{}
	}
	if _, ok := c.entries[root]; !ok && len(c.entries) >= maxBundleChecks {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[root] = bundleCheck{buffers: buffers, at: at, res: res}
}

// forget drops every check kept: a file changed.
func (c *bundleChecks) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}

// checkBundle checks the repository of b over the buffers, as `check`
// does.
func (w *Workspace) checkBundle(b *bundleDoc) *check.Result {
	now := time.Now()
	if res := w.bundles.get(b.root, b.buffers, now); res != nil {
		return res
	}
	loc := compose.Locate(w.envFor(b.root), b.files)
	res := check.Check(loc, b.files, b.root, check.Options{})
	w.bundles.put(b.root, b.buffers, now, res)
	return res
}

// bundleDiagnose returns what a check of b's repository reports about
// b, over the buffers, its suppression comments applied.
func (w *Workspace) bundleDiagnose(ctx context.Context, b *bundleDoc, text []byte) []diag.Diagnostic {
	res := w.checkBundle(b)
	if ctx.Err() != nil {
		return nil
	}
	out, _ := res.Report(b.path)
	diag.Sort(out)
	return out
}

// BundleDocument reports whether path, read with text and the other
// buffers over the disk, is a document of a bundle repository. Those are
// checked over the disk, not over a View, so a language server asks its
// own Workspace about them even when a daemon answers the others.
func (w *Workspace) BundleDocument(path string, text []byte, overlay map[string][]byte) bool {
	return w.bundleDocOf(path, text, overlay) != nil
}
