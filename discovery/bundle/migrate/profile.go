package migrate

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// wellKnown reports whether the Amplifier CLI knows name as a bundle: a
// profile of a collection of that name is included as the bundle.
func wellKnown(name string) bool {
	for _, w := range compose.WellKnownBundles() {
		if w.Name == name {
			return true
		}
	}
	return false
}

// profile is one profile of the collection, read.
type profile struct {
	stem string // the file name without .md: the profile's name in references
	rel  string // under the base: profiles/STEM.md
	// fm is the front matter's mapping; nil when it cannot be read (a
	// note says why, and the profile is carried by its body alone).
	fm *yaml.Node
	// line0 is the file's line before the YAML's first line.
	line0 int
	src   []byte
	body  int  // where the body starts in src
	crlf  bool // the file's lines end in CRLF
	// name, version and description are the profile's own.
	name, version, description string
}

// line turns a line of the YAML text into the file's 1-based line.
func (p *profile) line(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 0
	}
	return p.line0 + n.Line
}

// readProfiles reads every profile's front matter.
func (m *migration) readProfiles() {
	for _, r := range m.c.Resources {
		if r.Kind != discovery.KindProfile {
			continue
		}
		p := &profile{stem: strings.TrimSuffix(path.Base(r.Rel), ".md"), rel: r.Rel}
		m.profiles = append(m.profiles, p)
		m.carried[r.Rel] = true
		src, ok := m.readFile(r.Rel)
		if !ok {
			continue
		}
		p.src, p.crlf = src, isCRLF(src)
		fm, err := syntax.SplitFrontMatter(src)
		switch {
		case errors.Is(err, syntax.ErrNoFrontMatter):
			p.body = fm.Open
			m.note(r.Rel, 0, "no front matter: behaviors/%s.yaml has only its name; the body is the instruction", p.stem)
		case err != nil:
			p.body = len(src)
			m.note(r.Rel, 0, "front matter not read (%s): not carried, nor the body after it; behaviors/%s.yaml has only its name", frontMatterError(err), p.stem)
		default:
			p.body = fm.BodyStart
			p.line0 = bytes.Count(src[:fm.Start], []byte("\n"))
			n, err := parseMapping(src[fm.Start:fm.End])
			if err != nil {
				m.note(r.Rel, p.line0, "front matter not carried: the YAML does not parse (%s); behaviors/%s.yaml has only its name", yamlError(err), p.stem)
				break
			}
			p.fm = n
		}
		p.readMeta(m)
	}
}

// isCRLF reports whether the first line of src ends in CRLF.
func isCRLF(src []byte) bool {
	i := bytes.IndexByte(src, '\n')
	return i > 0 && src[i-1] == '\r'
}

// frontMatterError says why a front matter block was not read.
func frontMatterError(err error) string {
	switch {
	case errors.Is(err, syntax.ErrUnterminated):
		return "it has no closing ---"
	case errors.Is(err, syntax.ErrFrontMatterTooLarge):
		return "it is larger than front matter is read"
	}
	return err.Error()
}

