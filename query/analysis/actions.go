package analysis

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// codeActions returns the fixes of the file's diagnostics that overlap
// rng, computed again over the buffers (so that a fix never applies to a
// text it was not made for), and the rewrites of the reference at rng's
// start. The diagnostics say what is wrong; the fixes are worked out here
// from the file and the View: "did you mean" for misspelt keys,
// collections, profiles and agents, the missing required keys with
// placeholders, the removal of an unknown key, a bare name qualified with
// the collection it resolves in.
func (w *Workspace) codeActions(ctx context.Context, base *catalog.View, path string, text []byte, overlay map[string][]byte, rng diag.Range) []query.CodeAction {
	if kindOf(path) == fileOther {
		return nil
	}
	l := w.layer(ctx, base, path, text, overlay)
	if ctx.Err() != nil {
		return nil
	}
	fx := &fixer{l: l, path: path, text: text, lines: syntax.NewLineIndex(text)}
	if kind, ok := docKindOf(path); ok {
		fx.kind = kind
		fx.doc = schema.ParseDocument(path, text, kind, w.schema)
	}
	var out []query.CodeAction
	for _, d := range w.diagnoseIn(l, path, text) {
		if !overlaps(d.Range, rng) {
			continue
		}
		for _, a := range fx.fixes(d) {
			a.Kind = query.ActionQuickFix
			a.Diagnostic = &d
			out = append(out, a)
		}
	}
	if ref, ok := w.findRef(l, path, text, rng.Start); ok {
		out = append(out, fx.rewrites(ref)...)
	}
	return out
}

// fixedWithoutAsking reports the codes whose one rewrite, when the code
// actions offer exactly one, is applied without asking (check --fix): a
// near-miss key renamed, a reference corrected to its single close
// candidate (or a bare extends qualified with the one collection that
// has it).
func fixedWithoutAsking(code string) bool {
	switch code {
	case diag.CodeUnknownKey, diag.CodeMetadataUnknownKey, diag.CodeAgentUnknown,
		diag.CodeExtendsUnresolved, diag.CodeMentionUnresolved, diag.CodeDepNotInstalled:
		return true
	}
	return false
}

// Fixes returns the edits that fix, without asking, the diagnostics ds of
// the file at path, whose text is text, over the View v: for each
// diagnostic of a code fixedWithoutAsking reports, the quick fix the language
// server offers when it is the one fix offered that rewrites text in
// place. A choice between candidates, a removal or an addition of
// placeholders is left to the author. The edits are of path, sorted,
// and do not overlap (of two that would, the first is kept).
//
// A fix that is unsafe (see unsafe: it would make a duplicate, or leave a
// file that no longer parses) is left out and returned in skipped, unless
// withUnsafe asks for it too, as ruff's --unsafe-fixes does.
func (w *Workspace) Fixes(ctx context.Context, v *catalog.View, path string, text []byte, ds []diag.Diagnostic, withUnsafe bool) (edits []query.TextEdit, skipped []UnsafeFix) {
	return w.fixes(ctx, v, path, text, nil, ds, withUnsafe)
}

// fixes is Fixes with the other open buffers (overlay) laid over v.
func (w *Workspace) fixes(ctx context.Context, v *catalog.View, path string, text []byte, overlay map[string][]byte, ds []diag.Diagnostic, withUnsafe bool) (edits []query.TextEdit, skipped []UnsafeFix) {
	if kindOf(path) == fileOther || len(ds) == 0 {
		return nil, nil
	}
	l := w.layer(ctx, v, path, text, overlay)
	if ctx.Err() != nil {
		return nil, nil
	}
	fx := &fixer{l: l, path: path, text: text, lines: syntax.NewLineIndex(text)}
	if kind, ok := docKindOf(path); ok {
		fx.kind = kind
		fx.doc = schema.ParseDocument(path, text, kind, w.schema)
	}
	for _, d := range ds {
		if !fixedWithoutAsking(d.Code) {
			continue
		}
		var rewrites []query.CodeAction
		for _, a := range fx.fixes(d) {
			if rewritesInPlace(a) {
				rewrites = append(rewrites, a)
			}
		}
		if len(rewrites) != 1 {
			continue
		}
		if why := fx.unsafe(rewrites[0]); why != "" && !withUnsafe {
			skipped = append(skipped, UnsafeFix{Diagnostic: d, Title: rewrites[0].Title, Why: why})
			continue
		}
		edits = append(edits, rewrites[0].Edits...)
	}
	sort.SliceStable(edits, func(i, j int) bool { return before(edits[i].Range.Start, edits[j].Range.Start) })
	out := edits[:0]
	for _, e := range edits {
		if n := len(out); n > 0 && before(e.Range.Start, out[n-1].Range.End) {
			continue
		}
		out = append(out, e)
	}
	return out, skipped
}

