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
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
	"go.yaml.in/yaml/v3"
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

// loadManifest validates the manifest src read from path (absolute) and
// everything it refers to inside the bundle directory. It fetches nothing.
func loadManifest(path string, src []byte, opts schema.Options) (*manifest, error) {
	doc := parseDoc(path, src, schema.DocBundle, opts)
	sum := sha256.Sum256(src)
	m := &manifest{bundle: BundleInfo{Manifest: path, Dir: filepath.Dir(path), SHA256: hex.EncodeToString(sum[:])}}
	l := &loader{dir: m.bundle.Dir, opts: opts, diags: append([]diag.Diagnostic(nil), doc.diags()...), seen: make(map[string]bool), included: make(map[string]bool), m: m}
	if doc.root == nil || diag.CountErrors(l.diags) > 0 {
		return nil, l.fail(path)
	}
	root := doc.root
	if b := lookup(root, "bundle"); b != nil {
		m.bundle.Name = scalar(lookup(b, "name"))
		m.bundle.Version = scalar(lookup(b, "version"))
		m.bundle.Description = scalar(lookup(b, "description"))
	}
	l.bundle = m.bundle.Name
	m.defaultProvider = scalar(lookup(root, "default_provider"))
	if s := lookup(root, "session"); s != nil {
		m.session = *l.session(doc, s, "session")
	}
	m.providers = l.modules(doc, lookup(root, "providers"), "providers")
	m.tools = l.modules(doc, lookup(root, "tools"), "tools")
	m.hooks = l.modules(doc, lookup(root, "hooks"), "hooks")
	if inc := lookup(root, "includes"); inc != nil {
		l.report(CodeIncludesNotPrepared, diag.SeverityWarning, path, doc.nodeRange(inc),
			"includes are not prepared: declare every module inline so that it is in the mount plan")
	}
	l.configMentions(doc, root)
	for _, mt := range doc.mentions {
		l.mention(path, mt)
	}
	if a := lookup(root, "agents"); a != nil {
		for _, item := range seq(lookup(a, "include")) {
			l.agentFile(path, doc, item)
		}
		for i := 0; i+1 < len(a.Content); i += 2 {
			if name := a.Content[i].Value; name != "include" {
				if def := deref(a.Content[i+1]); def.Kind == yaml.MappingNode {
					l.agent(doc, def, name, path)
				}
			}
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
// the manifest, and loads it.
func (l *loader) agentFile(manifestPath string, doc *parsedDoc, item *yaml.Node) {
	name := scalar(item)
	rng := doc.nodeRange(item)
	if ns, bare, ok := strings.Cut(name, ":"); ok {
		if ns != l.bundle {
			l.report(diag.CodeBundleAgentMissing, diag.SeverityError, manifestPath, rng,
				"agent %s names bundle %s; a bundle includes only its own agents (%s:…)", name, ns, l.bundle)
			return
		}
		name = bare
	}
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		l.report(diag.CodeBundleAgentMissing, diag.SeverityError, manifestPath, rng, "agent name %q is not a file name", scalar(item))
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
	ad := parseDoc(path, src, schema.DocBundleAgent, l.opts)
	l.diags = append(l.diags, ad.diags()...)
	if ad.root == nil || diag.CountErrors(ad.diags()) > 0 {
		return
	}
	l.agent(ad, ad.root, name, path)
	l.configMentions(ad, ad.root)
	for _, mt := range ad.mentions {
		l.mention(ad.path, mt)
	}
}

// agent reads an agent definition: the front matter of agents/<name>.md,
// or a mapping inline in the manifest. Mentions are the caller's.
func (l *loader) agent(doc *parsedDoc, root *yaml.Node, name, path string) {
	a := agentSpec{name: name, path: path}
	if meta := lookup(root, "meta"); meta != nil {
		a.description = scalar(lookup(meta, "description"))
	} else {
		a.description = scalar(lookup(root, "description"))
	}
	a.modelRole = stringList(lookup(root, "model_role"))
	section := "agent " + name + ": "
	if s := lookup(root, "session"); s != nil {
		a.session = l.session(doc, s, section+"session")
	}
	a.providers = l.modules(doc, lookup(root, "providers"), section+"providers")
	a.tools = l.modules(doc, lookup(root, "tools"), section+"tools")
	a.hooks = l.modules(doc, lookup(root, "hooks"), section+"hooks")
	l.m.agents = append(l.m.agents, a)
}

// session reads a session block: mappings holding "module" are slots, the
// rest are settings.
func (l *loader) session(doc *parsedDoc, n *yaml.Node, section string) *sessionSpec {
	s := &sessionSpec{modules: make(map[string]*moduleSpec)}
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return s
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, deref(n.Content[i+1])
		if val.Kind == yaml.MappingNode && lookup(val, "module") != nil {
			if spec, ok := l.module(doc, val, section+"."+key); ok {
				s.slots = append(s.slots, key)
				s.modules[key] = &spec
			}
			continue
		}
		if s.settings == nil {
			s.settings = make(map[string]any)
		}
		s.settings[key] = plainValue(val)
	}
	return s
}

// modules reads a list of module entries.
func (l *loader) modules(doc *parsedDoc, n *yaml.Node, section string) []moduleSpec {
	var out []moduleSpec
	for _, item := range seq(n) {
		if spec, ok := l.module(doc, item, section); ok {
			out = append(out, spec)
		}
	}
	return out
}

// module reads one module entry and parses its source.
func (l *loader) module(doc *parsedDoc, n *yaml.Node, section string) (moduleSpec, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return moduleSpec{}, false
	}
	idNode := lookup(n, "module")
	spec := moduleSpec{section: section, module: scalar(idNode), file: doc.path, rng: doc.nodeRange(idNode)}
	if src := lookup(n, "source"); src != nil && src.Tag != "!!null" {
		if src.Kind != yaml.ScalarNode {
			l.report(diag.CodeBundleSource, diag.SeverityError, doc.path, doc.nodeRange(src),
				"module %s: source must be a string (git+URL@ref, file:// or a path)", spec.module)
			return spec, false
		}
		spec.source = scalar(src)
		parsed, err := ParseSource(spec.source)
		if err != nil {
			l.report(diag.CodeBundleSource, diag.SeverityError, doc.path, doc.nodeRange(src), "module %s: %v", spec.module, err)
			return spec, false
		}
		spec.parsed = parsed
	}
	if cfg := lookup(n, "config"); cfg != nil {
		if m, ok := plainValue(cfg).(map[string]any); ok {
			spec.config = m
		}
	}
	return spec, true
}

// configMentions resolves the @bundle:path mentions that are string values
// under root.
func (l *loader) configMentions(doc *parsedDoc, root *yaml.Node) {
	walkStrings(root, func(n *yaml.Node) {
		if !strings.HasPrefix(n.Value, "@") {
			return
		}
		for _, m := range syntax.FindMentions([]byte(n.Value), 0, syntax.NewLineIndex([]byte(n.Value))) {
			m.Range = doc.nodeRange(n)
			l.mention(doc.path, m)
		}
	})
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

// deref follows an alias.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// lookup returns the value of key in mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

// scalar returns a scalar's value, or "".
func scalar(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// seq returns a sequence's items, or nil.
func seq(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// stringList reads a string or a list of strings.
func stringList(n *yaml.Node) []string {
	n = deref(n)
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		if s := scalar(n); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, item := range seq(n) {
		if s := scalar(item); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// maxValueNodes bounds how many nodes plainValue and walkStrings visit, so
// that aliases cannot blow a small document up.
const maxValueNodes = 100_000

// plainValue converts n into values encoding/json can write: maps with
// string keys, slices, strings, numbers, booleans and nil.
func plainValue(n *yaml.Node) any {
	budget := maxValueNodes
	return plain(n, &budget)
}

func plain(n *yaml.Node, budget *int) any {
	n = deref(n)
	*budget--
	if n == nil || *budget < 0 {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = plain(n.Content[i+1], budget)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			s = append(s, plain(item, budget))
		}
		return s
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value
		}
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return n.Value
			}
		case nil, bool, int, int64, uint64, string:
		default:
			return n.Value
		}
		return v
	}
	return nil
}

// walkStrings calls fn for every string scalar under n that is a value,
// not a key.
func walkStrings(n *yaml.Node, fn func(*yaml.Node)) {
	budget := maxValueNodes
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		n = deref(n)
		budget--
		if n == nil || budget < 0 {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 1; i < len(n.Content); i += 2 {
				walk(n.Content[i])
			}
		case yaml.SequenceNode:
			for _, item := range n.Content {
				walk(item)
			}
		case yaml.ScalarNode:
			if n.Tag == "!!str" {
				fn(n)
			}
		}
	}
	walk(n)
}
