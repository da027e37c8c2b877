package lint

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// WriteGitHub prints diagnostics as GitHub Actions workflow commands.
func WriteGitHub(w io.Writer, ds []diag.Diagnostic) {
	wd, _ := os.Getwd()
	for _, d := range ds {
		kind := "notice"
		switch d.Severity {
		case diag.SeverityError:
			kind = "error"
		case diag.SeverityWarning:
			kind = "warning"
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,endLine=%d,endColumn=%d,title=%s::%s\n",
			kind, ghEscapeProp(query.DisplayPath(wd, d.Path)), d.Range.Start.Line+1, d.Range.Start.Character+1,
			d.Range.End.Line+1, d.Range.End.Character+1, ghEscapeProp(d.Code), ghEscapeData(d.Message))
	}
}

func ghEscapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghEscapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// SARIF 2.1.0, the subset GitHub code scanning reads
// (https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html).
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool               sarifTool                   `json:"tool"`
		OriginalURIBaseIDs map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
		Results            []sarifResult               `json:"results"`
		ColumnKind         string                      `json:"columnKind"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Version        string      `json:"version,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string          `json:"id"`
		Name                 string          `json:"name"`
		ShortDescription     sarifText       `json:"shortDescription"`
		FullDescription      sarifText       `json:"fullDescription"`
		Help                 sarifMessage    `json:"help"`
		HelpURI              string          `json:"helpUri"`
		DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
		Properties           map[string]any  `json:"properties,omitempty"`
	}
	sarifRuleConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifMessage struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown,omitempty"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarifText         `json:"message"`
		Locations           []sarifLocation   `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
		Region           *sarifRegion     `json:"region,omitempty"`
	}
	sarifArtifactLoc struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
		EndLine     int `json:"endLine"`
		EndColumn   int `json:"endColumn"`
	}
)

// sarifHelpURI is where the README documents the codes.
const sarifHelpURI = "https://github.com/amplidex/amplidex#diagnostics"

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s diag.Severity) string {
	switch s {
	case diag.SeverityError:
		return "error"
	case diag.SeverityWarning:
		return "warning"
	}
	return "note"
}

// sarifRules describes every code as a SARIF rule, in diag.Codes
// order, and returns each code's index.
func sarifRules() ([]sarifRule, map[string]int) {
	rules := make([]sarifRule, len(diag.Codes))
	index := make(map[string]int, len(diag.Codes))
	for i, c := range diag.Codes {
		area, name, _ := strings.Cut(c.Code, "/")
		summary := strings.ReplaceAll(c.Summary, "`", "")
		rules[i] = sarifRule{
			ID: c.Code, Name: ruleName(area, name),
			ShortDescription: sarifText{Text: summary},
			FullDescription:  sarifText{Text: summary + "."},
			Help: sarifMessage{Text: c.Help, Markdown: fmt.Sprintf("%s\n\nTo silence one occurrence, end its line with `# amplidex: ignore[%s]`; to silence it everywhere, run `amplidex check --ignore %s` or set `[check] ignore`.",
				c.Help, c.Code, c.Code)},
			HelpURI:              sarifHelpURI,
			DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(c.Severity)},
			Properties:           map[string]any{"tags": []string{area}},
		}
		index[c.Code] = i
	}
	return rules, index
}

