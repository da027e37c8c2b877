package diag

import (
	"fmt"
	"slices"
	"strings"
)

// MaxPerArea is the most diagnostics of one code area
// (metadata/, schema/, ref/, …) that one check of one file makes. The
// others are counted, not made, and one CodeTooManyDiagnostics says how
// many there were, as compilers stop after so many errors (-fmax-errors).
//
// A hundred is more than anyone reads of one file before fixing the first
// ones, and ten times what any real file has (the corpus has at most 9 of
// one area in one file); while a file of mentions just under the document
// limit would otherwise make half a million diagnostics, which every
// answer, index record and editor that holds them pays for.
const MaxPerArea = 100

// Limit keeps MaxPerArea for the diagnostics of one file
// that one producer makes: it is asked before each diagnostic is made, so
// that one past the limit costs no message. Production is in a fixed
// order (the file's order, or the order of its checks), so the same file
// keeps the same diagnostics and the same count every time. The zero
// value is ready to use; one Limit serves one file.
type Limit struct {
	areas []areaLimit
}

// areaLimit is the count of one area of one file.
type areaLimit struct {
	area  string // "ref/"
	made  int
	over  int      // diagnostics not made
	first Range    // where the first of them is
	worst Severity // the most severe of them
	codes []string // their codes, in the order first met
}

// Allow reports whether a diagnostic of code, severity sev at r may be
// made; when it may not, it is counted instead.
func (l *Limit) Allow(code string, sev Severity, r Range) bool {
	area := codeArea(code)
	i := slices.IndexFunc(l.areas, func(a areaLimit) bool { return a.area == area })
	if i < 0 {
		l.areas = append(l.areas, areaLimit{area: area})
		i = len(l.areas) - 1
	}
	a := &l.areas[i]
	if a.made < MaxPerArea {
		a.made++
		return true
	}
	if a.over == 0 {
		a.first, a.worst = r, sev
	} else if severityRank(sev) > severityRank(a.worst) {
		a.worst = sev
	}
	a.over++
	if !slices.Contains(a.codes, code) {
		a.codes = append(a.codes, code)
	}
	return false
}

// Summaries returns one CodeTooManyDiagnostics for each area of the file
// at path that had more diagnostics than it made, in the order the areas
// were first met: at the first diagnostic not made, as severe as the
// worst of them.
func (l *Limit) Summaries(path, collection string) []Diagnostic {
	var out []Diagnostic
	for _, a := range l.areas {
		if a.over == 0 {
			continue
		}
		out = append(out, Diagnostic{Code: CodeTooManyDiagnostics, Severity: a.worst, Path: path, Range: a.first,
			Collection: collection,
			Message: fmt.Sprintf("%s more %s %s in this file not reported (%s): only the first %d of an area are",
				thousands(a.over), a.area, plural(a.over, "diagnostic"), strings.Join(a.codes, ", "), MaxPerArea)})
	}
	return out
}

// codeArea returns the area of a code with its slash: "ref/" of
// "ref/agent-unknown".
func codeArea(code string) string {
	if i := strings.IndexByte(code, '/'); i >= 0 {
		return code[:i+1]
	}
	return code
}

// severityRank orders severities: info < warning < error.
func severityRank(s Severity) int {
	switch s {
	case SeverityError:
		return 2
	case SeverityWarning:
		return 1
	}
	return 0
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
