package compose

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/diag"
)

// Env is where bundles are looked for: paths only, read from nowhere else.
// The command line fills it from the working directory and the
// environment ($AMPLIFIER_HOME, $HOME).
type Env struct {
	// WorkDir is where the user stands: the repository around it is
	// searched first, and the runtime resolves ./ includes of the bundle
	// it is asked for from here.
	WorkDir string
	// AmplifierHome is $AMPLIFIER_HOME, else ~/.amplifier: its bundles/,
	// settings.yaml, registry.json and cache/ are read.
	AmplifierHome string
	// Home is the user's home directory.
	Home string
	// ProjectDir holds the project's .amplifier/ (bundles/, settings.yaml,
	// settings.local.yaml); WorkDir when empty, as the runtime uses the
	// working directory.
	ProjectDir string
	// NoWellKnown leaves out the CLI's well-known names.
	NoWellKnown bool
}

// CacheDir returns the runtime's git cache, $AMPLIFIER_HOME/cache.
func (e Env) CacheDir() string { return filepath.Join(e.AmplifierHome, "cache") }

func (e Env) project() string {
	if e.ProjectDir != "" {
		return e.ProjectDir
	}
	return e.WorkDir
}

// WellKnown is a name the Amplifier CLI registers by default
// (amplifier-app-cli's WELL_KNOWN_BUNDLES), with the URI it loads.
type WellKnown struct {
	Name, URI string
}

// WellKnownBundles lists the CLI's well-known names.
func WellKnownBundles() []WellKnown {
	const f = "git+https://github.com/microsoft/amplifier-foundation@main"
	return []WellKnown{
		{"foundation", f},
		{"anchors", f + "#subdirectory=bundles/anchors/bundle.md"},
		{"anchors-amp-dev", f + "#subdirectory=bundles/anchors-amp-dev/bundle.md"},
		{"recipes", "git+https://github.com/microsoft/amplifier-bundle-recipes@main"},
		{"design-intelligence", "git+https://github.com/microsoft/amplifier-bundle-design-intelligence@main"},
		{"exp-delegation", f + "#subdirectory=experiments/delegation-only"},
		{"amplifier-dev", f + "#subdirectory=bundles/amplifier-dev.yaml"},
		{"notify", "git+https://github.com/microsoft/amplifier-bundle-notify@main"},
		{"modes", "git+https://github.com/microsoft/amplifier-bundle-modes@main"},
		{"routing-matrix", "git+https://github.com/microsoft/amplifier-bundle-routing-matrix@main"},
	}
}

// Registration is a name the runtime's registry knows before a load.
type Registration struct {
	Name string
	URI  string
	// LocalPath is where registry.json says the bundle was loaded from
	// ("" when it was not, or no longer exists).
	LocalPath string
	IsRoot    bool
	// From says where the name comes from: "registry.json", "well-known",
	// a settings file, or the bundle's own repository.
	From string
}

// Override is an entry of sources.bundles: an include whose source holds
// Key is loaded from URI instead.
type Override struct {
	Key, URI string
	From     string // the settings file
}

// Found is a bundle found in a location.
type Found struct {
	Name      string // bundle.name ("" for a bundle without one)
	Version   string
	Namespace string // the namespace it shares: its repository's root bundle's name
	Path      string // the bundle file; "" for a URI not in the cache
	URI       string // for a registered name: its URI
	Where     string // repository, project, user, settings, well-known
	Key       string // the name it is found by in its location (a file or directory name, a settings key)
}

// Locations are the places bundles come from, read once for an Env.
// A Locations is immutable.
type Locations struct {
	Env Env
	// Repos are the root bundles (bundle.md or bundle.yaml) in WorkDir
	// and its ancestors, nearest first: the repository you stand in.
	Repos []Found
	// Project and User are the bundles of .amplifier/bundles/ and
	// $AMPLIFIER_HOME/bundles/, by name (a file's stem or a directory).
	Project []Found
	User    []Found
	// Registrations are the names known before any load, in the order the
	// runtime registers them (later wins): registry.json, the well-known
	// names, the settings' bundle.added.
	Registrations []Registration
	Overrides     []Override
	// Diagnostics are the settings files' problems.
	Diagnostics []diag.Diagnostic
	// Reads are the paths read to find all this.
	Reads []string
}

// Locate reads the locations of env through files. It never fails: what
// cannot be read is left out, and a malformed settings file is a
// diagnostic.
func Locate(env Env, files Files) *Locations {
	rec := &recorder{files: files}
	l := &Locations{Env: env}
	for dir := filepath.Clean(env.WorkDir); env.WorkDir != ""; {
		if p := rootBundleIn(rec, dir); p != "" {
			l.Repos = append(l.Repos, found(rec, p, "repository", filepath.Base(filepath.Dir(p))))
		}
		up := filepath.Dir(dir)
		if up == dir || len(l.Repos) > 32 {
			break
		}
		dir = up
	}
	l.Project = searchPath(rec, filepath.Join(env.project(), ".amplifier", "bundles"), "project")
	if env.AmplifierHome != "" {
		l.User = searchPath(rec, filepath.Join(env.AmplifierHome, "bundles"), "user")
		l.Registrations = append(l.Registrations, readRegistry(rec, filepath.Join(env.AmplifierHome, "registry.json"))...)
	}
	if !env.NoWellKnown {
		for _, w := range WellKnownBundles() {
			l.Registrations = append(l.Registrations, Registration{Name: w.Name, URI: w.URI, IsRoot: true, From: "well-known"})
		}
	}
	var settings []string
	if env.AmplifierHome != "" {
		settings = append(settings, filepath.Join(env.AmplifierHome, "settings.yaml"))
	}
	if env.project() != "" {
		settings = append(settings,
			filepath.Join(env.project(), ".amplifier", "settings.yaml"),
			filepath.Join(env.project(), ".amplifier", "settings.local.yaml"))
	}
	for _, p := range settings {
		l.readSettings(rec, p)
	}
	l.Reads = rec.paths()
	return l
}

