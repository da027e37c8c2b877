package lint

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
)

// Rule is what `amplidex rule --json` prints for a code.
type Rule struct {
	Code     string        `json:"code"`
	Area     string        `json:"area"`
	Severity diag.Severity `json:"severity"`
	Summary  string        `json:"summary"`
	Example  string        `json:"example"`
	Fix      string        `json:"fix"`
	Suppress RuleSuppress  `json:"suppress"`
}

// RuleSuppress says how a code is kept out of the report.
type RuleSuppress struct {
	// Line and File are the comments that suppress it in the front
	// matter of a profile, agent or bundle.md, or in pyproject.toml;
	// BodyLine and BodyFile in a Markdown body (a context file's, or
	// below the front matter), where `#` opens a heading.
	Line     string `json:"line"`
	File     string `json:"file"`
	BodyLine string `json:"body_line"`
	BodyFile string `json:"body_file"`
	// Config is the configuration that ignores it everywhere, Flag the
	// flag of check.
	Config string `json:"config"`
	Flag   string `json:"flag"`
}

// NewRule is the Rule of the code c.
func NewRule(c diag.CodeInfo) Rule {
	area, _, _ := strings.Cut(c.Code, "/")
	return Rule{
		Code: c.Code, Area: area, Severity: c.Severity, Summary: c.Summary, Example: c.Example(), Fix: c.Help,
		Suppress: RuleSuppress{
			Line:     fmt.Sprintf("# amplidex: ignore[%s]", c.Code),
			File:     fmt.Sprintf("# amplidex: ignore-file[%s]", c.Code),
			BodyLine: fmt.Sprintf("<!-- amplidex: ignore[%s] -->", c.Code),
			BodyFile: fmt.Sprintf("<!-- amplidex: ignore-file[%s] -->", c.Code),
			Config:   fmt.Sprintf("[check] ignore = [%q]", c.Code),
			Flag:     "--ignore " + c.Code,
		},
	}
}

// WriteRule explains a code in text.
func WriteRule(w io.Writer, d Rule) {
	fmt.Fprintf(w, "%s (%s)\n\n", d.Code, d.Severity)
	fmt.Fprintf(w, "What it means:\n    %s.\n", sentence(d.Summary))
	if d.Example != "" {
		fmt.Fprintf(w, "\nExample:\n%s", indent(d.Example, "    "))
	}
	fmt.Fprintf(w, "\nHow to fix it:\n    %s\n", d.Fix)
	fmt.Fprintf(w, "\nHow to suppress it:\n%s", indent(suppressText(d), "    "))
}

// suppressText says how to suppress a code: on its line and in its file
// where comments are read, and everywhere.
func suppressText(d Rule) string {
	return fmt.Sprintf("on its line:   %s\n"+
		"in its file:   %s\n"+
		"               (comments are read in the front matter of profiles, agents and bundles, in a bundle's YAML files and in pyproject.toml)\n"+
		"in Markdown:   %s on its line, %s in its file\n"+
		"               (in the body of a context file, profile or agent, where # opens a heading)\n"+
		"elsewhere:     [check.per-path] in the configuration, such as {\"vendor/**\" = [%q]}\n"+
		"everywhere:    %s, or %s\n",
		d.Suppress.Line, d.Suppress.File, d.Suppress.BodyLine, d.Suppress.BodyFile, d.Code, d.Suppress.Config, d.Suppress.Flag)
}

// sentence is a summary as a sentence: its first letter capitalised.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// indent puts prefix before every line of s that is not empty.
func indent(s, prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// DiagnosticsDoc is docs/diagnostics.md: every code of diag.Codes,
// by area, as `amplidex rule` explains it.
func DiagnosticsDoc() []byte {
	var b bytes.Buffer
	b.WriteString(`# Diagnostics

This page is for authors of Amplifier collections who meet a diagnostic of
amplidex (from ` + "`amplidex check`" + `, their editor or ` + "`amplidex watch`" + `), and for
whoever decides, in a project's configuration, which are reported. Each
code says what it means, shows a file that earns it, how to fix it and how
to suppress it; ` + "`amplidex rule CODE`" + ` prints the same.

<!-- Made by amplidex from diag.Codes; do not edit. To make it again:
     go test ./cmd/amplidex -run TestDiagnosticsDoc -args -update-docs -->

`)
	area := ""
	for _, c := range diag.Codes {
		d := NewRule(c)
		if d.Area != area {
			area = d.Area
			fmt.Fprintf(&b, "## %s/\n\n", area)
		}
		fmt.Fprintf(&b, "### %s\n\n", d.Code)
		fmt.Fprintf(&b, "Severity: %s by default.\n\n", d.Severity)
		fmt.Fprintf(&b, "%s.\n\n", sentence(d.Summary))
		if d.Example != "" {
			fmt.Fprintf(&b, "Example:\n\n```\n%s\n```\n\n", strings.TrimRight(d.Example, "\n"))
		}
		fmt.Fprintf(&b, "How to fix it: %s\n\n", d.Fix)
		fmt.Fprintf(&b, "How to suppress it: `%s` at the end of its line, or `%s` in its file "+
			"(in the front matter of a profile, agent or bundle, in a bundle's YAML file, or in pyproject.toml); "+
			"in a Markdown body (a context file's), `%s` on its line or `%s` in its file; "+
			"`%s` in the configuration, or `%s`.\n\n", d.Suppress.Line, d.Suppress.File, d.Suppress.BodyLine, d.Suppress.BodyFile,
			d.Suppress.Config, d.Suppress.Flag)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
