package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// ChangeEvent is one line of `watch --json`: a diagnostic that appeared
// or cleared.
type ChangeEvent struct {
	Event      string          `json:"event"`
	Clock      query.Clock     `json:"clock"`
	Diagnostic diag.Diagnostic `json:"diagnostic"`
}

// Changes prints, per file, the diagnostics that appeared and those that
// cleared since the last update of a subscription: watch's output, in
// text (Text's lines, "cleared" for the severity of those that went) or
// as JSON lines of ChangeEvent. It is one goroutine's.
type Changes struct {
	Out  io.Writer
	Text query.DiagnosticPrinter
	JSON bool
	// Filter, when set, decides what is printed of a file's diagnostics.
	Filter func(path string, ds []diag.Diagnostic) []diag.Diagnostic

	last map[string][]diag.Diagnostic
}

// Print prints what changed with the update u.
func (p *Changes) Print(u query.Update) error {
	w, dp := p.Out, p.Text
	if p.last == nil {
		p.last = map[string][]diag.Diagnostic{}
	}
	if u.Initial {
		// Every followed file with diagnostics is in it: those printed
		// before and left out cleared (while the daemon was away).
		u.Files = append(slices.Clip(u.Files), p.clearedBy(u.Files)...)
	}
	for _, f := range u.Files {
		if p.Filter != nil {
			f.Diagnostics = p.Filter(f.Path, f.Diagnostics)
		}
		old := p.last[f.Path]
		var lines []ChangeEvent
		for _, d := range old {
			if !slices.Contains(f.Diagnostics, d) {
				lines = append(lines, ChangeEvent{Event: "cleared", Clock: u.Clock, Diagnostic: d})
			}
		}
		for _, d := range f.Diagnostics {
			if !slices.Contains(old, d) {
				lines = append(lines, ChangeEvent{Event: "appeared", Clock: u.Clock, Diagnostic: d})
			}
		}
		if len(f.Diagnostics) == 0 {
			delete(p.last, f.Path)
		} else {
			p.last[f.Path] = f.Diagnostics
		}
		for _, ev := range lines {
			if err := p.line(w, dp, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// clearedBy returns, for the files printed with diagnostics that files
// leave out, an empty list: they cleared. They come sorted.
func (p *Changes) clearedBy(files []query.FileDiagnostics) []query.FileDiagnostics {
	in := make(map[string]bool, len(files))
	for _, f := range files {
		in[f.Path] = true
	}
	var out []query.FileDiagnostics
	for path := range p.last {
		if !in[path] {
			out = append(out, query.FileDiagnostics{Path: path, Diagnostics: []diag.Diagnostic{}})
		}
	}
	slices.SortFunc(out, func(a, b query.FileDiagnostics) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func (p *Changes) line(w io.Writer, dp query.DiagnosticPrinter, ev ChangeEvent) error {
	if p.JSON {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	d := ev.Diagnostic
	if ev.Event == "cleared" {
		d.Severity = "cleared"
	}
	_, err := fmt.Fprintln(w, dp.Line(d))
	return err
}
