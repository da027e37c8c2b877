package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/config"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// ruleOptions are the flags of `amplidex rule`.
type ruleOptions struct {
	all  bool
	json bool
}

func newRuleCmd(a *App) *cobra.Command {
	opts := &ruleOptions{}
	cmd := &cobra.Command{
		Use:   "rule CODE|AREA",
		Short: "Explain a diagnostic code: what it means, an example, the fix, how to suppress it",
		Long: "rule explains a diagnostic code (schema/unknown-key), or every code of an area (schema/): what it means,\n" +
			"its default severity, an example that earns it, how to fix it, and how to suppress it. --all explains\n" +
			"every code. docs/diagnostics.md is made from the same text.",
		Args: maxArgs("CODE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runRule(opts, args)
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeCodes(c, args, prefix)
		},
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "explain every code")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print {code, area, severity, summary, example, fix, suppress} for each code")
	return cmd
}

// ruleDoc is what `amplidex rule --json` prints for a code.
type ruleDoc struct {
	Code     string        `json:"code"`
	Area     string        `json:"area"`
	Severity diag.Severity `json:"severity"`
	Summary  string        `json:"summary"`
	Example  string        `json:"example"`
	Fix      string        `json:"fix"`
	Suppress ruleSuppress  `json:"suppress"`
}

// ruleSuppress says how a code is kept out of the report.
type ruleSuppress struct {
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

func newRuleDoc(c diag.CodeInfo) ruleDoc {
	area, _, _ := strings.Cut(c.Code, "/")
	return ruleDoc{
		Code: c.Code, Area: area, Severity: c.Severity, Summary: c.Summary, Example: c.Example(), Fix: c.Help,
		Suppress: ruleSuppress{
			Line:     fmt.Sprintf("# amplidex: ignore[%s]", c.Code),
			File:     fmt.Sprintf("# amplidex: ignore-file[%s]", c.Code),
			BodyLine: fmt.Sprintf("<!-- amplidex: ignore[%s] -->", c.Code),
			BodyFile: fmt.Sprintf("<!-- amplidex: ignore-file[%s] -->", c.Code),
			Config:   fmt.Sprintf("[check] ignore = [%q]", c.Code),
			Flag:     "--ignore " + c.Code,
		},
	}
}

func (a *App) runRule(opts *ruleOptions, args []string) error {
	var docs []ruleDoc
	switch {
	case opts.all && len(args) > 0:
		return exitf(exitUsage, "rule: --all explains every code; it does not go with %s", args[0])
	case opts.all:
		for _, c := range diag.Codes {
			docs = append(docs, newRuleDoc(c))
		}
	case len(args) == 0:
		return exitf(exitUsage, "rule needs CODE (such as schema/unknown-key), an area (schema/) or --all")
	default:
		if err := config.CheckCode(args[0]); err != nil {
			return exitf(exitUsage, "rule: %v", err)
		}
		for _, c := range diag.Codes {
			if diag.MatchCode(args[0], c.Code) {
				docs = append(docs, newRuleDoc(c))
			}
		}
	}
	if opts.json {
		if opts.all || len(args) > 0 && len(docs) > 1 {
			return query.PrintJSON(a.Stdout, docs)
		}
		return query.PrintJSON(a.Stdout, docs[0])
	}
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(a.Stdout)
		}
		writeRule(a.Stdout, d)
	}
	return nil
}

// writeRule explains a code in text.
func writeRule(w io.Writer, d ruleDoc) {
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
func suppressText(d ruleDoc) string {
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

// diagnosticsDoc is docs/diagnostics.md: every code of diag.Codes,
// by area, as `amplidex rule` explains it.
func diagnosticsDoc() []byte {
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
		d := newRuleDoc(c)
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