// UnsafeFix is a fix Fixes leaves to the author: the diagnostic it fixes,
// what it would do (Title, as the code action says it) and why it is
// unsafe.
type UnsafeFix struct {
	Diagnostic diag.Diagnostic
	Title      string
	Why        string
}

// unsafe says why the rewrite a must not be made without asking, or "":
// it would make a duplicate (an item of a list written twice, such as
// [helper, helpr] made [helper, helper], which changes what the list
// says), or add a problem of structure to the file (YAML or TOML that
// does not parse, a key written twice: a key renamed to one its table
// holds already).
func (fx *fixer) unsafe(a query.CodeAction) string {
	for _, e := range a.Edits {
		if dup := fx.duplicateItem(e.Range, e.NewText); dup != "" {
			return fmt.Sprintf("it would write %s twice in the list", dup)
		}
	}
	after, err := ApplyEdits(fx.text, a.Edits)
	if err != nil {
		return err.Error()
	}
	if fx.brokenIn(after) > fx.brokenIn(fx.text) {
		return "the file would not parse after it, or would write a key twice"
	}
	return ""
}

// duplicateItem returns, when the text at r is an item of a list in the
// front matter, the other item that value would repeat: the same text,
// or, in a list of agents, a name that resolves to the same agent; else
// "".
func (fx *fixer) duplicateItem(r diag.Range, value string) string {
	if fx.doc == nil || fx.doc.Front == nil {
		return ""
	}
	value = strings.Trim(value, `"'`)
	in := fx.inner(r)
	var found string
	var walk func(n *yaml.Node, agents bool, depth int) bool
	walk = func(n *yaml.Node, agents bool, depth int) bool {
		if n == nil || depth > syntax.MaxFrontMatterDepth {
			return false
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if walk(n.Content[i+1], n.Content[i].Value == "agents" || n.Content[i].Value == "include", depth+1) {
					return true
				}
			}
		case yaml.SequenceNode:
			at := -1
			for i, item := range n.Content {
				if item.Kind == yaml.ScalarNode {
					if nr := fx.doc.NodeRange(item); nr == r || fx.inner(nr) == in {
						at = i
					}
				}
			}
			if at >= 0 {
				for i, item := range n.Content {
					if i != at && item.Kind == yaml.ScalarNode && fx.sameItem(item.Value, value, agents) {
						found = item.Value
						return true
					}
				}
				return true
			}
			for _, item := range n.Content {
				if walk(item, false, depth+1) {
					return true
				}
			}
		}
		return false
	}
	walk(fx.doc.Front, false, 0)
	return found
}

// sameItem reports whether two items of a list say the same: the same
// text, or, in a list of agents, names that resolve to one agent.
func (fx *fixer) sameItem(a, b string, agents bool) bool {
	if a == b {
		return true
	}
	if !agents || fx.l == nil || fx.l.set == nil {
		return false
	}
	ra, _, okA := fx.l.set.ResolveAgent(a, fx.l.own)
	rb, _, okB := fx.l.set.ResolveAgent(b, fx.l.own)
	return okA && okB && ra.Path == rb.Path
}

