package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// ComposedView is what the runtime mounts for the bundle of a bundle
// repository's document, written for an editor to show beside it.
type ComposedView struct {
	// Bundle is the bundle file composed: the document itself, or the
	// bundle of its repository that includes it.
	Bundle string
	// Text is the view, in Markdown: the includes, session, providers,
	// tools, hooks, agents and context of the mount plan, each with its
	// origin as a link, and the size estimates.
	Text string
	// Links are the Markdown links of Text, where they are.
	Links []ViewLink
	// Refused says why the runtime's load of the bundle raises, where
	// amplidex composes what it can.
	Refused string
	// Incomplete says an include is not in the runtime's cache: what it
	// brings is missing from the view.
	Incomplete bool
}

// ViewLink is one link of a ComposedView's Text: the whole
// [label](target) on one line, in UTF-16 columns.
type ViewLink struct {
	Line  int // 0-based
	Start int
	End   int
	// Path is the file linked to, TargetLine the line in it (1-based; 0
	// for the file as a whole).
	Path       string
	TargetLine int
}

// ComposedBundle returns what the runtime mounts for the bundle of the
// document at path, given its unsaved text and the other open buffers,
// as a Markdown view; an error when path is no document of a bundle
// repository, nil, nil when ctx is done. The bundle composed is the
// document when it is a bundle that no other bundle of its repository
// includes; else the repository's root bundle (the nearest bundle.md or
// bundle.yaml at or above it) when that includes the document, else the
// first bundle of the repository that includes it, else the root bundle.
// The view says which, and why.
func (w *Workspace) ComposedBundle(ctx context.Context, path string, text []byte, overlay map[string][]byte) (*ComposedView, error) {
	b := w.bundleDocOf(path, text, overlay)
	if b == nil {
		return nil, fmt.Errorf("%s is no document of a bundle repository (no bundle.md or bundle.yaml at or above it)", path)
	}
	res := w.checkBundle(b)
	if ctx.Err() != nil {
		return nil, nil
	}
	c, why := pickComposition(res, b)
	if c == nil {
		return nil, fmt.Errorf("the repository of %s has no bundle the runtime can compose", path)
	}
	v := &composedView{root: b.root, files: b.files}
	v.render(c, why)
	return &ComposedView{Bundle: c.Path, Text: v.b.String(), Links: v.links,
		Refused: c.Refused, Incomplete: c.Incomplete()}, nil
}

// pickComposition returns the composition to show for the document of b
// and a sentence saying why it is that one.
func pickComposition(res *check.Result, b *bundleDoc) (*compose.Composition, string) {
	own := res.Compositions[b.path]
	root := res.Compositions[res.Repo.RootBundle]
	if own != nil && own == root {
		return own, "this bundle, the repository's root bundle"
	}
	if root != nil && brings(root, b.path) {
		return root, "the repository's root bundle " + linkSentinel(root.Path) + ", which includes this file"
	}
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range res.Compositions {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range paths {
		if c := res.Compositions[p]; c != own && brings(c, b.path) {
			return c, linkSentinel(c.Path) + ", which includes this file (the repository's root bundle does not)"
		}
	}
	if own != nil {
		return own, "this bundle, which no bundle of the repository includes"
	}
	if root != nil {
		return root, "the repository's root bundle " + linkSentinel(root.Path) + ", which does not include this file"
	}
	return nil, ""
}

// brings reports whether the composition c includes the file at p: as a
// bundle of its include tree, an agent file, a context file or the
// instruction.
func brings(c *compose.Composition, p string) bool {
	if c.Instruction == p {
		return true
	}
	var walk func(n *compose.IncludeNode) bool
	walk = func(n *compose.IncludeNode) bool {
		for _, ch := range n.Includes {
			if ch.Path == p || walk(ch) {
				return true
			}
		}
		return false
	}
	if walk(&c.Includes) {
		return true
	}
	for _, a := range c.Agents {
		if a.Path == p {
			return true
		}
	}
	for _, cf := range c.Context {
		if cf.Path == p {
			return true
		}
	}
	return false
}

// linkSentinel marks, in a sentence given to render, where the link to
// the file at p goes: render replaces it.
func linkSentinel(p string) string { return "\x00" + p + "\x00" }

// composedView writes a composition as Markdown, noting its links.
type composedView struct {
	root  string        // paths are shown relative to it
	files compose.Files // what the sizes of agent files are read from
	b     strings.Builder
	line  int // of the text written so far
	col   int // UTF-16 units on the current line
	links []ViewLink
}

// maxViewDiagnostics bounds the problems the view lists.
const maxViewDiagnostics = 20

func (v *composedView) write(s string) {
	v.b.WriteString(s)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			v.col += syntax.UTF16Len([]byte(s))
			return
		}
		v.line++
		v.col = 0
		s = s[i+1:]
	}
}

