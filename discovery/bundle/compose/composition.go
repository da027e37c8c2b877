package compose

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/diag"
)

// Status is what became of one include.
type Status string

// The statuses of IncludeNode.
const (
	StatusLoaded     Status = "loaded"
	StatusShared     Status = "shared"     // the same URI was loaded elsewhere in the tree; its result is reused
	StatusPartial    Status = "partial"    // reused from a load without its includes
	StatusNotCached  Status = "not-cached" // a git URL not in the runtime's cache
	StatusUnresolved Status = "unresolved"
	StatusCycle      Status = "cycle"
	StatusFailed     Status = "failed"
)

// IncludeNode is one include of the tree: what was written, what it
// loaded, and what it includes in turn.
type IncludeNode struct {
	Source   string         `json:"source,omitempty"` // as written ("" for the bundle composed)
	Path     string         `json:"path,omitempty"`   // the file it loaded
	Name     string         `json:"name,omitempty"`   // its bundle.name
	Status   Status         `json:"status"`
	Message  string         `json:"message,omitempty"`
	Origin   Origin         `json:"origin,omitzero"` // the include line
	Includes []*IncludeNode `json:"includes,omitempty"`
}

// MountPlan is what the runtime mounts: to_mount_plan() of the composed
// bundle. Its JSON is the runtime's, key for key.
type MountPlan struct {
	Session   *bundle.Map
	Providers []*bundle.Map
	Tools     []*bundle.Map
	Hooks     []*bundle.Map
	Agents    []NamedAgent // in the runtime's order
	Spawn     *bundle.Map
}

// NamedAgent is one agent of a mount plan.
type NamedAgent struct {
	Name  string
	Value *bundle.Map
}

// MarshalJSON writes the plan as to_mount_plan() returns it: empty
// sections left out, agents a mapping by name.
func (p MountPlan) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	field := func(k string, v any) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		out, _ := json.Marshal(v)
		b.Write(out)
	}
	if p.Session.Len() > 0 {
		field("session", p.Session)
	}
	for _, s := range []struct {
		k string
		v []*bundle.Map
	}{{"providers", p.Providers}, {"tools", p.Tools}, {"hooks", p.Hooks}} {
		if len(s.v) > 0 {
			field(s.k, s.v)
		}
	}
	if len(p.Agents) > 0 {
		var ab bundle.MapBuilder
		for _, a := range p.Agents {
			ab.Set(a.Name, a.Value)
		}
		field("agents", ab.Map())
	}
	if p.Spawn.Len() > 0 {
		field("spawn", p.Spawn)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ModuleOrigin is where a module of the plan was declared, and where its
// configuration was merged from.
type ModuleOrigin struct {
	ID     string   `json:"id"`
	Origin Origin   `json:"origin"`
	Merged []Origin `json:"merged,omitempty"`
}

// Origins say where each part of the mount plan comes from.
type Origins struct {
	Session   map[string]Origin `json:"session,omitempty"` // by dotted key ("orchestrator.config.x")
	Spawn     map[string]Origin `json:"spawn,omitempty"`
	Providers []ModuleOrigin    `json:"providers,omitempty"`
	Tools     []ModuleOrigin    `json:"tools,omitempty"`
	Hooks     []ModuleOrigin    `json:"hooks,omitempty"`
	Agents    map[string]Origin `json:"agents,omitempty"`
}

// AgentRef is an agent of the composition and the file it resolves to.
type AgentRef struct {
	Name   string `json:"name"`
	Path   string `json:"path,omitempty"` // agents/NAME.md of its namespace; "" for an inline agent or none found
	Inline bool   `json:"inline,omitempty"`
	Origin Origin `json:"origin"`
	// Problem says why an included agent resolves to no file.
	Problem string `json:"problem,omitempty"`
	// UnknownNamespace says the problem is a namespace no bundle of the
	// composition has (perhaps one an include not in the cache has).
	UnknownNamespace bool `json:"unknown_namespace,omitempty"`
}

// ContextFile is a context file of the composition.
type ContextFile struct {
	Key    string `json:"key"`            // as the runtime keys it
	Ref    string `json:"ref,omitempty"`  // the ns:path written, for a namespaced include
	Path   string `json:"path,omitempty"` // where it resolves ("" when it does not)
	Exists bool   `json:"exists"`
	Origin Origin `json:"origin"`
	Size
	Problem          string `json:"problem,omitempty"`
	UnknownNamespace bool   `json:"unknown_namespace,omitempty"`
}

// Size is an estimate of what text costs: bytes, and tokens as the
// runtime estimates them (characters / 4).
type Size struct {
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
}

func sizeOf(f *bundle.File, span *bundle.Span) Size {
	if f == nil {
		return Size{}
	}
	if span != nil {
		chars := len([]rune(string(f.Text()[span.Start:span.End])))
		return Size{Bytes: span.Len(), Tokens: chars / 4}
	}
	return Size{Bytes: f.Size, Tokens: f.Chars() / 4}
}

// BundleSize is what one bundle file of the composition brings in.
type BundleSize struct {
	Path        string `json:"path"`
	Instruction Size   `json:"instruction"`
	Context     Size   `json:"context"` // the context files it declares
}

// Sizes estimate the text a composition puts before the model.
type Sizes struct {
	Bundles     []BundleSize `json:"bundles"`
	Instruction Size         `json:"instruction"` // the composed instruction (the last bundle's body)
	Context     Size         `json:"context"`     // every context file, once
	Total       Size         `json:"total"`
}

// Namespace is a namespace of the composition and its directory.
type Namespace struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
}