// brokenIn counts the problems of structure in text, the file at path of
// document kind ("" for one that is not a document, such as
// pyproject.toml): YAML or TOML that does not parse, a key written twice.
func (fx *fixer) brokenIn(text []byte) int {
	var ds []diag.Diagnostic
	switch {
	case fx.kind != "":
		ds = schema.ParseDocument(fx.path, text, fx.kind, schema.Options{}).Diagnostics
	case kindOf(fx.path) == filePyproject:
		_, ds = discovery.ParsePyproject(fx.path, text)
	}
	n := 0
	for _, d := range ds {
		switch d.Code {
		case diag.CodeFrontMatterSyntax, diag.CodeDuplicateKey, diag.CodeTOMLSyntax:
			n++
		}
	}
	return n
}

// rewritesInPlace reports whether every edit of a replaces text with
// other text.
func rewritesInPlace(a query.CodeAction) bool {
	for _, e := range a.Edits {
		if e.Range.Start == e.Range.End || e.NewText == "" {
			return false
		}
	}
	return len(a.Edits) > 0
}

// ApplyEdits returns text with edits applied; the edits' positions count
// UTF-16 code units, as diagnostics do, and must be sorted and not
// overlap.
func ApplyEdits(text []byte, edits []query.TextEdit) ([]byte, error) {
	lines := syntax.NewLineIndex(text)
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		start, end := lines.PositionOffset(e.Range.Start), lines.PositionOffset(e.Range.End)
		if start < at || end < start || end > len(text) {
			return nil, fmt.Errorf("apply edits: edit at %d:%d overlaps another or lies outside the text", e.Range.Start.Line+1, e.Range.Start.Character+1)
		}
		out.Write(text[at:start])
		out.WriteString(e.NewText)
		at = end
	}
	out.Write(text[at:])
	return out.Bytes(), nil
}

// overlaps reports whether two ranges share a position, ends included (a
// cursor just after a word is on it).
func overlaps(a, b diag.Range) bool {
	return !before(a.End, b.Start) && !before(b.End, a.Start)
}

func before(a, b diag.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}

// fixer works out the fixes of one file's diagnostics.
type fixer struct {
	l     *layered
	path  string
	text  []byte
	lines *syntax.LineIndex
	kind  schema.DocKind   // the schema of the front matter ("" for none)
	doc   *schema.Document // the front matter, parsed (nil for none)
}

// fixes returns the fixes of d, the preferred one first.
func (fx *fixer) fixes(d diag.Diagnostic) []query.CodeAction {
	switch d.Code {
	case diag.CodeUnknownKey:
		return fx.unknownKey(d)
	case diag.CodeMetadataUnknownKey:
		return fx.unknownTableKey(d)
	case diag.CodeRequiredKey:
		return fx.missingKey(d)
	case diag.CodeBundleLoadFailed:
		if d.Message == schema.BundleDefaultProviderMessage && fx.doc != nil && fx.doc.Front != nil && fx.doc.Lookup("default_provider") == nil {
			return fx.addKey(d, fx.doc.Front, nil, "default_provider")
		}
	case diag.CodeMissingField:
		return fx.missingField(d)
	case diag.CodeNameMismatch:
		stem := strings.TrimSuffix(filepath.Base(fx.path), filepath.Ext(fx.path))
		return []query.CodeAction{fx.replaceValue(d.Range, stem, "Rename to `%s`, as the file is named")}
	case diag.CodeInvalidName:
		if fix := schema.SuggestCollectionName(fx.unquoted(d.Range)); fix != "" {
			return []query.CodeAction{fx.replaceValue(d.Range, fix, "Change to `%s`")}
		}
	case diag.CodeAgentUnknown:
		return fx.unknownAgent(d)
	case diag.CodeExtendsUnresolved:
		return fx.unresolvedExtends(d)
	case diag.CodeMentionUnresolved:
		return fx.unresolvedMention(d)
	case diag.CodeDepNotInstalled:
		return fx.missingDep(d)
	}
	return nil
}

