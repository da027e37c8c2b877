package lint

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// bundleRoot returns the root of the bundle repository that holds path
// (see check.RootOf), or "" when none does, or when path is the project's
// .amplifier or its collections (.amplifier/collections/…, checked as
// collections).
func (p *planner) bundleRoot(path string) string {
	b := check.RootOf(p.files, path, p.home)
	if b != "" && path != b && filepath.Base(path) == ".amplifier" {
		return ""
	}
	for d := path; b != "" && d != b && within(d, b); d = filepath.Dir(d) {
		if isCollectionsRoot(d) {
			return ""
		}
	}
	return b
}

// bundle plans the check of the bundle repository at root, of what is
// at or below path in it ("" or root, or --whole: all of it).
func (p *planner) bundle(root, path string) {
	if path == root || p.whole {
		path = ""
	}
	p.targets = append(p.targets, target{bundle: root, under: path})
}

// bundleFile plans the check of file f as a bundle repository's, and
// reports whether it is one's: a bundle, agent, mode, skill, recipe or
// context file of the repository around it, or a bundle, mode, skill or
// recipe that no repository holds (checked from check.LoneRoot).
func (p *planner) bundleFile(f string, lone bool) bool {
	root := p.bundleRoot(f)
	if lone {
		root, _ = check.LoneRoot(p.files, f)
	} else if root != "" && check.KindOf(p.files, root, f) == bundle.KindOther {
		root = ""
	}
	if root == p.home {
		root = "" // never a repository: see check.RootOf
	}
	if root == "" {
		return false
	}
	// A file named that cannot be read (a FIFO, a link to a device) is a
	// usage error naming it, never a hang.
	if fi, err := os.Stat(f); err == nil && !fi.Mode().IsRegular() {
		_, err := syntax.ReadFile(f, syntax.DefaultMaxFileSize)
		p.unreadable = append(p.unreadable, err.Error())
		return true
	}
	p.bundle(root, f)
	return true
}

// checkBundles checks the bundle repositories the targets name, each
// once, and adds what is reported of the paths in scope to res: with
// their includes resolved as the runtime resolves them (its git cache
// under $AMPLIFIER_HOME/cache, the settings files, the well-known names;
// nothing fetched). default_provider is asked only of an amplifier-agent
// manifest: one the configuration names ([prepare] manifest, manifests)
// or one amplifier-agent ships (check.PackagedManifest).
func (ck *checker) checkBundles(ws *Workspace, files compose.Files, targets []target, res *checkResult) {
	scopes := map[string][]string{} // by root; nil: all of it
	var roots []string
	for _, t := range targets {
		if t.bundle == "" {
			continue
		}
		s, seen := scopes[t.bundle]
		if !seen {
			roots = append(roots, t.bundle)
		}
		if t.under != "" && (!seen || s != nil) {
			scopes[t.bundle] = append(s, t.under)
		} else {
			scopes[t.bundle] = nil
		}
	}
	manifests := ws.manifests()
	opts := check.Options{Manifest: func(p string) bool {
		return slices.Contains(manifests, p) || check.PackagedManifest(files, p)
	}}
	for _, root := range roots {
		loc := compose.Locate(ck.bundleEnv(ws, root), files)
		r := check.Check(loc, files, root, opts)
		ds, checked := r.Report(scopes[root]...)
		res.diags = append(res.diags, ds...)
		for _, f := range checked {
			res.files[f] = true
		}
		for _, f := range r.Files {
			res.bundleFiles[f.Path] = bundleFile{res: r, file: f}
		}
		res.repositories++
	}
}

// bundleEnv is where the bundles a repository includes are looked for:
// the repository, the project's .amplifier, $AMPLIFIER_HOME (else
// ~/.amplifier; none under --isolated, whose answer depends on the
// project's files alone) and the CLI's well-known names.
func (ck *checker) bundleEnv(ws *Workspace, root string) compose.Env {
	env := compose.Env{WorkDir: root, Home: ws.Home, ProjectDir: ws.DaemonProject()}
	if env.ProjectDir == "" || !within(root, env.ProjectDir) {
		env.ProjectDir = root
	}
	if !ws.Isolated {
		env.AmplifierHome = ws.AmplifierHome
		if env.AmplifierHome == "" && ws.Home != "" {
			env.AmplifierHome = filepath.Join(ws.Home, ".amplifier")
		}
	}
	return env
}

// manifests returns the amplifier-agent manifests the configuration
// names: [prepare] manifest and manifests.
func (ws *Workspace) manifests() []string {
	base := "."
	if ws.Config.Path() != "" {
		base = filepath.Dir(ws.Config.Path())
	}
	var out []string
	for _, m := range append([]string{ws.Config.Prepare.Manifest}, ws.Config.Prepare.Manifests...) {
		if m != "" {
			if abs, err := filepath.Abs(config.ExpandPath(m, base)); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// bundleFixer returns the fixes check --fix makes to a bundle
// repository's file (see check.Result.Fix), its diagnostics decided as check
// decides them: suppression comments (check.Result.Fix applies them), then the
// policy.
func bundleFixer(pol *Policy) func(bf bundleFile) ([]byte, int) {
	keep := func(path string, ds []diag.Diagnostic) []diag.Diagnostic {
		return pol.FilterFile(path, ds, func(error) {})
	}
	return func(bf bundleFile) ([]byte, int) { return bf.res.Fix(bf.file, keep) }
}

// bundleFile is a file of a bundle repository, as the check of the
// repository (res) parsed it.
type bundleFile struct {
	res  *check.Result
	file *bundle.File
}