// yamlError shortens a YAML parser's message.
func yamlError(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// readMeta reads the profile's name, version and description from
// profile: (or meta:, which some profiles hold instead).
func (p *profile) readMeta(m *migration) {
	p.name, p.version = p.stem, m.version
	for _, sec := range []string{"profile", "meta"} {
		s := lookup(p.fm, sec)
		if s == nil || s.Kind != yaml.MappingNode {
			continue
		}
		if v, ok := str(lookup(s, "name")); ok && v != "" {
			p.name = v
		}
		if v, ok := str(lookup(s, "version")); ok && v != "" {
			p.version = v
		}
		if v, ok := str(lookup(s, "description")); ok {
			p.description = v
		}
		return
	}
}

// behaviorName is the bundle.name of a profile's behavior.
func (m *migration) behaviorName(p *profile) string {
	return m.ns + "-" + p.stem + "-behavior"
}

// behavior writes behaviors/STEM.yaml: the profile's configuration, its
// extends as includes.
func (m *migration) behavior(p *profile) {
	out := newMapping()
	meta := newMapping()
	meta.set("name", scalar(m.behaviorName(p)))
	meta.set("version", scalar(p.version))
	if p.description != "" {
		meta.set("description", scalar(p.description))
	}
	out.set("bundle", meta.n)
	var includes []*yaml.Node
	sections := map[string]*yaml.Node{}
	var agents *yaml.Node
	for _, kv := range pairs(p.fm) {
		key, ok := str(kv.key)
		if !ok {
			m.note(p.rel, p.line(kv.key), "the key %s not carried: a bundle's keys are names", kv.key.Value)
			continue
		}
		switch key {
		case "profile", "meta":
			includes = append(includes, m.profileSection(p, key, kv.val)...)
		case "inherits":
			includes = append(includes, m.inherits(p, kv.val)...)
		case "session":
			sections[key] = m.session(p, kv.val)
		case "providers", "tools", "hooks":
			sections[key] = m.moduleList(p, key, kv.val)
		case "agents":
			agents = m.agentSelection(p, kv.val)
		case "exclude":
			m.note(p.rel, p.line(kv.key), "exclude not carried: a bundle cannot take away what its includes bring; leave the include out, or override the module's configuration")
		case "ui":
			m.note(p.rel, p.line(kv.key), "ui not carried: display settings belong to the application (its settings.yaml), not to a bundle")
		case "task":
			m.note(p.rel, p.line(kv.key), "task not carried: a bundle has no task: section; the delegate tool's configuration (tools:) or spawn: sets what sub-sessions get")
		default:
			m.note(p.rel, p.line(kv.key), "the key %s not carried: a bundle has no such section", key)
		}
	}
	if len(includes) > 0 {
		out.set("includes", seq(includes...))
	}
	for _, k := range []string{"session", "providers", "tools", "hooks"} {
		if v := sections[k]; v != nil {
			out.set(k, v)
		}
	}
	if agents != nil {
		out.set("agents", agents)
	}
	data, err := encode(out.n)
	if err != nil {
		m.note(p.rel, 0, "front matter not carried: it cannot be written as YAML (%s)", yamlError(err))
		data, _ = encode(newMapping().n)
	}
	m.add(&File{Path: "behaviors/" + p.stem + ".yaml", Data: data, From: m.rel(p.rel)})
}

// profileSection reads profile: (or meta:): name, version and
// description went to the behavior's bundle:, extends to its includes.
func (m *migration) profileSection(p *profile, key string, v *yaml.Node) []*yaml.Node {
	if v.Kind != yaml.MappingNode {
		if !isNull(v) {
			m.note(p.rel, p.line(v), "%s: is %s, not a mapping: not carried", key, kindName(v))
		}
		return nil
	}
	var includes []*yaml.Node
	for _, kv := range pairs(v) {
		switch kv.key.Value {
		case "name", "version", "description":
		case "extends":
			includes = append(includes, m.extends(p, kv.val)...)
		case "model":
			m.note(p.rel, p.line(kv.key), "%s.model not carried: a bundle names no model; the provider's configuration (default_model) or an agent's model_role chooses it", key)
		default:
			m.note(p.rel, p.line(kv.key), "%s.%s not carried: bundle: holds a name, a version and a description only", key, kv.key.Value)
		}
	}
	return includes
}

// inherits reads inherits:, a list of profiles some collections write for
// extends.
func (m *migration) inherits(p *profile, v *yaml.Node) []*yaml.Node {
	m.note(p.rel, p.line(v), "inherits read as extends: each profile it names is included")
	if v.Kind == yaml.SequenceNode {
		var out []*yaml.Node
		for _, it := range v.Content {
			out = append(out, m.extends(p, it)...)
		}
		return out
	}
	return m.extends(p, v)
}

// extends turns an extends reference into an include.
func (m *migration) extends(p *profile, v *yaml.Node) []*yaml.Node {
	ref, ok := str(v)
	if !ok || ref == "" {
		if !isNull(v) {
			m.note(p.rel, p.line(v), "extends is %s, not a profile's name: not carried", kindName(v))
		}
		return nil
	}
	coll, rest, qualified := strings.Cut(ref, ":")
	if !qualified {
		coll, rest = "", ref
	}
	stem := strings.TrimSuffix(path.Base(rest), ".md")
	var src string
	switch {
	case !qualified || m.aliases[coll]:
		src = m.ns + ":behaviors/" + stem
		if m.findProfileStem(stem) == nil {
			m.note(p.rel, p.line(v), "extends %s not carried: the collection has no profile %s, so %s would resolve to nothing (and the runtime would refuse every bundle that includes this behavior)", ref, stem, src)
			return nil
		}
	case wellKnown(coll):
		src = coll
		m.note(p.rel, p.line(v), "extends %s became the bundle %s, which the runtime knows by name: what it composes is today's %s, not the profile %s of the collection %s; compare them", ref, coll, coll, stem, coll)
	default:
		src = coll + ":behaviors/" + stem
		m.note(p.rel, p.line(v), "extends %s became %s, where migrating the collection %s puts the profile: the runtime resolves it once a bundle named %s is registered (bundle.added in settings.yaml) or its URI replaces the name", ref, src, coll, coll)
	}
	inc := newMapping()
	inc.set("bundle", scalar(src))
	if ref != src {
		inc.n.Content[1].LineComment = "# extends " + ref
	}
	return []*yaml.Node{inc.n}
}

// findProfileStem returns the profile whose file name is stem.
func (m *migration) findProfileStem(stem string) *profile {
	for _, p := range m.profiles {
		if p.stem == stem {
			return p
		}
	}
	return nil
}

// session carries session: as it is, with its module sources made
// relative to behaviors/.
func (m *migration) session(p *profile, v *yaml.Node) *yaml.Node {
	if v.Kind != yaml.MappingNode {
		return v
	}
	for _, k := range []string{"orchestrator", "context"} {
		e := lookup(v, k)
		if e == nil || e.Kind != yaml.MappingNode {
			continue
		}
		if lookup(e, "module") == nil {
			if id, where := m.inheritedModule(p.fm, m.c, k, 0); id != "" {
				e.Content = append([]*yaml.Node{scalar("module"), scalar(id)}, e.Content...)
				m.note(p.rel, p.line(e), "session.%s names no module: it is %s, as the profile it extends (%s) has it; a bundle's session entry names its module", k, id, where)
			} else {
				m.note(p.rel, p.line(e), "session.%s names no module, nor does a profile it extends that is installed: name it (module: ID), or the bundle's session entry is dropped", k)
			}
		}
		m.moduleEntry(p, "session."+k, e)
	}
	return v
}

// inheritedModule finds, up the extends of the front matter fm (of a
// profile of collection c), the module of session.KEY: its id and the
// profile that names it.
func (m *migration) inheritedModule(fm *yaml.Node, c *discovery.Collection, key string, depth int) (id, where string) {
	if depth > 16 {
		return "", ""
	}
	ref, ok := str(lookup(lookup(fm, "profile"), "extends"))
	if !ok || ref == "" {
		return "", ""
	}
	coll, rest, qualified := strings.Cut(ref, ":")
	if !qualified {
		coll, rest = c.Name, ref
	}
	stem := strings.TrimSuffix(path.Base(rest), ".md")
	var parent *yaml.Node
	var pc *discovery.Collection
	if c == m.c && (!qualified || m.aliases[coll]) {
		if q := m.findProfileStem(stem); q != nil {
			parent, pc = q.fm, m.c
		}
	} else {
		for _, o := range append([]*discovery.Collection{m.c}, m.opts.Installed...) {
			if o == nil || o.Name != coll {
				continue
			}
			r, ok := o.Resource(discovery.KindProfile, stem)
			if !ok {
				break
			}
			src, err := syntax.ReadFile(r.Path, 0)
			if err != nil {
				break
			}
			if fmr, err := syntax.SplitFrontMatter(src); err == nil {
				parent, _ = parseMapping(src[fmr.Start:fmr.End])
				pc = o
			}
			break
		}
	}
	if parent == nil {
		return "", ""
	}
	if s, ok := str(lookup(lookup(lookup(parent, "session"), key), "module")); ok && s != "" {
		return s, coll + ":" + stem
	}
	return m.inheritedModule(parent, pc, key, depth+1)
}

// moduleList carries providers:, tools: or hooks:, with each entry's
// source made relative to behaviors/.
func (m *migration) moduleList(p *profile, sec string, v *yaml.Node) *yaml.Node {
	if v.Kind != yaml.SequenceNode {
		return v
	}
	for _, e := range v.Content {
		if e.Kind == yaml.MappingNode {
			m.moduleEntry(p, sec, e)
		}
	}
	return v
}

// moduleEntry rebases a module's relative source from the collection's
// root to behaviors/, and gives a module of the collection's modules/
// without a source its directory.
func (m *migration) moduleEntry(p *profile, sec string, e *yaml.Node) {
	id, _ := str(lookup(e, "module"))
	srcNode := lookup(e, "source")
	if s, ok := str(srcNode); ok {
		if strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") {
			rebased := "../" + path.Clean(s)
			m.note(p.rel, p.line(srcNode), "%s: the source %s, relative to the collection, is %s from behaviors/, where the runtime resolves it", sec, s, rebased)
			srcNode.Value, srcNode.Style = rebased, 0
			m.target(s) // carried, when it is in the collection
		}
		return
	}
	if srcNode == nil && id != "" && m.modules[id] {
		src := "../modules/" + id
		at := len(e.Content)
		for i := 0; i+1 < len(e.Content); i += 2 {
			if e.Content[i].Value == "module" {
				at = i + 2
			}
		}
		e.Content = slices.Insert(e.Content, at, scalar("source"), scalar(src))
		m.note(p.rel, p.line(e), "%s: the module %s has no source; it is the collection's modules/%s, so the behavior names it (source: %s)", sec, id, id, src)
	}
}

