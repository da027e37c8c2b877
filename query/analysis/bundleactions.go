package analysis

import (
	"context"
	"slices"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query"
)

// The code actions and fixes of a bundle repository's documents: the
// fixes that need no choice (bundle.Fix) of the diagnostics the check of
// the repository reports over the buffers, the check diagnostics use.
// check --fix makes the same fixes (check.Result.Fix).

// bundleFile returns the parse of b's document the check of its
// repository made over the buffers (nil when it checked none).
func bundleFile(res *check.Result, b *bundleDoc) *bundle.File {
	for _, f := range res.Files {
		if f.Path == b.path {
			return f
		}
	}
	return nil
}

// fixesOf returns the fixes of f's diagnostics that need no choice, its
// own and those of the check's diagnostics.
func fixesOf(res *check.Result, f *bundle.File) []bundle.Fix {
	return append(slices.Clip(f.Fixes), res.Fixes[f.Path]...)
}

// bundleFixes returns the diagnostics the check reports of b (its
// suppression comments applied) that a fix in fixes fixes, each with its
// fixes, in the diagnostics' order.
func bundleFixes(ds []diag.Diagnostic, fixes []bundle.Fix) ([]diag.Diagnostic, [][]bundle.Fix) {
	var out []diag.Diagnostic
	var by [][]bundle.Fix
	for _, d := range ds {
		var mine []bundle.Fix
		for _, x := range fixes {
			if x.Code == d.Code && x.At == d.Range {
				mine = append(mine, x)
			}
		}
		if len(mine) > 0 {
			out = append(out, d)
			by = append(by, mine)
		}
	}
	return out, by
}

// bundleCodeActions returns a quick fix for each fix of a diagnostic of
// b that overlaps rng; a diagnostic's one fix is preferred.
func (w *Workspace) bundleCodeActions(ctx context.Context, b *bundleDoc, text []byte, rng diag.Range) []query.CodeAction {
	res := w.checkBundle(b)
	f := bundleFile(res, b)
	if ctx.Err() != nil || f == nil {
		return nil
	}
	reported, _ := res.Report(b.path)
	ds, fixes := bundleFixes(reported, fixesOf(res, f))
	lines := syntax.NewLineIndex(text)
	var out []query.CodeAction
	for i, d := range ds {
		if !overlaps(d.Range, rng) {
			continue
		}
		for _, x := range fixes[i] {
			if x.End > len(text) {
				continue
			}
			out = append(out, query.CodeAction{Title: bundleFixTitle(x, text), Kind: query.ActionQuickFix,
				Diagnostic: &ds[i], Preferred: len(fixes[i]) == 1,
				Edits: []query.TextEdit{{Path: b.path, Range: lines.Range(x.Start, x.End), NewText: x.Text}}})
		}
	}
	return out
}

// bundleFixTitle says what the fix x of text does.
func bundleFixTitle(x bundle.Fix, text []byte) string {
	old := string(text[x.Start:x.End])
	switch x.Code {
	case bundle.CodeIncludeNoBundleKey:
		return "Change `" + old + ":` to `" + x.Text + ":`, so that the runtime includes the entry"
	case bundle.CodeAtInYAML:
		return "Remove the leading `@`"
	case bundle.CodeIncludesUnderBundle:
		return "Move `includes:` out of `bundle:`, to the top level"
	case bundle.CodeMentionPunctuation:
		return "Write `" + x.Text + "`, so that the runtime reads the mention without the punctuation"
	}
	return "Change `" + old + "` to `" + x.Text + "`"
}

// bundleSafeFixes returns the edits of b's document that fix ds, of the
// diagnostics the check reports of it, as the first round of check --fix
// makes them (check.Result.Fix): sorted, none overlapping another.
func (w *Workspace) bundleSafeFixes(ctx context.Context, b *bundleDoc, text []byte, ds []diag.Diagnostic) []query.TextEdit {
	res := w.checkBundle(b)
	f := bundleFile(res, b)
	if ctx.Err() != nil || f == nil {
		return nil
	}
	reported, _ := res.Report(b.path)
	asked := reported[:0:0]
	for _, d := range reported {
		if slices.ContainsFunc(ds, func(e diag.Diagnostic) bool { return e.Code == d.Code && e.Range == d.Range }) {
			asked = append(asked, d)
		}
	}
	_, fixes := bundleFixes(asked, fixesOf(res, f))
	var all []bundle.Fix
	for _, xs := range fixes {
		all = append(all, xs...)
	}
	slices.SortStableFunc(all, func(a, b bundle.Fix) int { return a.Start - b.Start })
	lines := syntax.NewLineIndex(text)
	var out []query.TextEdit
	last := 0
	for _, x := range all {
		if x.Start < last || x.End > len(text) {
			continue // overlaps the one before: the next round has it
		}
		out = append(out, query.TextEdit{Path: b.path, Range: lines.Range(x.Start, x.End), NewText: x.Text})
		last = x.End
	}
	return out
}
