package prepare

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	pathpkg "path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// manifest is a bundle manifest that validated, with its agents and
// mentions resolved and its module sources parsed.
type manifest struct {
	bundle          BundleInfo
	defaultProvider string
	session         sessionSpec
	providers       []moduleSpec
	tools           []moduleSpec
	hooks           []moduleSpec
	agents          []agentSpec
	mentions        []Mention
	// warnings are the diagnostics that did not stop the load.
	warnings []diag.Diagnostic
}

// sessionSpec is a session block: module slots in the order written, and
// the other keys.
type sessionSpec struct {
	slots    []string
	modules  map[string]*moduleSpec
	settings map[string]any
}

// moduleSpec is one module entry as declared.
type moduleSpec struct {
	section string
	module  string
	source  string // as written; "" when absent
	parsed  Source
	config  map[string]any
	// file and rng locate the entry.
	file string
	rng  diag.Range
}

type agentSpec struct {
	name        string
	path        string
	description string
	modelRole   []string
	session     *sessionSpec
	providers   []moduleSpec
	tools       []moduleSpec
	hooks       []moduleSpec
}

// loader collects what loading a manifest finds wrong.
type loader struct {
	dir    string // the manifest's directory
	opts   schema.Options
	bundle string // the bundle's name, the namespace of its mentions
	diags  []diag.Diagnostic
	seen   map[string]bool // mentions already resolved
	// included are the agent names of agents.include already loaded: a
	// name repeated is loaded once, so that repeating the include of one
	// large agent cannot multiply the work.
	included map[string]bool
	m        *manifest
}

func (l *loader) report(code string, sev diag.Severity, path string, r diag.Range, format string, args ...any) {
	l.diags = append(l.diags, diag.Diagnostic{Code: code, Severity: sev, Path: path, Range: r, Message: fmt.Sprintf(format, args...)})
}

// CheckManifest validates the bundle manifest src read from path (absolute)
// and the agents and mentions it refers to, fetching nothing, and returns
// every diagnostic: errors and warnings.
func CheckManifest(path string, src []byte, opts schema.Options) []diag.Diagnostic {
	m, err := loadManifest(path, src, opts)
	var me *ManifestError
	switch {
	case errors.As(err, &me):
		return me.Diagnostics
	case err != nil:
		return []diag.Diagnostic{{Code: diag.CodeBundleLoadFailed, Severity: diag.SeverityError,
			Path: path, Message: err.Error()}}
	}
	return m.warnings
}

// doc is a manifest or an agent file read with the bundle model, and the
// places of its values.
type doc struct {
	f      *bundle.File
	places map[string]diag.Range // by path, keys and indexes joined by "/"
}

func newDoc(f *bundle.File) *doc {
	d := &doc{f: f, places: map[string]diag.Range{}}
	for _, n := range f.Nodes() {
		d.places[strings.Join(n.Path, "/")] = n.Range
	}
	return d
}

// at returns where the value at path is written.
func (d *doc) at(path ...string) diag.Range { return d.places[strings.Join(path, "/")] }

// own returns the diagnostics of a file read with the bundle model, as a
// manifest has them: bundle/unknown-key at the configured severity, and
// a bundle without a name an error (the prepared entry names it).
func (l *loader) own(ds []diag.Diagnostic) []diag.Diagnostic {
	out := make([]diag.Diagnostic, 0, len(ds))
	for _, d := range ds {
		switch d.Code {
		case bundle.CodeUnknownKey:
			if l.opts.UnknownKeySeverity == diag.SeverityWarning {
				d.Severity = diag.SeverityWarning
			}
		case bundle.CodeMissingName:
			d.Severity = diag.SeverityError
		}
		out = append(out, d)
	}
	return out
}