// agentSelection turns a profile's agents: into a bundle's agents:.
func (m *migration) agentSelection(p *profile, v *yaml.Node) *yaml.Node {
	line := p.line(v)
	var names []string
	inline := newMapping()
	all := func(why string) {
		for _, a := range m.agents {
			names = append(names, m.ns+":"+a)
		}
		if len(m.agents) > 0 {
			m.note(p.rel, line, "%s: every agent of the collection (%d) is included; agents of other collections are not", why, len(m.agents))
		}
	}
	switch v.Kind {
	case yaml.ScalarNode:
		switch s, _ := str(v); s {
		case "":
			return nil
		case "all":
			all("agents: all")
		case "none":
			m.note(p.rel, line, "agents: none not carried: a bundle cannot take away the agents its includes bring")
			return nil
		default:
			m.note(p.rel, line, "agents: %s not carried: it is not all, none or a list", s)
			return nil
		}
	case yaml.SequenceNode:
		names = m.agentNames(p, v, names)
	case yaml.MappingNode:
		for _, kv := range pairs(v) {
			switch k, _ := str(kv.key); k {
			case "include", "active":
				if kv.val.Kind == yaml.SequenceNode {
					names = m.agentNames(p, kv.val, names)
				} else {
					m.note(p.rel, p.line(kv.val), "agents.%s is %s, not a list: not carried", k, kindName(kv.val))
				}
			case "dirs":
				if lookup(v, "active") != nil || lookup(v, "include") != nil {
					m.note(p.rel, p.line(kv.key), "agents.dirs not carried: the agents named are included from the collection's agents/")
					continue
				}
				if own := ownAgentDirs(kv.val); own {
					all("agents.dirs names the collection's agents/")
				} else {
					m.note(p.rel, p.line(kv.key), "agents.dirs not carried: a bundle finds agents in its own agents/ only; move the files there")
				}
			case "inline":
				if kv.val.Kind != yaml.MappingNode {
					m.note(p.rel, p.line(kv.val), "agents.inline is %s, not a mapping: not carried", kindName(kv.val))
					continue
				}
				for _, a := range pairs(kv.val) {
					inline.setKey(a.key, a.val)
				}
			default:
				m.note(p.rel, p.line(kv.key), "agents.%s not carried: a bundle's agents: takes include: and inline definitions", k)
			}
		}
	default:
		m.note(p.rel, line, "agents: is %s: not carried", kindName(v))
		return nil
	}
	out := newMapping()
	var include []*yaml.Node
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			include = append(include, scalar(n))
		}
	}
	if len(include) > 0 {
		out.set("include", seq(include...))
	}
	out.n.Content = append(out.n.Content, inline.n.Content...)
	if out.empty() {
		return nil
	}
	return out.n
}

