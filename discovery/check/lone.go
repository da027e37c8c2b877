package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/suppress"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Lone composes the diagnostics of a profile or agent (k) that no
// collection holds, given its text: its own problems, its references over
// s (only qualified names can resolve), and its suppression comments
// applied. It is what check and the editor report of such a file, as
// Compose is for a collection's.
func Lone(s *resolve.Set, path string, text []byte, k discovery.Kind, opts schema.Options) []diag.Diagnostic {
	f := discovery.AnalyzeFile(path, text, k, opts)
	out := append(slices.Clone(f.Diagnostics), loneRefs(s, path, f)...)
	for i := range out {
		if out[i].Path == "" {
			out[i].Path = path
		}
	}
	return suppress.File(path, text, out)
}

// loneRefs checks the references of a file no collection holds:
// only qualified names can resolve.
func loneRefs(set *resolve.Set, path string, f *discovery.Facts) []diag.Diagnostic {
	var out []diag.Diagnostic
	if f.Extends != nil {
		if _, err := set.ResolveProfile(f.Extends.Value, nil); err != nil {
			out = append(out, diag.Diagnostic{Code: diag.CodeExtendsUnresolved, Severity: diag.SeverityError,
				Path: path, Range: f.Extends.Range, Message: fmt.Sprintf("extends %q does not resolve: %v", f.Extends.Value, err)})
		}
	}
	for _, a := range f.Agents {
		if _, _, ok := set.ResolveAgent(a.Value, nil); !ok {
			out = append(out, diag.Diagnostic{Code: diag.CodeAgentUnknown, Severity: diag.SeverityError,
				Path: path, Range: a.Range, Message: fmt.Sprintf("agent %q does not exist in any collection", a.Value)})
		}
	}
	return append(out, Mentions(set, path, f.Mentions)...)
}

// Mentions checks the @collection:path mentions of a file at path that
// no collection holds (or a bundle's agent): each must resolve over s.
func Mentions(set *resolve.Set, path string, ms []syntax.Mention) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, m := range ms {
		_, err := set.ResolveMention(m)
		switch {
		case err == nil:
		case escapesPath(m.Path):
			out = append(out, diag.Diagnostic{Code: diag.CodeMentionEscapes, Severity: diag.SeverityError,
				Path: path, Range: m.Range, Message: fmt.Sprintf("@%s leaves collection %s (\"..\" is not allowed)", m.Text(), m.Collection)})
		default:
			out = append(out, diag.Diagnostic{Code: diag.CodeMentionUnresolved, Severity: diag.SeverityError,
				Path: path, Range: m.Range, Message: fmt.Sprintf("@%s does not resolve: %v", m.Text(), err)})
		}
	}
	return out
}

func escapesPath(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return slices.Contains(strings.Split(p, "/"), "..")
}