// loadManifest validates the manifest src read from path (absolute) and
// everything it refers to inside the bundle directory, reading each with
// the bundle model (package bundle, as check does, the manifest as an
// amplifier-agent manifest, which must name a default_provider). It
// fetches nothing.
func loadManifest(path string, src []byte, opts schema.Options) (*manifest, error) {
	f := bundle.Parse(path, src, bundle.Options{Kind: bundle.KindBundle, Manifest: true})
	sum := sha256.Sum256(src)
	m := &manifest{bundle: BundleInfo{Manifest: path, Dir: filepath.Dir(path), SHA256: hex.EncodeToString(sum[:])}}
	l := &loader{dir: m.bundle.Dir, opts: opts, seen: make(map[string]bool), included: make(map[string]bool), m: m}
	l.diags = l.own(f.Diagnostics)
	if f.Bundle == nil || f.Bundle.Data == nil || diag.CountErrors(l.diags) > 0 {
		return nil, l.fail(path)
	}
	b, d := f.Bundle, newDoc(f)
	m.bundle.Name, m.bundle.Description = b.Name, b.Description
	if meta, _ := b.Data.Value("bundle").(*bundle.Map); meta != nil {
		if _, ok := meta.Get("version"); ok {
			m.bundle.Version = b.Version
		}
	}
	l.bundle = m.bundle.Name
	m.defaultProvider, _ = b.Data.Value("default_provider").(string)
	if s, ok := b.Session.(*bundle.Map); ok {
		m.session = *l.session(d, s, "session", "session")
	}
	m.providers = l.modules(d, b.Data.Value("providers"), "providers", "providers")
	m.tools = l.modules(d, b.Data.Value("tools"), "tools", "tools")
	m.hooks = l.modules(d, b.Data.Value("hooks"), "hooks", "hooks")
	if len(b.Includes) > 0 {
		l.report(CodeIncludesNotPrepared, diag.SeverityWarning, path, d.at("includes"),
			"includes are not prepared: declare every module inline so that it is in the mount plan")
	}
	l.mentions(f)
	for _, a := range b.Agents {
		if a.Included {
			l.agentFile(path, a.Name, a.Range)
		} else if a.Value != nil {
			l.agent(d, a.Value, a.Name, path, "agents", a.Name)
		}
	}
	if diag.CountErrors(l.diags) > 0 {
		return nil, l.fail(path)
	}
	diag.Sort(l.diags)
	m.warnings = l.diags
	return m, nil
}

func (l *loader) fail(path string) error {
	diag.Sort(l.diags)
	return &ManifestError{Path: path, Diagnostics: l.diags}
}

// agentFile resolves one name of agents.include to agents/<name>.md beside
// the manifest (rng is where the name is written), and loads it.
func (l *loader) agentFile(manifestPath, written string, rng diag.Range) {
	name := written
	if ns, bare, ok := strings.Cut(name, ":"); ok {
		if ns != l.bundle {
			l.report(diag.CodeBundleAgentMissing, diag.SeverityError, manifestPath, rng,
				"agent %s names bundle %s; a bundle includes only its own agents (%s:…)", name, ns, l.bundle)
			return
		}
		name = bare
	}
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		l.report(diag.CodeBundleAgentMissing, diag.SeverityError, manifestPath, rng, "agent name %q is not a file name", written)
		return
	}
	if l.included[name] {
		return
	}
	l.included[name] = true
	path := filepath.Join(l.dir, "agents", name+".md")
	// Only a regular file of at most the document limit is read: a FIFO,
	// a device or a link to one is an agent the bundle cannot load, never
	// a hang.
	src, err := syntax.ReadFile(path, syntax.DefaultMaxFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.report(diag.CodeBundleAgentMissing, diag.SeverityError, manifestPath, rng, "agent %s: no agents/%s.md beside the manifest", name, name)
		} else {
			l.report(diag.CodeBundleAgentMissing, diag.SeverityError, manifestPath, rng, "agent %s: %v", name, err)
		}
		return
	}
	af := bundle.Parse(path, src, bundle.Options{Kind: bundle.KindAgent})
	ds := l.own(af.Diagnostics)
	l.diags = append(l.diags, ds...)
	if af.Agent == nil || af.Agent.Data == nil || diag.CountErrors(ds) > 0 {
		return
	}
	l.agent(newDoc(af), af.Agent.Data, name, path)
	l.mentions(af)
}

// agent reads an agent definition: the front matter of agents/<name>.md,
// or a mapping inline in the manifest (at is where, in d). Mentions are
// the caller's.
func (l *loader) agent(d *doc, def *bundle.Map, name, path string, at ...string) {
	a := agentSpec{name: name, path: path}
	meta, _ := def.Value("meta").(*bundle.Map)
	if meta != nil {
		a.description, _ = meta.Value("description").(string)
	} else {
		a.description, _ = def.Value("description").(string)
	}
	a.modelRole = stringList(def.Value("model_role"))
	if a.modelRole == nil && meta != nil {
		a.modelRole = stringList(meta.Value("model_role"))
	}
	section := "agent " + name + ": "
	if s, ok := def.Value("session").(*bundle.Map); ok {
		a.session = l.session(d, s, section+"session", append(at, "session")...)
	}
	a.providers = l.modules(d, def.Value("providers"), section+"providers", append(at, "providers")...)
	a.tools = l.modules(d, def.Value("tools"), section+"tools", append(at, "tools")...)
	a.hooks = l.modules(d, def.Value("hooks"), section+"hooks", append(at, "hooks")...)
	l.m.agents = append(l.m.agents, a)
}