// ownAgentDirs reports whether agents.dirs names only the collection's
// own agents/ directory.
func ownAgentDirs(v *yaml.Node) bool {
	var dirs []*yaml.Node
	switch v.Kind {
	case yaml.SequenceNode:
		dirs = v.Content
	case yaml.ScalarNode:
		dirs = []*yaml.Node{v}
	}
	if len(dirs) == 0 {
		return false
	}
	for _, d := range dirs {
		s, _ := str(d)
		if path.Clean(strings.TrimSuffix(s, "/")) != "agents" {
			return false
		}
	}
	return true
}

// agentNames appends the bundle names of the agents a list names: the
// collection's own as NS:name, another collection's as C:name.
func (m *migration) agentNames(p *profile, list *yaml.Node, out []string) []string {
	for _, it := range list.Content {
		name, ok := str(it)
		if !ok || name == "" {
			m.note(p.rel, p.line(it), "the agent entry %s not carried: an agent is named by a string", kindName(it))
			continue
		}
		out = append(out, m.agentRef(p, name, p.line(it)))
	}
	return out
}

// agentRef is the name a bundle includes the agent name by.
func (m *migration) agentRef(p *profile, name string, line int) string {
	if coll, n, ok := strings.Cut(name, ":"); ok {
		if m.aliases[coll] {
			return m.ns + ":" + n
		}
		return name
	}
	if slices.Contains(m.agents, name) {
		return m.ns + ":" + name
	}
	for _, o := range m.opts.Installed {
		if o == nil || sameCollection(o, m.c) {
			continue
		}
		if _, ok := o.Resource(discovery.KindAgent, name); ok {
			m.note(p.rel, line, "the agent %s is the collection %s's: included as %s, which the runtime finds only when a bundle named %s is part of the composition", name, o.Name, o.Name+":"+name, o.Name)
			return o.Name + ":" + name
		}
	}
	m.note(p.rel, line, "the agent %s is no collection's that is installed: kept as written", name)
	return name
}