func (v *composedView) printf(format string, args ...any) { v.write(fmt.Sprintf(format, args...)) }

// rel is how the view names the file at p: relative to the repository
// when it is in it.
func (v *composedView) rel(p string) string {
	if r, err := filepath.Rel(v.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

// link writes a Markdown link to line (1-based; 0 for none) of the file
// at p, labelled with the file's name and the line.
func (v *composedView) link(p string, line int) {
	label := v.rel(p)
	target := fileURI(p)
	if line > 0 {
		label += fmt.Sprintf(":%d", line)
		target += fmt.Sprintf("#L%d", line)
	}
	label = strings.NewReplacer("[", `\[`, "]", `\]`).Replace(label)
	start := v.col
	v.printf("[%s](%s)", label, strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(target))
	v.links = append(v.links, ViewLink{Line: v.line, Start: start, End: v.col, Path: p, TargetLine: line})
}

func (v *composedView) origin(o compose.Origin) {
	if o.Path == "" {
		v.write("(no origin)")
		return
	}
	v.link(o.Path, o.Line)
}

// sentence writes s, its link sentinels made links.
func (v *composedView) sentence(s string) {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			v.write(s)
			return
		}
		v.write(s[:i])
		s = s[i+1:]
		j := strings.IndexByte(s, 0)
		if j < 0 {
			v.write(s)
			return
		}
		v.link(s[:j], 0)
		s = s[j+1:]
	}
}