// rootBundleIn returns dir's bundle.md, else its bundle.yaml, else "".
func rootBundleIn(f Files, dir string) string {
	for _, n := range []string{"bundle.md", "bundle.yaml"} {
		if p := filepath.Join(dir, n); f.Stat(p) == RegularFile {
			return p
		}
	}
	return ""
}

// found describes the bundle file at p.
func found(f Files, p, where, key string) Found {
	fd := Found{Path: p, Where: where, Key: key}
	if bf, err := f.Parse(p, bundle.KindBundle); err == nil && bf.Bundle != nil {
		fd.Name, fd.Version = bf.Bundle.Name, bf.Bundle.Version
	}
	return fd
}

// searchPath lists the bundles of a CLI search path: NAME/bundle.md,
// NAME/bundle.yaml, NAME.yaml, NAME.yml and NAME.md.
func searchPath(f Files, dir, where string) []Found {
	names, err := f.List(dir)
	if err != nil {
		return nil
	}
	var out []Found
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			continue
		}
		p := filepath.Join(dir, n)
		switch f.Stat(p) {
		case Directory:
			if r := rootBundleIn(f, p); r != "" {
				out = append(out, found(f, r, where, n))
			}
		case RegularFile:
			ext := filepath.Ext(n)
			if ext == ".yaml" || ext == ".yml" || ext == ".md" {
				out = append(out, found(f, p, where, strings.TrimSuffix(n, ext)))
			}
		}
	}
	return out
}

// readRegistry reads the names of the runtime's registry.json.
func readRegistry(f Files, p string) []Registration {
	if f.Stat(p) != RegularFile {
		return nil
	}
	bf, err := f.Parse(p, bundle.KindOther)
	if err != nil || bf == nil {
		return nil
	}
	var data struct {
		Bundles map[string]struct {
			URI       string `json:"uri"`
			LocalPath string `json:"local_path"`
			IsRoot    *bool  `json:"is_root"`
		} `json:"bundles"`
	}
	if err := json.Unmarshal(bf.Text(), &data); err != nil {
		return nil
	}
	names := make([]string, 0, len(data.Bundles))
	for n := range data.Bundles {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []Registration
	for _, n := range names {
		b := data.Bundles[n]
		r := Registration{Name: n, URI: b.URI, LocalPath: b.LocalPath, IsRoot: b.IsRoot == nil || *b.IsRoot, From: p}
		if r.LocalPath != "" && !exists(f, r.LocalPath) {
			r.LocalPath = ""
		}
		out = append(out, r)
	}
	return out
}

// readSettings reads bundle.added and sources.bundles of one settings file.
func (l *Locations) readSettings(f Files, p string) {
	if f.Stat(p) != RegularFile {
		return
	}
	bf, err := f.Parse(p, bundle.KindOther)
	if err != nil {
		return
	}
	report := func(r diag.Range, msg string) {
		l.Diagnostics = append(l.Diagnostics, diag.Diagnostic{Code: bundle.CodeSettings, Severity: diag.SeverityError, Path: p, Range: r, Message: msg})
	}
	var root yaml.Node
	if err := yaml.Unmarshal(bf.Text(), &root); err != nil {
		report(diag.Range{}, "the settings file is not valid YAML; the runtime skips it: "+err.Error())
		return
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return
	}
	pos := func(n *yaml.Node) diag.Range {
		off := bf.Lines().Offset(n.Line, n.Column)
		return bf.Lines().Range(off, off+len(n.Value))
	}
	get := func(n *yaml.Node, k string) *yaml.Node {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				return n.Content[i+1]
			}
		}
		return nil
	}
	strMap := func(n *yaml.Node, what string, fn func(k, v string)) {
		if n == nil {
			return
		}
		if n.Kind != yaml.MappingNode {
			report(pos(n), what+" is not a mapping of names to URIs; the runtime ignores it")
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				report(pos(k), what+"."+k.Value+" is not a URI")
				continue
			}
			fn(k.Value, v.Value)
		}
	}
	strMap(get(get(doc, "bundle"), "added"), "bundle.added", func(k, v string) {
		l.Registrations = append(l.Registrations, Registration{Name: k, URI: v, IsRoot: true, From: p})
	})
	strMap(get(get(doc, "sources"), "bundles"), "sources.bundles", func(k, v string) {
		for i, o := range l.Overrides {
			if o.Key == k {
				l.Overrides = append(l.Overrides[:i], l.Overrides[i+1:]...)
				break
			}
		}
		l.Overrides = append(l.Overrides, Override{Key: k, URI: v, From: p})
	})
}