// session reads a session block (at is where, in d): mappings holding
// "module" are slots, the rest are settings.
func (l *loader) session(d *doc, s *bundle.Map, section string, at ...string) *sessionSpec {
	out := &sessionSpec{modules: make(map[string]*moduleSpec)}
	for key, val := range s.All() {
		if vm, ok := val.(*bundle.Map); ok {
			if _, has := vm.Get("module"); has {
				if spec, ok := l.module(d, vm, section+"."+key, append(at, key)...); ok {
					out.slots = append(out.slots, key)
					out.modules[key] = &spec
				}
				continue
			}
		}
		if out.settings == nil {
			out.settings = make(map[string]any)
		}
		out.settings[key] = plain(val)
	}
	return out
}

// modules reads a list of module entries (at is where, in d).
func (l *loader) modules(d *doc, v any, section string, at ...string) []moduleSpec {
	list, _ := v.([]any)
	var out []moduleSpec
	for i, item := range list {
		if vm, ok := item.(*bundle.Map); ok {
			if spec, ok := l.module(d, vm, section, append(at, strconv.Itoa(i))...); ok {
				out = append(out, spec)
			}
		}
	}
	return out
}

// module reads one module entry (at is where, in d) and parses its source.
func (l *loader) module(d *doc, n *bundle.Map, section string, at ...string) (moduleSpec, bool) {
	path := d.f.Path
	id, _ := n.Value("module").(string)
	spec := moduleSpec{section: section, module: id, file: path, rng: d.at(append(at, "module")...)}
	if src, ok := n.Get("source"); ok && src != nil {
		rng := d.at(append(at, "source")...)
		s, isString := src.(string)
		if !isString {
			l.report(diag.CodeBundleSource, diag.SeverityError, path, rng,
				"module %s: source must be a string (git+URL@ref, file:// or a path)", spec.module)
			return spec, false
		}
		spec.source = s
		parsed, err := ParseSource(s)
		if err != nil {
			l.report(diag.CodeBundleSource, diag.SeverityError, path, rng, "module %s: %v", spec.module, err)
			return spec, false
		}
		spec.parsed = parsed
	}
	if cfg, ok := n.Value("config").(*bundle.Map); ok {
		spec.config, _ = plain(cfg).(map[string]any)
	}
	return spec, true
}

// mentions resolves the @bundle:path mentions of f: those of its Markdown
// body, and the string values of its YAML that are mentions.
func (l *loader) mentions(f *bundle.File) {
	for _, n := range f.Nodes() {
		if !n.IsString || !strings.HasPrefix(n.String, "@") {
			continue
		}
		for _, m := range syntax.FindMentions([]byte(n.String), 0, syntax.NewLineIndex([]byte(n.String))) {
			m.Range = n.Range
			l.mention(f.Path, m)
		}
	}
	for _, bm := range f.Mentions() {
		if ns, p, ok := bm.Namespace(); ok {
			l.mention(f.Path, syntax.Mention{Collection: ns, Path: p, Range: bm.Range})
		}
	}
}

func (l *loader) mention(path string, m syntax.Mention) {
	text := "@" + m.Text()
	if m.Collection != l.bundle {
		l.report(diag.CodeMentionUnresolved, diag.SeverityWarning, path, m.Range,
			"%s is not resolved: a bundle resolves only its own mentions (@%s:…)", text, l.bundle)
		return
	}
	clean := pathpkg.Clean(m.Path)
	if strings.HasPrefix(m.Path, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
		l.report(diag.CodeMentionEscapes, diag.SeverityError, path, m.Range, "%s leaves the bundle directory", text)
		return
	}
	target := filepath.Join(l.dir, filepath.FromSlash(clean))
	if _, err := os.Stat(target); err != nil {
		l.report(diag.CodeMentionUnresolved, diag.SeverityError, path, m.Range, "%s: no %s in the bundle directory %s", text, m.Path, l.dir)
		return
	}
	if !l.seen[text] {
		l.seen[text] = true
		l.m.mentions = append(l.m.mentions, Mention{Text: text, Path: target})
	}
}

// stringList reads a string or a list of strings.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		if x != "" {
			return []string{x}
		}
	case []any:
		var out []string
		for _, item := range x {
			if s, ok := item.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// plain converts a value of the bundle model into one encoding/json writes
// and reads back alike: maps with string keys, slices, strings, numbers,
// booleans and nil; a number JSON cannot hold (NaN, an infinity, an
// integer past 64 bits) and any other value become their text.
func plain(v any) any {
	switch x := v.(type) {
	case *bundle.Map:
		m := make(map[string]any, x.Len())
		for k, val := range x.All() {
			m[k] = plain(val)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, item := range x {
			s[i] = plain(item)
		}
		return s
	case bundle.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return f
	case nil, bool, string, int, int64, uint64, float64:
		return x
	}
	return fmt.Sprint(v)
}
