package migrate

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/syntax"
)

var (
	// agentKeys are the keys of a bundle's agent file besides meta:.
	agentKeys = []string{"tools", "providers", "hooks", "session", "provider_preferences", "model_role", "agents"}
	// metaKeys are the keys of an agent's meta:.
	metaKeys = []string{"name", "description", "model_role", "provider_preferences", "version"}
)

// agent writes agents/NAME.md with its name and description under meta:.
func (m *migration) agent(r discovery.Resource) {
	m.carried[r.Rel] = true
	src, ok := m.readFile(r.Rel)
	if !ok {
		return
	}
	out := &File{Path: r.Rel, From: m.rel(r.Rel)}
	defer m.add(out)
	fm, err := syntax.SplitFrontMatter(src)
	switch {
	case errors.Is(err, syntax.ErrNoFrontMatter):
		meta := newMapping()
		meta.set("name", scalar(r.Name))
		desc, line := describe(src[fm.Open:], r.Name)
		meta.set("description", scalar(desc))
		if line > 0 {
			line += bytes.Count(src[:fm.Open], []byte("\n"))
			m.note(r.Rel, 0, "no front matter: meta: added, its description taken from line %d; review it", line)
		} else {
			m.note(r.Rel, 0, "no front matter: meta: added, with a description to write")
		}
		top := newMapping()
		top.set("meta", meta.n)
		out.Data = m.frontMatter(top.n, isCRLF(src), src, 0, r.Rel)
		return
	case err != nil:
		out.Data = src
		m.note(r.Rel, 0, "copied as it is: its front matter is not read (%s); fix it, then put name and description under meta:", frontMatterError(err))
		return
	}
	line0 := bytes.Count(src[:fm.Start], []byte("\n"))
	n, err := parseMapping(src[fm.Start:fm.End])
	if err != nil {
		out.Data = src
		m.note(r.Rel, line0, "copied as it is: the front matter's YAML does not parse (%s); fix it, then put name and description under meta:", yamlError(err))
		return
	}
	lineOf := func(n *yaml.Node) int {
		if n == nil || n.Line == 0 {
			return 0
		}
		return line0 + n.Line
	}
	metaIn := lookup(n, "meta")
	if metaIn != nil && metaIn.Kind != yaml.MappingNode {
		if !isNull(metaIn) {
			m.note(r.Rel, lineOf(metaIn), "meta: is %s, not a mapping: not carried", kindName(metaIn))
		}
		metaIn = nil
	}
	meta := newMapping()
	for _, k := range []string{"name", "description"} {
		v := lookup(metaIn, k)
		if v == nil {
			v = lookup(n, k)
		}
		if s, ok := str(v); ok && strings.TrimSpace(s) != "" {
			meta.set(k, v)
			continue
		}
		if k == "name" {
			meta.set(k, scalar(r.Name))
			continue
		}
		desc, line := describe(src[fm.BodyStart:], r.Name)
		meta.set(k, scalar(desc))
		if line > 0 {
			m.note(r.Rel, 0, "no description: meta.description taken from line %d; review it", line+bytes.Count(src[:fm.BodyStart], []byte("\n")))
		} else {
			m.note(r.Rel, 0, "no description: the runtime offers an agent by its description; write one in meta.description")
		}
	}
	for _, kv := range pairs(metaIn) {
		k, _ := str(kv.key)
		switch {
		case k == "name" || k == "description":
		case slices.Contains(metaKeys, k):
			meta.setKey(kv.key, kv.val)
		default:
			m.note(r.Rel, lineOf(kv.key), "meta.%s not carried: meta: holds name, description, model_role, provider_preferences and version", kv.key.Value)
		}
	}
	top := newMapping()
	top.set("meta", meta.n)
	for _, kv := range pairs(n) {
		k, _ := str(kv.key)
		switch {
		case k == "meta":
		case k == "name" || k == "description":
			if metaIn != nil && lookup(metaIn, k) != nil {
				m.note(r.Rel, lineOf(kv.key), "%s not carried: meta.%s is the agent's", k, k)
			}
		case slices.Contains(agentKeys, k):
			top.setKey(kv.key, kv.val)
		default:
			m.note(r.Rel, lineOf(kv.key), "%s", agentKeyNote(kv.key.Value))
		}
	}
	out.Data = m.frontMatter(top.n, isCRLF(src), src, fm.BodyStart, r.Rel)
}

// agentKeyNote says why a key of a collection's agent is not carried.
func agentKeyNote(k string) string {
	switch k {
	case "model":
		return "model not carried: a bundle's agent chooses its model by meta.model_role (coding, reasoning, fast, …) or provider_preferences"
	case "capabilities", "keywords", "priority":
		return k + " not carried: the runtime offers an agent by its meta.description alone; say there what " + k + " said"
	case "config":
		return "config not carried: a bundle's agent has no config:; configure the module it is for (tools:, providers:)"
	case "system":
		return "system not carried: the agent's instruction is its body"
	}
	return k + " not carried: a bundle's agent has no such key"
}

// frontMatter returns a Markdown file: the front matter fm, then src from
// body on with its mentions rewritten.
func (m *migration) frontMatter(fm *yaml.Node, crlf bool, src []byte, body int, rel string) []byte {
	data, err := encode(fm)
	if err != nil {
		m.note(rel, 0, "front matter not carried: it cannot be written as YAML (%s)", yamlError(err))
		data = nil
	}
	nl := "\n"
	if crlf {
		nl = "\r\n"
		data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	}
	var b bytes.Buffer
	b.WriteString("---" + nl)
	b.Write(data)
	b.WriteString("---" + nl)
	b.Write(m.body(src, body, rel))
	return b.Bytes()
}