// variant writes bundles/STEM.md: the bundle to run in the profile's
// place, its behavior and its instruction.
func (m *migration) variant(p *profile) {
	out := newMapping()
	meta := newMapping()
	meta.set("name", scalar(m.ns+"-"+p.stem))
	meta.set("version", scalar(p.version))
	if p.description != "" {
		meta.set("description", scalar(p.description))
	}
	out.set("bundle", meta.n)
	inc := newMapping()
	inc.set("bundle", scalar(m.ns+":behaviors/"+p.stem))
	out.set("includes", seq(inc.n))
	m.markdown("bundles/"+p.stem+".md", out.n, p, m.rel(p.rel))
}

// rootBundle writes bundle.md: the collection's name, version and
// description; the behaviors of the root's profiles; the instruction of
// its one profile.
func (m *migration) rootBundle() {
	out := newMapping()
	meta := newMapping()
	meta.set("name", scalar(m.ns))
	meta.set("version", scalar(m.version))
	if m.description != "" {
		meta.set("description", scalar(m.description))
	}
	out.set("bundle", meta.n)
	var includes []*yaml.Node
	chooses := false
	for _, p := range m.root {
		inc := newMapping()
		inc.set("bundle", scalar(m.ns+":behaviors/"+p.stem))
		includes = append(includes, inc.n)
		if lookup(p.fm, "agents") != nil {
			chooses = true
		}
	}
	if len(includes) > 0 {
		out.set("includes", seq(includes...))
	}
	if !chooses && len(m.agents) > 0 {
		var names []*yaml.Node
		for _, a := range m.agents {
			names = append(names, scalar(m.ns+":"+a))
		}
		agents := newMapping()
		agents.set("include", seq(names...))
		out.set("agents", agents.n)
		if len(m.root) > 0 {
			m.noteAt("", 0, "no profile of bundle.md names its agents: bundle.md includes every agent of the collection (%d)", len(m.agents))
		}
	}
	var body *profile
	if len(m.root) == 1 {
		body = m.root[0]
	} else if len(m.root) > 1 {
		m.noteAt("", 0, "bundle.md has no instruction of its own: each profile's is in bundles/PROFILE.md; the runtime takes the instruction of the last bundle included that has one")
	}
	m.markdown("bundle.md", out.n, body, "")
}

// markdown writes a bundle file: front matter, then p's body (none for a
// nil p) with its mentions rewritten.
func (m *migration) markdown(file string, fm *yaml.Node, p *profile, from string) {
	data, err := encode(fm)
	if err != nil {
		data = nil
	}
	nl := "\n"
	if p != nil && p.crlf {
		nl = "\r\n"
		data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	}
	var b bytes.Buffer
	b.WriteString("---" + nl)
	b.Write(data)
	b.WriteString("---" + nl)
	if p != nil && p.src != nil {
		b.Write(m.body(p.src, p.body, p.rel))
	}
	m.add(&File{Path: file, Data: b.Bytes(), From: from})
}
