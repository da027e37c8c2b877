package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Severity ranks a Diagnostic.
type Severity string

// The three severities, as LSP and the text format spell them.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Position is a place in a text file: a 0-based line and a 0-based character
// offset counted in UTF-16 code units, as the Language Server Protocol counts.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span between two Positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Diagnostic is one problem found in one file.
type Diagnostic struct {
	Code       string   `json:"code"`
	Severity   Severity `json:"severity"`
	Path       string   `json:"path"`
	Range      Range    `json:"range"`
	Message    string   `json:"message"`
	Collection string   `json:"collection,omitempty"`
}

// String formats d as `path:line:col: severity: message [code]`, with 1-based
// line and column.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s [%s]", d.Path, d.Range.Start.Line+1,
		d.Range.Start.Character+1, d.Severity, d.Message, d.Code)
}

// Sort orders ds by path (component-wise), then position, then
// code, so that output is stable.
func Sort(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Path != b.Path {
			return ComparePaths(a.Path, b.Path) < 0
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		if a.Range.Start.Character != b.Range.Start.Character {
			return a.Range.Start.Character < b.Range.Start.Character
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}

// CountErrors returns how many of ds are errors.
func CountErrors(ds []Diagnostic) int {
	n := 0
	for _, d := range ds {
		if d.Severity == SeverityError {
			n++
		}
	}
	return n
}

// ComparePaths orders two slash-separated paths component by component,
// byte-wise within a component: "Z.md" < "a/x.md" < "a-b/x.md" < "a.md".
func ComparePaths(a, b string) int {
	for {
		ai := strings.IndexByte(a, '/')
		bi := strings.IndexByte(b, '/')
		ac, bc := a, b
		if ai >= 0 {
			ac = a[:ai]
		}
		if bi >= 0 {
			bc = b[:bi]
		}
		if c := strings.Compare(ac, bc); c != 0 {
			return c
		}
		switch {
		case ai < 0 && bi < 0:
			return 0
		case ai < 0:
			return -1
		case bi < 0:
			return 1
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}