// Composition is a bundle composed with its includes, as the runtime's
// lenient load composes it. It is immutable.
type Composition struct {
	Path        string        `json:"path"`
	Name        string        `json:"name"`
	Version     string        `json:"version"`
	Description string        `json:"description,omitempty"`
	MountPlan   MountPlan     `json:"mount_plan"`
	Origins     Origins       `json:"origins"`
	Includes    IncludeNode   `json:"includes"`
	Agents      []AgentRef    `json:"agents,omitempty"`
	Context     []ContextFile `json:"context,omitempty"`
	Namespaces  []Namespace   `json:"namespaces,omitempty"`
	// Instruction is the file whose body is the composed instruction.
	Instruction string `json:"instruction,omitempty"`
	Sizes       Sizes  `json:"sizes"`
	// Refused says why the runtime's load of this bundle raises, where
	// amplidex composes what it can; empty when the runtime loads it.
	Refused     string            `json:"refused,omitempty"`
	Diagnostics []diag.Diagnostic `json:"diagnostics,omitempty"`
	// Reads are every path the composition read or looked for: when one
	// changes, the composition is stale.
	Reads []string `json:"-"`
}

// Compose loads the bundle file at path (a .md, .yaml or .yml file, or a
// directory holding bundle.md or bundle.yaml) with its includes, as the
// runtime's BundleRegistry.load does with the CLI's registrations, from
// the locations loc and through files only.
func Compose(loc *Locations, files Files, path string) *Composition {
	rec := &recorder{files: files}
	for _, p := range loc.Reads {
		rec.note(p)
	}
	l := &loader{loc: loc, files: rec, reg: map[string]*regEntry{}, loaded: map[string]*task{},
		pending: map[string]*task{}, seen: map[string]bool{}, cached: map[string]bool{}}
	for _, r := range loc.Registrations {
		l.register(r.Name, r.URI)
		if r.LocalPath != "" {
			l.reg[r.Name].local = r.LocalPath
		}
	}
	path = filepath.Clean(path)
	l.ownRepositories(path)

	top := &task{req: path, chain: map[string]bool{}, base: loc.Env.WorkDir, node: &IncludeNode{}}
	l.queue = append(l.queue, top)
	l.run()

	c := &Composition{Path: path, Includes: *top.node, Reads: nil}
	if top.file != nil {
		c.Path = top.file.Path
	}
	res := top.result
	switch {
	case top.fail != nil:
		c.Refused = top.fail.msg
		if top.file != nil {
			// The includes fail as a whole (a compose error): the bundle alone.
			res = top.own
		}
	case top.refused != "":
		c.Refused = top.refused
	}
	if res != nil {
		l.describe(c, res)
	}
	c.Diagnostics = l.diags
	diag.Sort(c.Diagnostics)
	c.Reads = rec.paths()
	return c
}

