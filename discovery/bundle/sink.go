package bundle

import (
	"fmt"

	"github.com/amplidex/amplidex/discovery/diag"
)

// MaxDiagnostics is the most diagnostics one file gets from one producer;
// past it, one more says how many were left out.
const MaxDiagnostics = 100

// sink collects the diagnostics of one file, bounded.
type sink struct {
	path    string
	out     []diag.Diagnostic
	dropped int
	worst   diag.Severity
}

func (s *sink) add(code string, sev diag.Severity, r diag.Range, format string, args ...any) {
	if len(s.out) >= MaxDiagnostics {
		s.dropped++
		if s.worst == "" || sev == diag.SeverityError {
			s.worst = sev
		}
		return
	}
	s.out = append(s.out, diag.Diagnostic{
		Code: code, Severity: sev, Path: s.path, Range: r,
		Message: fmt.Sprintf(format, args...),
	})
}

// list returns the diagnostics, with the count of those left out.
func (s *sink) list() []diag.Diagnostic {
	if s.dropped == 0 {
		return s.out
	}
	return append(s.out, diag.Diagnostic{
		Code: diag.CodeTooManyDiagnostics, Severity: s.worst, Path: s.path,
		Message: fmt.Sprintf("%d more diagnostics of this file are not reported", s.dropped),
	})
}

// Limit bounds ds to MaxDiagnostics per file, adding one diagnostic per
// file that counts the rest, as severe as the worst of them. It keeps the
// order of ds.
func Limit(ds []diag.Diagnostic) []diag.Diagnostic {
	count := map[string]int{}
	var out []diag.Diagnostic
	dropped := map[string]*sink{}
	var order []string
	for _, d := range ds {
		count[d.Path]++
		if count[d.Path] <= MaxDiagnostics {
			out = append(out, d)
			continue
		}
		s := dropped[d.Path]
		if s == nil {
			s = &sink{path: d.Path, out: make([]diag.Diagnostic, MaxDiagnostics)}
			dropped[d.Path] = s
			order = append(order, d.Path)
		}
		s.add(d.Code, d.Severity, d.Range, "")
	}
	for _, p := range order {
		l := dropped[p].list()
		out = append(out, l[len(l)-1])
	}
	return out
}