// ruleName turns an area and a code into a rule name: "ref",
// "agent-unknown" → "RefAgentUnknown".
func ruleName(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		for _, w := range strings.Split(p, "-") {
			if w != "" {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
	}
	return b.String()
}

// WriteSARIF prints diagnostics as a SARIF 2.1.0 log for GitHub code
// scanning: one run, a rule for every code, and a result for every
// diagnostic with 1-based lines and columns (UTF-16 code units, as the
// diagnostics count). Paths below wd are relative to it (%SRCROOT%).
func WriteSARIF(w io.Writer, ds []diag.Diagnostic, wd, version string) error {
	rules, index := sarifRules()
	run := sarifRun{
		Tool:       sarifTool{Driver: sarifDriver{Name: "amplidex", InformationURI: "https://github.com/amplidex/amplidex", Version: version, Rules: rules}},
		Results:    []sarifResult{},
		ColumnKind: "utf16CodeUnits",
	}
	if wd != "" {
		run.OriginalURIBaseIDs = map[string]sarifArtifactLoc{"%SRCROOT%": {URI: fileURI(wd) + "/"}}
	}
	src := newSources()
	for _, d := range ds {
		i, ok := index[d.Code]
		if !ok {
			continue
		}
		loc := sarifArtifactLoc{URI: fileURI(d.Path)}
		if rel := query.DisplayPath(wd, d.Path); wd != "" && rel != d.Path {
			loc = sarifArtifactLoc{URI: relURI(rel), URIBaseID: "%SRCROOT%"}
		}
		phys := sarifPhysical{ArtifactLocation: loc}
		if !isDirAt(d.Path) {
			phys.Region = &sarifRegion{StartLine: d.Range.Start.Line + 1, StartColumn: d.Range.Start.Character + 1,
				EndLine: d.Range.End.Line + 1, EndColumn: d.Range.End.Character + 1}
		} else {
			phys.ArtifactLocation.URI += "/"
		}
		run.Results = append(run.Results, sarifResult{
			RuleID: d.Code, RuleIndex: i, Level: sarifLevel(d.Severity), Message: sarifText{Text: d.Message},
			Locations: []sarifLocation{{PhysicalLocation: phys}},
			PartialFingerprints: map[string]string{
				"amplidexLine/v1": fingerprint(src.line(d.Path, d.Range.Start.Line)),
			},
		})
	}
	return query.PrintJSON(w, sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// fileURI is the file: URI of an absolute path.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// relURI is the relative URI reference of a relative path.
func relURI(p string) string {
	return (&url.URL{Path: filepath.ToSlash(p)}).String()
}

// CodeCount is one line of `check --statistics`: how many diagnostics of
// a code are reported, the worst severity among them, and what the code
// means.
type CodeCount struct {
	Code     string        `json:"code"`
	Count    int           `json:"count"`
	Severity diag.Severity `json:"severity"`
	Summary  string        `json:"summary"`
}

// Statistics counts diagnostics by code, the most frequent first (then
// by code), as ruff's --statistics does.
func Statistics(ds []diag.Diagnostic) []CodeCount {
	byCode := map[string]*CodeCount{}
	for _, d := range ds {
		c := byCode[d.Code]
		if c == nil {
			c = &CodeCount{Code: d.Code, Severity: d.Severity}
			if info, ok := codeInfo(d.Code); ok {
				c.Summary = strings.ReplaceAll(info.Summary, "`", "")
			}
			byCode[d.Code] = c
		}
		c.Count++
		if config.Rank(d.Severity) > config.Rank(c.Severity) {
			c.Severity = d.Severity
		}
	}
	out := make([]CodeCount, 0, len(byCode))
	for _, c := range byCode {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// WriteStatistics prints the counts as aligned columns: count, code,
// severity, meaning.
func WriteStatistics(w io.Writer, stats []CodeCount) {
	nw, cw := 0, 0
	for _, c := range stats {
		nw = max(nw, len(strconv.Itoa(c.Count)))
		cw = max(cw, len(c.Code))
	}
	for _, c := range stats {
		fmt.Fprintf(w, "%*d  %-*s  %-7s  %s\n", nw, c.Count, cw, c.Code, c.Severity, c.Summary)
	}
}

// codeInfo returns the entry of diag.Codes for code.
func codeInfo(code string) (diag.CodeInfo, bool) {
	for _, c := range diag.Codes {
		if c.Code == code {
			return c, true
		}
	}
	return diag.CodeInfo{}, false
}

// Formats are the formats a Report is written in.
var Formats = []string{"text", "json", "github", "sarif"}

// Format says how Write writes a Report.
type Format struct {
	// Name is one of Formats.
	Name string
	// Statistics writes how many diagnostics of each code, in text or
	// JSON, instead of the diagnostics.
	Statistics bool
	// Text prints the diagnostics in text; with Sources set, under each
	// its line of source (on a terminal).
	Text    query.DiagnosticPrinter
	Sources *Sources
	// Version is the build's version, named in SARIF ("" for a
	// development build).
	Version string
}

// Write writes report to out in the format f: text with a summary line,
// JSON, GitHub Actions annotations or SARIF 2.1.0.
func Write(out io.Writer, report Report, f Format) error {
	if f.Statistics {
		stats := Statistics(report.Diagnostics)
		if f.Name == "json" {
			return query.PrintJSON(out, stats)
		}
		WriteStatistics(out, stats)
		_, err := fmt.Fprintln(out, SummaryLine(report.Summary))
		return err
	}
	switch f.Name {
	case "json":
		return query.PrintJSON(out, report)
	case "github":
		WriteGitHub(out, report.Diagnostics)
	case "sarif":
		wd, _ := os.Getwd()
		return WriteSARIF(out, report.Diagnostics, wd, f.Version)
	default:
		p := f.Text
		if f.Sources != nil {
			p.Source = f.Sources.Read
		}
		p.Print(out, report.Diagnostics)
		_, err := fmt.Fprintln(out, SummaryLine(report.Summary))
		return err
	}
	return nil
}

// WriteUnsafe says on w each fix of fixes left out as unsafe, where its
// diagnostic is, what it would do and why it is not made, and how many.
func WriteUnsafe(w io.Writer, fixes []FileFix) {
	wd, _ := os.Getwd()
	n := 0
	for _, f := range fixes {
		for _, u := range f.Unsafe {
			d := u.Diagnostic
			fmt.Fprintf(w, "amplidex: %s:%d:%d: not fixed: %s: %s [%s]\n", query.DisplayPath(wd, d.Path),
				d.Range.Start.Line+1, d.Range.Start.Character+1, u.Title, u.Why, d.Code)
			n++
		}
	}
	switch {
	case n == 1:
		fmt.Fprintln(w, "amplidex: 1 fix left to the author as unsafe (--unsafe-fixes makes it)")
	case n > 1:
		fmt.Fprintf(w, "amplidex: %d fixes left to the author as unsafe (--unsafe-fixes makes them)\n", n)
	}
}