// code writes s as inline code.
func code(s string) string {
	s = oneLine(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || len(fence) > 1 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// valueText is a value of the plan on one line: a string as it is,
// anything else as JSON, cut at 120 characters.
func valueText(x any) string {
	s, ok := x.(string)
	if !ok {
		js, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		s = string(js)
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

func sizeWords(s compose.Size) string {
	return fmt.Sprintf("%d bytes, ~%d tokens", s.Bytes, s.Tokens)
}

func (v *composedView) render(c *compose.Composition, why string) {
	name := c.Name
	if name == "" {
		name = v.rel(c.Path)
	}
	v.printf("# Composed bundle %s", code(name))
	if c.Version != "" {
		v.printf(" %s", c.Version)
	}
	v.write("\n\nWhat the runtime mounts for ")
	v.sentence(why)
	v.write(". Unsaved edits are included.\n")
	var empty []string
	for _, s := range []struct {
		name string
		n    int
	}{{"session", c.MountPlan.Session.Len()}, {"providers", len(c.MountPlan.Providers)}, {"tools", len(c.MountPlan.Tools)},
		{"hooks", len(c.MountPlan.Hooks)}, {"agents", len(c.Agents)}, {"context", len(c.Context)}} {
		if s.n == 0 {
			empty = append(empty, s.name)
		}
	}
	if len(empty) > 0 {
		v.printf("\nNothing to mount in: %s.\n", strings.Join(empty, ", "))
	}
	if c.Refused != "" {
		v.printf("\n> The runtime refuses to load this bundle: %s. This is what amplidex composes of it.\n", oneLine(c.Refused))
	}
	if c.Incomplete() {
		v.write("\n> An include is not in the runtime's cache: what it brings is missing here.\n")
	}
	v.includes(c)
	v.session("Session", c.MountPlan.Session, c.Origins.Session)
	v.modules("Providers", c.MountPlan.Providers, c.Origins.Providers)
	v.modules("Tools", c.MountPlan.Tools, c.Origins.Tools)
	v.modules("Hooks", c.MountPlan.Hooks, c.Origins.Hooks)
	agents := v.agents(c)
	v.context(c)
	v.sizes(c, agents)
	v.problems(c)
}

func (v *composedView) includes(c *compose.Composition) {
	if len(c.Includes.Includes) == 0 {
		return
	}
	v.write("\n## Includes\n\n")
	var tree func(n *compose.IncludeNode, depth int)
	tree = func(n *compose.IncludeNode, depth int) {
		for _, ch := range n.Includes {
			v.printf("%s- %s ", strings.Repeat("  ", depth), code(ch.Source))
			if ch.Path != "" {
				v.write("→ ")
				v.link(ch.Path, 0)
				v.write(" ")
			}
			v.printf("(%s", ch.Status)
			if ch.Message != "" {
				v.printf(": %s", oneLine(ch.Message))
			}
			v.write(") at ")
			v.origin(ch.Origin)
			v.write("\n")
			tree(ch, depth+1)
		}
	}
	tree(&c.Includes, 0)
}

// session writes the leaves of a session (dotted keys) with the origin
// of the nearest key that has one.
func (v *composedView) session(title string, m *bundle.Map, origins map[string]compose.Origin) {
	if m.Len() == 0 {
		return
	}
	v.printf("\n## %s\n\n", title)
	var walk func(m *bundle.Map, prefix string)
	walk = func(m *bundle.Map, prefix string) {
		for k, x := range m.All() {
			key := prefix + k
			if sub, ok := x.(*bundle.Map); ok && sub.Len() > 0 {
				walk(sub, key+".")
				continue
			}
			v.printf("- %s: %s", code(key), code(valueText(x)))
			if o, ok := originOf(origins, key); ok {
				v.write(" from ")
				v.origin(o)
			}
			v.write("\n")
		}
	}
	walk(m, "")
}

// originOf returns the origin of the dotted key, or of the nearest key
// above it that has one.
func originOf(origins map[string]compose.Origin, key string) (compose.Origin, bool) {
	for {
		if o, ok := origins[key]; ok {
			return o, true
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			return compose.Origin{}, false
		}
		key = key[:i]
	}
}

func (v *composedView) modules(title string, ms []*bundle.Map, origins []compose.ModuleOrigin) {
	if len(ms) == 0 {
		return
	}
	v.printf("\n## %s\n\n", title)
	for i, m := range ms {
		id, _ := m.Value("module").(string)
		v.printf("- %s", code(id))
		if src, ok := m.Value("source").(string); ok && src != "" {
			v.printf(" (source %s)", code(valueText(src)))
		}
		if i < len(origins) {
			v.write(" from ")
			v.origin(origins[i].Origin)
			if len(origins[i].Merged) > 0 {
				v.write("; configuration merged from ")
				for j, o := range origins[i].Merged {
					if j > 0 {
						v.write(", ")
					}
					v.origin(o)
				}
			}
		}
		v.write("\n")
	}
}

// agents writes the agents and returns the size of their files, each
// once.
func (v *composedView) agents(c *compose.Composition) compose.Size {
	var total compose.Size
	if len(c.Agents) == 0 {
		return total
	}
	v.write("\n## Agents\n\n")
	seen := map[string]bool{}
	for _, a := range c.Agents {
		v.printf("- %s", code(a.Name))
		switch {
		case a.Inline:
			v.write(" inline")
		case a.Path != "":
			v.write(" → ")
			v.link(a.Path, 0)
			if f, err := v.files.Parse(a.Path, bundle.KindAgent); err == nil {
				s := compose.Size{Bytes: f.Size, Tokens: f.Chars() / 4}
				v.printf(", %s", sizeWords(s))
				if !seen[a.Path] {
					seen[a.Path] = true
					total.Bytes += s.Bytes
					total.Tokens += s.Tokens
				}
			}
		default:
			why := a.Problem
			if why == "" {
				why = "no file"
			}
			v.printf(" unresolved: %s", oneLine(why))
		}
		v.write(", from ")
		v.origin(a.Origin)
		v.write("\n")
	}
	return total
}

func (v *composedView) context(c *compose.Composition) {
	if len(c.Context) == 0 {
		return
	}
	v.write("\n## Context\n\n")
	for _, cf := range c.Context {
		v.printf("- %s", code(cf.Key))
		if cf.Exists {
			v.write(" → ")
			v.link(cf.Path, 0)
			v.printf(", %s", sizeWords(cf.Size))
		} else {
			why := cf.Problem
			if why == "" {
				why = "no file"
			}
			v.printf(" unresolved: %s", oneLine(why))
		}
		v.write(", from ")
		v.origin(cf.Origin)
		v.write("\n")
	}
}

func (v *composedView) sizes(c *compose.Composition, agents compose.Size) {
	s := c.Sizes
	v.write("\n## Size\n\n")
	v.write("Estimates of what the files put before the model: bytes, and tokens as the runtime counts them (characters / 4). " +
		"Each context file counts once; an agent's file is read when the agent is spawned.\n\n")
	if c.Instruction != "" {
		v.printf("- instruction: %s, the body of ", sizeWords(s.Instruction))
		v.link(c.Instruction, 0)
		v.write("\n")
	}
	v.printf("- context files: %s\n", sizeWords(s.Context))
	v.printf("- instruction and context: %s\n", sizeWords(s.Total))
	v.printf("- agent files: %s\n", sizeWords(agents))
}

func (v *composedView) problems(c *compose.Composition) {
	if len(c.Diagnostics) == 0 {
		return
	}
	v.printf("\n## Problems of the composition (%d)\n\n", len(c.Diagnostics))
	for i, d := range c.Diagnostics {
		if i == maxViewDiagnostics {
			v.printf("- and %d more\n", len(c.Diagnostics)-i)
			break
		}
		v.printf("- %s %s: ", d.Severity, code(d.Code))
		v.origin(compose.Origin{Path: d.Path, Line: d.Range.Start.Line + 1})
		v.printf(" %s\n", oneLine(d.Message))
	}
}

// fileURI returns the file URI of an absolute path, for a link of the
// view.
func fileURI(p string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
	return u.String()
}
