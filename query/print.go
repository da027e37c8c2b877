package query

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// The text printers of the methods (see the table in methods.go). Text
// that comes from collections (names, descriptions, paths, messages) may
// hold anything; every printer passes it through Clean, so that no control
// character reaches a terminal raw.

// Clean returns s with every control character (C0, DEL, C1, and Unicode
// format characters such as bidirectional overrides) and invalid UTF-8
// replaced by a visible escape: \n, \t, \x1b, \u202e.
func Clean(s string) string {
	ok := true
	for i, r := range s {
		if r == utf8.RuneError || needsEscape(r) {
			_ = i
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100 && needsEscape(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// DiagnosticPrinter prints diagnostics as text: one per line,
// `path:line:col: severity: message [code]`, grouped by file with a blank
// line between files.
type DiagnosticPrinter struct {
	// Color marks the severity with ANSI colours (a terminal).
	Color bool
	// WorkDir, when set, shortens paths below it to relative ones.
	WorkDir string
	// Source, when set, returns the bytes of a file (nil when it has
	// none), and each diagnostic is followed by the line it starts on,
	// with a caret under its range (see Snippet). For a terminal.
	Source func(path string) []byte
}

// Print writes ds.
func (p DiagnosticPrinter) Print(w io.Writer, ds []diag.Diagnostic) {
	last := ""
	var lines *syntax.LineIndex
	for _, d := range ds {
		if d.Path != last {
			if last != "" {
				fmt.Fprintln(w)
			}
			lines = nil
			if p.Source != nil {
				if src := p.Source(d.Path); src != nil {
					lines = syntax.NewLineIndex(src)
				}
			}
		}
		last = d.Path
		fmt.Fprintln(w, p.Line(d))
		if lines != nil {
			fmt.Fprint(w, Snippet(lines, d.Range, p.Color))
		}
	}
	if last != "" {
		fmt.Fprintln(w)
	}
}

// snippetWidth is the most characters of a line Snippet shows.
const snippetWidth = 120

// Snippet renders the line r starts on, numbered, with carets under the
// part of it r covers (to the end of the line when r goes on past it; one
// caret for an empty range), as ruff and rustc do:
//
//	  |
//	7 |   extnds: typo
//	  |   ^^^^^^
//
// Tabs show as four spaces, control characters escaped as Clean escapes
// them; a long line is cut to a window around the range. It returns ""
// when the line is not in the text.
func Snippet(lines *syntax.LineIndex, r diag.Range, color bool) string {
	n := r.Start.Line
	if n < 0 || n >= lines.Lines() {
		return ""
	}
	text := lines.Line(n)
	if r.End.Line > n {
		r.End.Character = 1 << 30 // the rest of the line
	}
	// Cells: what each character shows as, and where the range falls, in
	// UTF-16 units as Positions count.
	type cell struct {
		show   string
		start  int
		inside bool
	}
	// Only the characters near the start of the range are kept, so that
	// a long line costs no more than a short one.
	var cells []cell
	cutBefore, cutAfter := false, false
	u := 0
	for _, c := range string(text) {
		if u < r.Start.Character-snippetWidth {
			cutBefore = true
			u += utf16Len(c)
			continue
		}
		if u > r.Start.Character+2*snippetWidth {
			cutAfter = true
			break
		}
		show := string(c)
		switch {
		case c == '\t':
			show = "    "
		case c == utf8.RuneError || needsEscape(c):
			show = Clean(string(c))
		}
		cells = append(cells, cell{show: show, start: u, inside: u >= r.Start.Character && u < r.End.Character})
		u += utf16Len(c)
	}
	first, last := -1, -1
	for i, c := range cells {
		if c.inside {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 { // an empty range, or one past the end of the line
		first = len(cells)
		for i, c := range cells {
			if c.start >= r.Start.Character {
				first = i
				break
			}
		}
		last = first
	}
	// A window of at most snippetWidth characters that shows the start of
	// the range.
	from, to := 0, len(cells)
	if len(cells) > snippetWidth {
		from = max(0, first-snippetWidth/3)
		to = min(len(cells), from+snippetWidth)
	}
	pre, post := "", ""
	if from > 0 || cutBefore {
		pre = "…"
	}
	if to < len(cells) || cutAfter {
		post = "…"
	}
	var code, marks strings.Builder
	code.WriteString(pre)
	marks.WriteString(strings.Repeat(" ", utf8.RuneCountInString(pre)))
	for i := from; i < to; i++ {
		code.WriteString(cells[i].show)
		mark := " "
		if i >= first && i <= last {
			mark = "^"
		}
		marks.WriteString(strings.Repeat(mark, utf8.RuneCountInString(cells[i].show)))
	}
	code.WriteString(post)
	if first >= to { // the caret past the last character
		marks.WriteString("^")
	}
	num := strconv.Itoa(n + 1)
	pad := strings.Repeat(" ", len(num))
	caret := strings.TrimRight(marks.String(), " ")
	if color {
		caret = "\x1b[1;31m" + caret + "\x1b[0m"
	}
	return fmt.Sprintf("%s |\n%s | %s\n%s | %s\n", pad, num, code.String(), pad, caret)
}

func utf16Len(c rune) int {
	if c >= 0x10000 {
		return 2
	}
	return 1
}

// Line formats one diagnostic.
func (p DiagnosticPrinter) Line(d diag.Diagnostic) string {
	d.Path = Clean(DisplayPath(p.WorkDir, d.Path))
	d.Message = Clean(d.Message)
	line := d.String()
	if p.Color {
		line = colorize(d.Severity, line)
	}
	return line
}

// DisplayPath shortens p to a path relative to wd when it lies below it.
func DisplayPath(wd, p string) string {
	if wd == "" {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}

// colorize colours the severity of a diagnostic line; "cleared" (watch's
// word for diagnostics that went away) is green.
func colorize(sev diag.Severity, line string) string {
	const reset = "\x1b[0m"
	col := "\x1b[36m" // info: cyan
	switch sev {
	case "cleared":
		col = "\x1b[32m"
	case diag.SeverityError:
		col = "\x1b[31m"
	case diag.SeverityWarning:
		col = "\x1b[33m"
	}
	s := string(sev) + ":"
	return strings.Replace(line, " "+s+" ", " "+col+s+reset+" ", 1)
}

// Plural returns "1 word" or "n words".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return Clean(s)
}

// oneLine squeezes s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = Clean(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}

func printCollections(w io.Writer, cs []CollectionInfo, o PrintOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if o.Header {
		fmt.Fprintln(tw, "NAME\tVERSION\tROOT\tSTATUS\tLAYOUT\tDIR")
	}
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", Clean(c.Name), dash(c.Version), c.Root, c.Status, c.Layout, Clean(c.Dir))
	}
	return tw.Flush()
}

func printResolve(w io.Writer, r *ResolveResult, _ PrintOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if r.Winner != nil {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", Clean(r.Name), Clean(r.Winner.Version), r.Winner.Root, Clean(r.Winner.Dir))
	} else {
		fmt.Fprintf(tw, "%s\t-\t-\tresolves nowhere\n", Clean(r.Name))
	}
	for _, c := range r.Shadowed {
		fmt.Fprintf(tw, "  shadowed\t%s\t%s\t%s\n", Clean(c.Version), c.Root, Clean(c.Dir))
	}
	for _, c := range r.Skipped {
		fmt.Fprintf(tw, "  skipped\t%s\t%s\t%s: %s\n", dash(c.Version), c.Root, Clean(c.Dir), Clean(c.Problem))
	}
	if r.Unverified {
		fmt.Fprintf(tw, "  (from the index the daemon's last run left; its first scan is still running)\n")
	}
	return tw.Flush()
}

func printCollection(w io.Writer, d *CollectionDetail, _ PrintOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "name\t%s\nversion\t%s\ndescription\t%s\nroot\t%s\ndir\t%s\nlayout\t%s\nstatus\t%s\n",
		Clean(d.Name), dash(d.Version), Clean(d.Description), d.Root, Clean(d.Dir), d.Layout, d.Status)
	if d.Base != d.Dir {
		fmt.Fprintf(tw, "base\t%s\n", Clean(d.Base))
	}
	for _, r := range d.Requires {
		fmt.Fprintf(tw, "requires\t%s %s\n", Clean(r.Name), Clean(r.Constraint))
	}
	for _, r := range d.Resources {
		fmt.Fprintf(tw, "%s\t%s\n", r.Kind, Clean(r.Rel))
	}
	for _, c := range d.Shadowed {
		fmt.Fprintf(tw, "shadows\t%s (%s)\n", Clean(c.Dir), c.Root)
	}
	for _, c := range d.Skipped {
		fmt.Fprintf(tw, "skipped\t%s (%s): %s\n", Clean(c.Dir), c.Root, Clean(c.Problem))
	}
	return tw.Flush()
}

func printResources(w io.Writer, rs []ResourceInfo, o PrintOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if o.Header {
		fmt.Fprintln(tw, "REF\tKIND\tPATH\tDESCRIPTION")
	}
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", Clean(r.Ref), r.Kind, Clean(r.Path), oneLine(r.Description, 60))
	}
	return tw.Flush()
}

func printProfile(w io.Writer, p *ProfileResult, o PrintOptions) error {
	fmt.Fprintf(w, "%s\t%s\n", Clean(p.Ref), Clean(p.Path))
	chain := make([]string, len(p.Chain))
	for i, c := range p.Chain {
		chain[i] = Clean(c)
	}
	tail := ""
	if !p.Complete {
		tail = " → ? (incomplete)"
	}
	fmt.Fprintf(w, "chain: %s%s\n", strings.Join(chain, " → "), tail)
	if len(p.Problems) > 0 {
		fmt.Fprintln(w)
		o.Diagnostics.Print(w, p.Problems)
	}
	if p.Merged.Len() == 0 {
		return nil // as its JSON, which leaves an empty mapping out
	}
	fmt.Fprintln(w, "---")
	if !p.Complete {
		fmt.Fprintln(w, "# INCOMPLETE: the extends chain does not reach its root; this merges only what resolved and is not the effective profile")
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p.Merged); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	// YAML quotes what needs quoting; what is left raw is printable.
	fmt.Fprint(w, b.String())
	fmt.Fprintln(w, "---")
	return nil
}

func printAgent(w io.Writer, r *AgentResult, _ PrintOptions) error {
	fmt.Fprintf(w, "%s\t%s\n%s\n", Clean(r.Ref), Clean(r.Path), Clean(r.Description))
	return nil
}

func printDiagnostics(w io.Writer, d *DiagnosticsResult, o PrintOptions) error {
	o.Diagnostics.Print(w, d.Diagnostics)
	// Counted as check counts them: "info", as --severity names it.
	fmt.Fprintf(w, "%s, %s, %d info in %s\n", Plural(d.Summary.Errors, "error"), Plural(d.Summary.Warnings, "warning"),
		d.Summary.Infos, Plural(d.Summary.Files, "file"))
	return nil
}

func printDeps(w io.Writer, d *DepsResult, _ PrintOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t%s\n", Clean(d.Name), dash(d.Version))
	for _, r := range d.Requires {
		found := ""
		if r.FoundVersion != "" {
			found = Clean(r.FoundVersion) + " at " + Clean(r.FoundDir)
		}
		fmt.Fprintf(tw, "  requires\t%s %s\t%s\t%s\n", Clean(r.Name), Clean(r.Constraint), r.Status, found)
	}
	users := append([]DepUser(nil), d.RequiredBy...)
	sort.Slice(users, func(i, j int) bool { return users[i].Name < users[j].Name })
	for _, u := range users {
		st := "ok"
		if !u.Satisfied {
			st = "unsatisfied"
		}
		fmt.Fprintf(tw, "  required by\t%s %s\t%s\n", Clean(u.Name), Clean(u.Constraint), st)
	}
	return tw.Flush()
}

func printChanges(w io.Writer, res *ChangesResult, _ PrintOptions) error {
	fmt.Fprintf(w, "clock %s\n", res.Clock)
	if res.IsFreshInstance {
		fmt.Fprintln(w, "fresh instance: every indexed file follows")
	}
	for _, f := range res.Files {
		if f.Deleted {
			fmt.Fprintf(w, "deleted %s\n", Clean(f.Path))
		} else {
			fmt.Fprintf(w, "changed %s\n", Clean(f.Path))
		}
	}
	return nil
}

func printStatus(w io.Writer, st *Status, _ PrintOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	mode := string(st.Mode)
	if st.SocketActivated {
		mode += " (socket-activated)"
	}
	fmt.Fprintf(tw, "pid\t%d\nversion\t%s\nmode\t%s\nuptime\t%s\nsocket\t%s\nindex\t%s\nclock\t%s\n",
		st.PID, Clean(st.Build.String()), Clean(mode), st.Uptime, Clean(st.Socket), Clean(st.Index), st.Clock)
	if st.IdleExit != "" {
		if !st.IdleDeadline.IsZero() {
			fmt.Fprintf(tw, "idle exit\tat %s, %s without clients, unless one connects\n",
				st.IdleDeadline.Local().Format(time.TimeOnly), st.IdleExit)
		} else {
			fmt.Fprintf(tw, "idle exit\t%s after its last client leaves (%s open)\n", st.IdleExit, Plural(st.Connections, "connection"))
		}
	}
	if p := st.Progress; st.Scanning && p != nil {
		fmt.Fprintf(tw, "scanning\t%s: %s, %s, %s\n", p.Phase, Plural(p.Files, "file"), Plural(p.Collections, "collection"), p.Elapsed)
	}
	for _, r := range st.Registering {
		fmt.Fprintf(tw, "registering\t%s\t%s: %s, %s, %s\n", projectLabel(r.Dir, r.Roots), r.Phase,
			Plural(r.Files, "file"), Plural(r.Collections, "collection"), r.Elapsed)
	}
	fmt.Fprintf(tw, "files\t%d\n", st.Files)
	for _, r := range st.Roots {
		watches := "1 watch"
		if r.Watches != 1 {
			watches = fmt.Sprintf("%d watches", r.Watches)
		}
		fmt.Fprintf(tw, "root\t%s\t%s\t%s\t%s\t%s\n", r.Kind, r.State, Clean(r.Path), Plural(r.Collections, "collection"), watches)
		for _, w := range r.Warnings {
			fmt.Fprintf(tw, "\twarning: %s\n", Clean(w))
		}
	}
	for _, r := range st.BundleRoots {
		watches := "1 watch"
		if r.Watches != 1 {
			watches = fmt.Sprintf("%d watches", r.Watches)
		}
		fmt.Fprintf(tw, "bundle root\t%s\t%s\t%s\n", r.State, Clean(r.Path), watches)
		for _, w := range r.Warnings {
			fmt.Fprintf(tw, "\twarning: %s\n", Clean(w))
		}
	}
	for _, p := range st.Projects {
		fmt.Fprintf(tw, "project\t%s\tlast used %s\n", projectLabel(p.Dir, p.Roots), p.LastUsed.Local().Format(time.RFC3339))
	}
	for _, b := range st.Bundles {
		fmt.Fprintf(tw, "bundle\t%s\t%s\t%s", b.State, Clean(b.Manifest), b.Key)
		if !b.LastBuild.IsZero() {
			fmt.Fprintf(tw, "\tbuilt %s in %s", b.LastBuild.Format(time.RFC3339), b.Took)
		}
		if b.Error != "" {
			fmt.Fprintf(tw, "\t%s", Clean(b.Error))
		}
		fmt.Fprintln(tw)
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", Clean(w))
	}
	return tw.Flush()
}

// projectLabel names a project of status: its directory, and the
// client's roots when its View is of those.
func projectLabel(dir string, roots *Roots) string {
	dir = Clean(dir)
	if roots != nil {
		if dir == "" {
			dir = "(no project)"
		}
		dir += " with the client's roots (home " + Clean(roots.Home) + ", bundled " + Clean(strings.Join(roots.Bundled, string(filepath.ListSeparator)))
		if roots.Collection != "" {
			dir += ", the collection " + Clean(roots.Collection)
		}
		dir += ")"
	}
	return dir
}

func printForget(w io.Writer, r *ForgetResult, _ PrintOptions) error {
	if r.Forgotten {
		_, err := fmt.Fprintf(w, "forgot %s\n", Clean(r.Dir))
		return err
	}
	_, err := fmt.Fprintf(w, "%s was not registered\n", Clean(r.Dir))
	return err
}

// PrintJSON writes v as indented JSON, the form every --json prints.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