// ownRepositories is a ruling: a name the registry maps elsewhere (a
// well-known name, settings, registry.json) resolves to the repository
// the user stands in, or the one around the bundle composed, when that
// repository's root bundle has the name.
func (l *loader) ownRepositories(path string) {
	var roots []Found
	for d := filepath.Dir(path); ; {
		if p := rootBundleIn(l.files, d); p != "" {
			roots = append(roots, found(l.files, p, "repository", ""))
		}
		up := filepath.Dir(d)
		if up == d || len(roots) > 32 {
			break
		}
		d = up
	}
	roots = append(roots, l.loc.Repos...)
	for i := len(roots) - 1; i >= 0; i-- {
		r := roots[i]
		if e := l.reg[r.Name]; r.Name != "" && e != nil {
			e.uri, e.local = filepath.Dir(r.Path), ""
		}
	}
}

// describe fills the plan, origins, agents, context and sizes of c from
// the composed value.
func (l *loader) describe(c *Composition, v *value) {
	c.Name, c.Version, c.Description = v.name, v.version, v.description
	mp := &c.MountPlan
	if m, ok := v.session.(*bundle.Map); ok && m.Len() > 0 {
		mp.Session = m
	}
	if m, ok := v.spawn.(*bundle.Map); ok && m.Len() > 0 {
		mp.Spawn = m
	}
	plan := func(ms []module) ([]*bundle.Map, []ModuleOrigin) {
		var out []*bundle.Map
		var or []ModuleOrigin
		for _, m := range ms {
			out = append(out, m.entry)
			or = append(or, ModuleOrigin{ID: m.id, Origin: m.origin, Merged: m.merged})
		}
		return out, or
	}
	mp.Providers, c.Origins.Providers = plan(v.providers)
	mp.Tools, c.Origins.Tools = plan(v.tools)
	mp.Hooks, c.Origins.Hooks = plan(v.hooks)
	for k, o := range v.keyOrigins {
		sec, rest, ok := strings.Cut(k, ".")
		if !ok {
			continue
		}
		switch {
		case sec == "session" && mp.Session != nil:
			if c.Origins.Session == nil {
				c.Origins.Session = map[string]Origin{}
			}
			c.Origins.Session[rest] = o
		case sec == "spawn" && mp.Spawn != nil:
			if c.Origins.Spawn == nil {
				c.Origins.Spawn = map[string]Origin{}
			}
			c.Origins.Spawn[rest] = o
		}
	}
	for _, a := range v.agents {
		mp.Agents = append(mp.Agents, NamedAgent{Name: a.name, Value: a.value})
		if c.Origins.Agents == nil {
			c.Origins.Agents = map[string]Origin{}
		}
		c.Origins.Agents[a.name] = a.origin
		ref := AgentRef{Name: a.name, Inline: !a.included, Origin: a.origin}
		if a.included {
			ref.Path, ref.Problem, ref.UnknownNamespace = l.agentPath(v, a.name)
		}
		c.Agents = append(c.Agents, ref)
	}
	for _, ns := range v.sourceBasePaths {
		c.Namespaces = append(c.Namespaces, Namespace{Name: ns.ns, Dir: ns.dir})
	}
	if v.instruction != nil {
		c.Instruction = v.instruction.Path
		c.Sizes.Instruction = sizeOf(v.instruction, &v.instruction.Body)
	}
	seen := map[string]bool{}
	perFile := map[string]*Size{}
	for _, e := range v.context {
		cf := ContextFile{Key: e.key, Origin: e.origin, Path: e.path}
		if e.pending {
			cf.Ref = e.ref
			cf.Path, cf.Problem, cf.UnknownNamespace = l.pendingContext(v, e.ref)
		}
		if cf.Path != "" {
			switch l.files.Stat(cf.Path) {
			case RegularFile:
				cf.Exists = true
				if f, err := l.files.Parse(cf.Path, bundle.KindContext); err == nil {
					cf.Size = sizeOf(f, nil)
				}
			case Directory:
				cf.Exists = true
			default:
				cf.Problem = "no file at " + cf.Path
			}
		}
		if cf.Exists && !seen[cf.Path] {
			seen[cf.Path] = true
			c.Sizes.Context.Bytes += cf.Bytes
			c.Sizes.Context.Tokens += cf.Tokens
		}
		s := perFile[cf.Origin.Path]
		if s == nil {
			s = &Size{}
			perFile[cf.Origin.Path] = s
		}
		s.Bytes += cf.Bytes
		s.Tokens += cf.Tokens
		c.Context = append(c.Context, cf)
	}
	for _, f := range v.files {
		bs := BundleSize{Path: f.Path}
		if f.Bundle != nil && f.Bundle.HasInstruction {
			bs.Instruction = sizeOf(f, &f.Body)
		}
		if s := perFile[f.Path]; s != nil {
			bs.Context = *s
		}
		c.Sizes.Bundles = append(c.Sizes.Bundles, bs)
	}
	sort.SliceStable(c.Sizes.Bundles, func(i, j int) bool { return c.Sizes.Bundles[i].Path < c.Sizes.Bundles[j].Path })
	c.Sizes.Bundles = dedupeSizes(c.Sizes.Bundles)
	c.Sizes.Total = Size{Bytes: c.Sizes.Instruction.Bytes + c.Sizes.Context.Bytes, Tokens: c.Sizes.Instruction.Tokens + c.Sizes.Context.Tokens}
}