// rewrites returns the rewrites of the reference ref: a bare agent name
// that resolves in another collection than the file's is qualified.
func (fx *fixer) rewrites(ref refAt) []query.CodeAction {
	if ref.kind != "agent" || ref.coll != "" {
		return nil
	}
	_, c, ok := fx.l.set.ResolveAgent(ref.value, fx.l.own)
	if !ok || c == fx.l.own {
		return nil
	}
	a := fx.replaceValue(ref.rng, c.Name+":"+ref.value, "Qualify as `%s`")
	a.Kind = query.ActionRewrite
	return []query.CodeAction{a}
}

// spanText returns the text in r.
func (fx *fixer) spanText(r diag.Range) string {
	s, e := fx.lines.PositionOffset(r.Start), fx.lines.PositionOffset(r.End)
	if s > e || e > len(fx.text) {
		return ""
	}
	return string(fx.text[s:e])
}

// inner returns r without the quotes around its text, when it is quoted.
func (fx *fixer) inner(r diag.Range) diag.Range {
	t := fx.spanText(r)
	if len(t) >= 2 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] {
		r.Start.Character++
		r.End.Character--
	}
	return r
}

// unquoted returns the text in r without its quotes.
func (fx *fixer) unquoted(r diag.Range) string { return fx.spanText(fx.inner(r)) }

// replaceValue is the action that writes value in place of the text in r
// (inside its quotes, when it is quoted); title has a %s for value.
func (fx *fixer) replaceValue(r diag.Range, value, title string) query.CodeAction {
	in := fx.inner(r)
	if in == r && !plainYAML(value) && fx.kind != "" {
		value = strconv.Quote(value)
	}
	return query.CodeAction{Title: fmt.Sprintf(title, value), Preferred: true,
		Edits: []query.TextEdit{{Path: fx.path, Range: in, NewText: value}}}
}

// plainYAML reports whether s reads back as the same string when written
// unquoted as a YAML value.
func plainYAML(s string) bool {
	var m map[string]any
	if yaml.Unmarshal([]byte("k: "+s), &m) != nil {
		return false
	}
	got, ok := m["k"].(string)
	return ok && got == s
}

// didYouMean is the action that replaces r with each of the candidates
// given, the first preferred.
func (fx *fixer) didYouMean(r diag.Range, candidates ...string) []query.CodeAction {
	var out []query.CodeAction
	for i, c := range candidates {
		if c == "" {
			continue
		}
		a := fx.replaceValue(r, c, "Change `"+fx.unquoted(r)+"` to `%s`")
		a.Preferred = i == 0
		out = append(out, a)
	}
	return out
}

// keyHit is a key of the front matter, with where it stands.
type keyHit struct {
	key, value *yaml.Node
	mapping    *yaml.Node
	path       []string // the schema path of the mapping
}

// findNode walks the front matter for the key whose range is r, or the
// mapping that is opened at r (a list item's, or the value of a key at r).
func (fx *fixer) findNode(r diag.Range) (hit keyHit, ok bool) {
	if fx.doc == nil || fx.doc.Front == nil {
		return keyHit{}, false
	}
	var walk func(n *yaml.Node, path []string, depth int) bool
	walk = func(n *yaml.Node, path []string, depth int) bool {
		if n == nil || depth > syntax.MaxFrontMatterDepth {
			return false
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
					continue
				}
				at := append(slices.Clip(path), k.Value)
				if fx.doc.NodeRange(k) == r {
					hit = keyHit{key: k, value: v, mapping: n, path: path}
					return true
				}
				if walk(v, at, depth+1) {
					return true
				}
			}
		case yaml.SequenceNode:
			for _, item := range n.Content {
				at := append(slices.Clip(path), schema.ItemStep)
				if item.Kind == yaml.MappingNode && fx.doc.NodeRange(item) == r {
					hit = keyHit{value: item, path: at}
					return true
				}
				if walk(item, at, depth+1) {
					return true
				}
			}
		}
		return false
	}
	ok = walk(fx.doc.Front, nil, 0)
	return hit, ok
}