// describe finds a description in a Markdown body: its first heading,
// else its first line of text, and the 1-based line it is on; for a body
// with no text, a sentence naming the agent and line 0.
func describe(body []byte, name string) (string, int) {
	inFence := false
	for i, line := range strings.Split(string(body), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" || t == "---" {
			continue
		}
		t = strings.TrimSpace(strings.TrimLeft(t, "#>*-"))
		if t == "" {
			continue
		}
		if utf8.RuneCountInString(t) > 200 {
			r := []rune(t)
			t = string(r[:200]) + "…"
		}
		return t, i + 1
	}
	return "The " + name + " agent.", 0
}

// mention is an @collection:path in a body: where its @ is, the path
// without the punctuation that ends a sentence, and that punctuation when
// the bundle runtime reads it as part of the path (a trailing . or :).
type mention struct {
	off        int
	coll, path string
	kept       string
	line       int // 1-based
}

// mentions returns the mentions of src from `from` on, sorted: those the
// collection's runtime read (outside code and double quotes) and those
// the bundle runtime reads (outside code; quotes do not hide them).
func mentions(src []byte, from int) []mention {
	lines := syntax.NewLineIndex(src)
	body := src[from:]
	bl := syntax.NewLineIndex(body)
	f := bundle.Parse("body.md", body, bundle.Options{Rel: "context/body.md", Kind: bundle.KindContext})
	runtime := map[int]string{} // the text the bundle runtime reads, by offset
	for _, mt := range f.Mentions() {
		runtime[from+bl.PositionOffset(mt.Range.Start)] = mt.Text
	}
	kept := func(off int, coll, p string) string {
		rest, ok := strings.CutPrefix(runtime[off], "@"+coll+":"+p)
		if ok && strings.Trim(rest, ".:") == "" {
			return rest
		}
		return ""
	}
	seen := map[int]bool{}
	var out []mention
	for _, mt := range syntax.FindMentions(src, from, lines) {
		off := lines.PositionOffset(mt.Range.Start)
		seen[off] = true
		out = append(out, mention{off, mt.Collection, mt.Path, kept(off, mt.Collection, mt.Path), mt.Range.Start.Line + 1})
	}
	for off, text := range runtime {
		coll, p, ok := strings.Cut(strings.TrimPrefix(text, "@"), ":")
		if !ok || seen[off] || coll == "" {
			continue
		}
		p = strings.TrimRight(p, ".:")
		if p == "" {
			continue
		}
		out = append(out, mention{off, coll, p, kept(off, coll, p), lines.Position(off).Line + 1})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].off < out[j].off })
	return out
}

// body returns src from `from` on with its mentions rewritten: the
// collection's own under its bundle name, a profile's under the file that
// holds its instruction, and any that ends a sentence in parentheses, so
// that the bundle runtime does not read the . or : as part of the path.
// The paths the collection's own mentions name are carried.
func (m *migration) body(src []byte, from int, rel string) []byte {
	var out []byte
	last := from
	punct := 0
	for _, mt := range mentions(src, from) {
		old := "@" + mt.coll + ":" + mt.path
		if mt.off < last || !bytes.HasPrefix(src[mt.off:], []byte(old)) {
			continue
		}
		coll, newPath := mt.coll, mt.path
		if m.aliases[mt.coll] {
			coll = m.ns
			if p := m.mentionedProfile(mt.path); p != nil {
				newPath = m.instructionFile(p)
				m.note(rel, mt.line, "@%s: the profile's instruction is now in %s; the mention names that file, front matter and all", old[1:], newPath)
			} else {
				m.target(mt.path)
			}
		}
		if coll == mt.coll && newPath == mt.path && mt.kept == "" {
			continue
		}
		if coll != mt.coll {
			if m.rewrites[rel] == nil {
				m.rewrites[rel] = map[string]int{}
			}
			m.rewrites[rel][mt.coll]++
		}
		text := "@" + coll + ":" + newPath
		if mt.kept != "" {
			text = "(" + text + ")"
			punct++
		}
		out = append(out, src[last:mt.off]...)
		out = append(out, text...)
		last = mt.off + len(old)
	}
	if punct > 0 {
		m.note(rel, 0, "%s put in parentheses, since the bundle runtime would read the . or : after each as part of its path", count(punct, "mention")+" ending a sentence")
	}
	if out == nil {
		return src[from:]
	}
	return append(out, src[last:]...)
}

// mentionedProfile returns the profile a mention's path names.
func (m *migration) mentionedProfile(p string) *profile {
	p = path.Clean(p)
	for _, q := range m.profiles {
		if q.rel == p {
			return q
		}
	}
	return nil
}

// target records a path a mention names, to be carried.
func (m *migration) target(p string) {
	if p == "" || strings.ContainsAny(p, "*?[") || path.IsAbs(p) {
		return
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || slices.Contains(m.targets, p) {
		return
	}
	m.targets = append(m.targets, p)
}

// rewriteNotes says, per file, how many mentions changed the name they
// call the collection by.
func (m *migration) rewriteNotes() {
	rels := make([]string, 0, len(m.rewrites))
	for rel := range m.rewrites {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	for _, rel := range rels {
		byName := m.rewrites[rel]
		names := make([]string, 0, len(byName))
		for n := range byName {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			count := byName[n]
			what := "mention"
			if count > 1 {
				what = "mentions"
			}
			m.note(rel, 0, "%d %s of @%s:… now @%s:… (%s is this collection's name as its directory calls it)", count, what, n, m.ns, n)
		}
	}
}