func dedupeSizes(s []BundleSize) []BundleSize {
	out := s[:0]
	for i, b := range s {
		if i > 0 && b.Path == s[i-1].Path {
			continue
		}
		out = append(out, b)
	}
	return out
}

// agentPath is resolve_agent_path: ns:name in its namespace's agents/,
// a bare name in the composed bundle's own agents/.
func (l *loader) agentPath(v *value, name string) (path, problem string, unknown bool) {
	ns, simple, ok := strings.Cut(name, ":")
	if !ok {
		if v.basePath == "" {
			return "", "the composed bundle has no directory", false
		}
		p := filepath.Join(v.basePath, "agents", name+".md")
		if l.files.Stat(p) == RegularFile {
			return p, "", false
		}
		return "", "a name without a namespace resolves in the composed bundle's own agents/, which has no " + name + ".md (" + p + ")", false
	}
	if dir, ok := v.getNS(ns); ok {
		p := filepath.Join(dir, "agents", simple+".md")
		if l.files.Stat(p) == RegularFile {
			return p, "", false
		}
		if ns != v.name {
			return "", "the namespace " + quote(ns) + " (" + dir + ") has no agents/" + simple + ".md", false
		}
	}
	if ns == v.name && v.basePath != "" {
		p := filepath.Join(v.basePath, "agents", simple+".md")
		if l.files.Stat(p) == RegularFile {
			return p, "", false
		}
		return "", "the namespace " + quote(ns) + " has no agents/" + simple + ".md", false
	}
	return "", "no bundle of this composition is named " + quote(ns) + " (namespaces: " + nsNames(v) + ")", true
}

// pendingContext is resolve_pending_context for one ns:path entry.
func (l *loader) pendingContext(v *value, ref string) (path, problem string, unknown bool) {
	ns, p, _ := strings.Cut(ref, ":")
	if dir, ok := v.getNS(ns); ok {
		return contextPath(dir, p), "", false
	}
	if ns == v.name && v.basePath != "" {
		return contextPath(v.basePath, p), "", false
	}
	if strings.HasPrefix(ns, "@") {
		return "", "the leading @ makes the namespace " + quote(ns) + ", which nothing is named: the runtime never resolves it", false
	}
	return "", "no bundle of this composition is named " + quote(ns) + ", so the runtime never resolves it (namespaces: " + nsNames(v) + ")", true
}

// Incomplete reports whether an include of the composition was not
// followed because it is not in the runtime's cache: what it would bring
// (namespaces, agents, context) is unknown.
func (c *Composition) Incomplete() bool {
	var walk func(n *IncludeNode) bool
	walk = func(n *IncludeNode) bool {
		if n.Status == StatusNotCached {
			return true
		}
		for _, ch := range n.Includes {
			if walk(ch) {
				return true
			}
		}
		return false
	}
	return walk(&c.Includes)
}

func nsNames(v *value) string {
	var names []string
	for _, n := range v.sourceBasePaths {
		names = append(names, n.ns)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