// unknownKey offers, for a key the schema does not know, the key it most
// likely misspells and the removal of the key with its value.
func (fx *fixer) unknownKey(d diag.Diagnostic) []query.CodeAction {
	hit, ok := fx.findNode(d.Range)
	if !ok || hit.key == nil {
		return nil
	}
	var out []query.CodeAction
	if keys, ok := schema.Keys(fx.kind, hit.path); ok {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Name
		}
		if s := diag.Suggest(hit.key.Value, names); s != "" && !hasKey(hit.mapping, s) {
			out = append(out, fx.replaceValue(d.Range, s, "Change `"+hit.key.Value+"` to `%s`"))
		}
	}
	if del, ok := fx.keyLines(hit); ok {
		out = append(out, query.CodeAction{Title: "Remove the unknown key `" + hit.key.Value + "`",
			Edits: []query.TextEdit{{Path: fx.path, Range: del}}})
	}
	return out
}

func hasKey(m *yaml.Node, name string) bool {
	for i := 0; m != nil && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return true
		}
	}
	return false
}

// keyLines returns the whole lines a block-style key and its value take,
// when the key starts its line.
func (fx *fixer) keyLines(hit keyHit) (diag.Range, bool) {
	if hit.mapping.Style&yaml.FlowStyle != 0 {
		return diag.Range{}, false
	}
	kr := fx.doc.NodeRange(hit.key)
	line := fx.lines.Line(kr.Start.Line)
	if leading := len(line) - len(bytes.TrimLeft(line, " ")); leading != kr.Start.Character {
		return diag.Range{}, false // "- key:" or a key after others
	}
	end := fx.lastLine(hit.value, kr.Start.Line, kr.Start.Character)
	return diag.Range{Start: diag.Position{Line: kr.Start.Line}, End: diag.Position{Line: end + 1}}, true
}

// lastLine returns the last line a value takes: the last line of its
// nodes, then the lines more indented than col that follow (the rest of
// a multi-line scalar), never past the front matter.
func (fx *fixer) lastLine(n *yaml.Node, from, col int) int {
	last := from
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || depth > syntax.MaxFrontMatterDepth {
			return
		}
		if l := fx.doc.NodeRange(n).Start.Line; l > last {
			last = l
		}
		if n.Kind != yaml.AliasNode {
			for _, c := range n.Content {
				walk(c, depth+1)
			}
		}
	}
	walk(n, 0)
	end := fx.lines.Position(fx.doc.FrontEnd).Line
	for i := last + 1; i < end; i++ {
		l := fx.lines.Line(i)
		t := bytes.TrimLeft(l, " ")
		if len(bytes.TrimSpace(t)) == 0 {
			continue
		}
		if len(l)-len(t) <= col {
			break
		}
		last = i
	}
	return last
}

// missingKey offers to add a required key that is missing, with a
// placeholder value.
func (fx *fixer) missingKey(d diag.Diagnostic) []query.CodeAction {
	const prefix = "missing required key `"
	if fx.doc == nil || fx.doc.Front == nil || !strings.HasPrefix(d.Message, prefix) {
		return nil
	}
	name, _, ok := strings.Cut(d.Message[len(prefix):], "`")
	if !ok {
		return nil
	}
	if d.Range == fx.doc.NodeRange(nil) {
		return fx.addKey(d, fx.doc.Front, nil, name)
	}
	hit, ok := fx.findNode(d.Range)
	if !ok {
		return nil
	}
	if hit.key == nil {
		return fx.addKey(d, hit.value, hit.path, name) // a list item's mapping
	}
	m := hit.value
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	return fx.addKey(d, m, append(slices.Clip(hit.path), hit.key.Value), name)
}

