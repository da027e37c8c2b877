package lsp

import (
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Change is one content change of didChange: Text replaces Range, or the
// whole text when Range is nil.
type Change = contentChange

// ApplyChanges applies changes as didChange does.
func ApplyChanges(text []byte, changes []Change, utf8 bool) ([]byte, error) {
	return applyChanges(text, changes, utf8)
}

// ApplyChangesRope applies changes to valid UTF-8 as a didChange of many
// changes does, through a rope of chunks of at most chunk bytes.
func ApplyChangesRope(text []byte, changes []Change, utf8 bool, chunk int) ([]byte, error) {
	return applyRope(text, changes, utf8, chunk)
}

// OffsetOf converts a wire position into a byte offset.
func OffsetOf(text []byte, p diag.Position, utf8 bool) int {
	return offsetOf(syntax.NewLineIndex(text), p, utf8)
}

// ConvertPosition re-counts a UTF-16 position in bytes (toUTF8) or back.
func ConvertPosition(text []byte, p diag.Position, toUTF8 bool) diag.Position {
	return convertPosition(syntax.NewLineIndex(text), p, toUTF8)
}

// URIToPath and PathToURI convert between file URIs and paths.
var (
	URIToPath = uriToPath
	PathToURI = pathToURI
)

// ConvertRanges converts the ranges of diagnostics about text as the
// server does before it publishes them.
func ConvertRanges(text []byte, rs []diag.Range, toUTF8 bool) []diag.Range {
	diags := make([]diag.Diagnostic, len(rs))
	for i, r := range rs {
		diags[i] = diag.Diagnostic{Range: r}
	}
	out := make([]diag.Range, len(rs))
	for i, d := range toLSP("", text, diags, toUTF8) {
		out[i] = d.Range
	}
	return out
}

// SetTimeout sets how long a DaemonAnalyzer's call waits when the daemon
// says it works on nothing the call waits for.
func SetTimeout(d *DaemonAnalyzer, t time.Duration) { d.timeout = t }

// LineEdits returns the edits source.fixAll makes of old into new.
var LineEdits = lineEdits