// addKey is the action that adds the key name, with a placeholder, at
// the end of the block mapping m at path.
func (fx *fixer) addKey(d diag.Diagnostic, m *yaml.Node, path []string, name string) []query.CodeAction {
	if m.Style&yaml.FlowStyle != 0 {
		return nil
	}
	var at diag.Position
	indent := 0
	switch {
	case len(m.Content) > 0:
		first := fx.doc.NodeRange(m.Content[0]).Start
		indent = first.Character
		at = diag.Position{Line: fx.lastLine(m, first.Line, indent-1) + 1}
	case path == nil:
		at = diag.Position{Line: fx.lines.Position(fx.doc.FrontEnd).Line}
	default:
		return nil
	}
	stem := strings.TrimSuffix(filepath.Base(fx.path), filepath.Ext(fx.path))
	text, ok := schema.Placeholder(fx.kind, append(slices.Clip(path), name), indent, stem)
	if !ok {
		return nil
	}
	return []query.CodeAction{{Title: "Add the missing key `" + name + "`", Preferred: true,
		Edits: []query.TextEdit{{Path: fx.path, Range: diag.Range{Start: at, End: at}, NewText: text}}}}
}

// unknownTableKey offers, for an unknown key of [tool.amplifier.collection],
// the documented key it most likely misspells and its removal.
func (fx *fixer) unknownTableKey(d diag.Diagnostic) []query.CodeAction {
	key := fx.unquoted(d.Range)
	var out []query.CodeAction
	if s := diag.Suggest(key, schema.DocumentedCollectionKeys()); s != "" {
		out = append(out, fx.replaceValue(d.Range, s, "Change `"+key+"` to `%s`"))
	}
	line := fx.lines.Line(d.Range.Start.Line)
	if _, value, ok := bytes.Cut(line, []byte("=")); ok && singleLineTOML(value) {
		n := d.Range.Start.Line
		out = append(out, query.CodeAction{Title: "Remove the unknown key `" + key + "`",
			Edits: []query.TextEdit{{Path: fx.path, Range: diag.Range{Start: diag.Position{Line: n}, End: diag.Position{Line: n + 1}}}}})
	}
	return out
}

// singleLineTOML reports whether a TOML value ends on its line: its
// brackets and braces close, and it opens no multi-line string.
func singleLineTOML(v []byte) bool {
	if bytes.Contains(v, []byte(`"""`)) || bytes.Contains(v, []byte(`'''`)) {
		return false
	}
	depth := 0
	var quote byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return depth == 0
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		}
	}
	return depth == 0 && quote == 0
}

// missingField offers to add a required field of [project] that is
// missing, or the whole table when there is none.
func (fx *fixer) missingField(d diag.Diagnostic) []query.CodeAction {
	const prefix = "Required field missing: "
	field, ok := strings.CutPrefix(d.Message, prefix)
	if !ok {
		return nil
	}
	dir := filepath.Base(filepath.Dir(fx.path))
	name := dir
	if fix := schema.SuggestCollectionName(dir); fix != "" {
		name = fix
	}
	placeholder := map[string]string{"name": name, "version": "0.1.0", "description": "TODO: what the collection is for"}
	value, ok := placeholder[field]
	if !ok {
		return nil
	}
	header := -1
	for i := 0; i < fx.lines.Lines(); i++ {
		if t := bytes.TrimSpace(fx.lines.Line(i)); bytes.Equal(t, []byte("[project]")) {
			header = i
			break
		}
	}
	if header < 0 {
		text := "[project]\n"
		for _, f := range []string{"name", "version", "description"} {
			text += fmt.Sprintf("%s = %q\n", f, placeholder[f])
		}
		at := diag.Position{}
		return []query.CodeAction{{Title: "Add [project] with name, version and description", Preferred: true,
			Edits: []query.TextEdit{{Path: fx.path, Range: diag.Range{Start: at, End: at}, NewText: text + "\n"}}}}
	}
	if tableKeys(fx.lines, header)[field] {
		return nil // there, but empty or of the wrong type
	}
	// After the table's last line that is not blank.
	last := header
	for i := header + 1; i < fx.lines.Lines(); i++ {
		t := bytes.TrimSpace(fx.lines.Line(i))
		if len(t) > 0 && t[0] == '[' {
			break
		}
		if len(t) > 0 {
			last = i
		}
	}
	at := diag.Position{Line: last + 1}
	text := fmt.Sprintf("%s = %q\n", field, value)
	if last+1 >= fx.lines.Lines() && len(fx.text) > 0 && fx.text[len(fx.text)-1] != '\n' {
		at = fx.lines.Position(len(fx.text))
		text = "\n" + text
	}
	return []query.CodeAction{{Title: "Add the missing field `" + field + "`", Preferred: true,
		Edits: []query.TextEdit{{Path: fx.path, Range: diag.Range{Start: at, End: at}, NewText: text}}}}
}

// names returns the names of the resources of kind k in cols, sorted and
// unique.
func names(k discovery.Kind, cols ...*discovery.Collection) []string {
	var out []string
	for _, c := range cols {
		if c == nil {
			continue
		}
		for _, r := range c.Resources {
			if r.Kind == k {
				out = append(out, r.Name)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// collectionNames returns the names that resolve, sorted.
func (fx *fixer) collectionNames() []string {
	out := fx.l.set.Names()
	sort.Strings(out)
	return out
}

// unknownAgent offers the agent names a name that exists nowhere most
// likely misspells: in the collection it names, or, for a bare name, in
// the file's collection and every other.
func (fx *fixer) unknownAgent(d diag.Diagnostic) []query.CodeAction {
	name := fx.unquoted(d.Range)
	set := fx.l.set
	if coll, n, ok := strings.Cut(name, ":"); ok {
		return fx.qualified(d.Range, discovery.KindAgent, coll, n, false)
	}
	return fx.didYouMean(d.Range, diag.Suggest(name, names(discovery.KindAgent, append([]*discovery.Collection{fx.l.own}, set.Winners()...)...)))
}

// unresolvedExtends offers, for a bare profile name that is not in the
// file's collection, the collections where it is (qualified), and the
// names the reference most likely misspells.
func (fx *fixer) unresolvedExtends(d diag.Diagnostic) []query.CodeAction {
	value := fx.unquoted(d.Range)
	set := fx.l.set
	self := strings.TrimSuffix(filepath.Base(fx.path), filepath.Ext(fx.path))
	coll, n, qualified := strings.Cut(value, ":")
	if strings.ContainsAny(n, "/") || !qualified && strings.ContainsAny(value, "/") {
		return nil
	}
	if !qualified {
		var candidates []string
		for _, c := range set.Winners() {
			if c == fx.l.own {
				continue
			}
			if _, ok := c.Resource(discovery.KindProfile, value); ok {
				candidates = append(candidates, c.Name+":"+value)
			}
		}
		var own []string
		for _, p := range names(discovery.KindProfile, fx.l.own) {
			if p != self {
				own = append(own, p)
			}
		}
		candidates = append(candidates, diag.Suggest(value, own))
		return fx.didYouMean(d.Range, candidates...)
	}
	return fx.qualified(d.Range, discovery.KindProfile, coll, n, true)
}

// qualified offers, for "coll:n" naming a resource of kind that does not
// resolve, the name in coll that n most likely misspells; when coll
// resolves nowhere, the collection it most likely misspells, if n is
// there, or with nearInNear the name there that n most likely misspells.
func (fx *fixer) qualified(r diag.Range, kind discovery.Kind, coll, n string, nearInNear bool) []query.CodeAction {
	set := fx.l.set
	if c := set.Lookup(coll); c != nil {
		if s := diag.Suggest(n, names(kind, c)); s != "" {
			return fx.didYouMean(r, coll+":"+s)
		}
		return nil
	}
	s := diag.Suggest(coll, fx.collectionNames())
	c := set.Lookup(s)
	if s == "" || c == nil {
		return nil
	}
	if _, ok := c.Resource(kind, n); ok {
		return fx.didYouMean(r, s+":"+n)
	}
	if p := diag.Suggest(n, names(kind, c)); nearInNear && p != "" {
		return fx.didYouMean(r, s+":"+p)
	}
	return nil
}

// unresolvedMention offers the collection or the file an @mention most
// likely misspells.
func (fx *fixer) unresolvedMention(d diag.Diagnostic) []query.CodeAction {
	text := fx.spanText(d.Range)
	at := strings.TrimPrefix(text, "@")
	coll, p, ok := strings.Cut(at, ":")
	if !ok {
		return nil
	}
	prefix := text[:len(text)-len(at)]
	set := fx.l.set
	if c := set.Lookup(coll); c != nil {
		var rels []string
		for _, r := range c.Resources {
			if r.Kind != discovery.KindTool && r.Kind != discovery.KindModule {
				rels = append(rels, r.Rel)
			}
		}
		sort.Strings(rels)
		if s := diag.Suggest(p, rels); s != "" {
			return fx.replaceSpan(d.Range, prefix+coll+":"+s)
		}
		return nil
	}
	if s := diag.Suggest(coll, fx.collectionNames()); s != "" {
		if _, err := set.ResolveMention(syntax.Mention{Collection: s, Path: p}); err == nil {
			return fx.replaceSpan(d.Range, prefix+s+":"+p)
		}
	}
	return nil
}

// replaceSpan is the action that writes text in place of r, as it is.
func (fx *fixer) replaceSpan(r diag.Range, text string) []query.CodeAction {
	return []query.CodeAction{{Title: "Change `" + fx.spanText(r) + "` to `" + text + "`", Preferred: true,
		Edits: []query.TextEdit{{Path: fx.path, Range: r, NewText: text}}}}
}

// missingDep offers the collection a requires entry that resolves
// nowhere most likely misspells; the entry's key is rewritten.
func (fx *fixer) missingDep(d diag.Diagnostic) []query.CodeAction {
	if fx.l.own == nil || fx.l.own.Metadata == nil {
		return nil
	}
	var name string
	for _, r := range fx.l.own.Metadata.Requires {
		if r.Range == d.Range {
			name = r.Name
		}
	}
	if name == "" {
		return nil
	}
	var others []string
	for _, n := range fx.collectionNames() {
		if n != fx.l.own.Name {
			others = append(others, n)
		}
	}
	s := diag.Suggest(name, others)
	if s == "" {
		return nil
	}
	// The key is on the value's line, before it.
	line := fx.lines.Line(d.Range.Start.Line)
	start := fx.lines.PositionOffset(d.Range.Start) - fx.lines.LineStart(d.Range.Start.Line)
	i := bytes.LastIndex(line[:min(start, len(line))], []byte(name))
	if i < 0 {
		return nil
	}
	r := diag.Range{Start: diag.Position{Line: d.Range.Start.Line, Character: syntax.UTF16Len(line[:i])},
		End: diag.Position{Line: d.Range.Start.Line, Character: syntax.UTF16Len(line[:i+len(name)])}}
	return []query.CodeAction{{Title: "Change `" + name + "` to `" + s + "`", Preferred: true,
		Edits: []query.TextEdit{{Path: fx.path, Range: r, NewText: s}}}}
}

// SafeFixes returns the edits of path (in text) that fix ds without
// asking, as `check --fix` makes them (Fixes, the unsafe ones left out):
// sorted, none overlapping another.
func (w *Workspace) SafeFixes(ctx context.Context, path string, text []byte, overlay map[string][]byte, ds []diag.Diagnostic) []query.TextEdit {
	if kindOf(path) == fileOther || len(ds) == 0 {
		return nil
	}
	if b := w.bundleDocOf(path, text, overlay); b != nil {
		return w.bundleSafeFixes(ctx, b, text, ds)
	}
	v := w.viewOf(ctx, path)
	if v == nil {
		return nil
	}
	edits, _ := w.fixes(ctx, v, path, text, overlay, ds, false)
	return edits
}
