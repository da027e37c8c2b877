package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeCommands keeps the commands the documentation shows real:
// every `amplidex …` command line of README.md and docs/*.md (in a code
// block, or in a code span), each subcommand it names and each flag it
// passes, must be in what `amplidex … --help` prints for it.
func TestReadmeCommands(t *testing.T) {
	files := []string{filepath.Join("..", "..", "README.md")}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	h := newHelpTree(t)
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(filepath.Join("..", ".."), f)
		for _, c := range docCommands(string(b)) {
			lines++
			if err := h.check(c.args); err != nil {
				t.Errorf("%s:%d: `%s`: %v", filepath.ToSlash(name), c.line, c.text, err)
			}
		}
	}
	if lines < 20 {
		t.Errorf("found %d amplidex command lines in README.md and docs/*.md; the parser is missing them", lines)
	}
}

// TestReadmeCommandsCatchesBogus: the check of TestReadmeCommands fails on
// a command, a subcommand or a flag that does not exist, and passes the
// forms the documentation writes.
func TestReadmeCommandsCatchesBogus(t *testing.T) {
	doc := "Text with `amplidex query reslove NAME` inline.\n\n" +
		"```\n" +
		"$ amplidex frobnicate --nope\n" +
		"amplidex check --nope agents/x.md   # a comment --neither\n" +
		"amplidex --log-level debug lsp --stdio-bogus\n" +
		"amplidex daemon stp\n" +
		"amplidex: started the daemon (not a command line)\n" +
		"go run ./cmd/amplidex check --selct schema/\n" +
		"```\n\n" +
		"| `amplidex check [PATH…] [--format text\\|json] [--select …] [--with DIR]` | fine |\n\n" +
		"```yaml\n- run: amplidex check --isolated --format sarif > amplidex.sarif\n```\n" +
		"`amplidex --log-level debug lsp`, `amplidex completion bash|zsh|fish`, `amplidex query profile REF --merged`\n"
	h := newHelpTree(t)
	var bad []int
	for _, c := range docCommands(doc) {
		if err := h.check(c.args); err != nil {
			bad = append(bad, c.line)
			t.Logf("line %d: `%s`: %v", c.line, c.text, err)
		}
	}
	if want := []int{1, 4, 5, 6, 7, 9}; !slices.Equal(bad, want) {
		t.Errorf("lines found wrong: %v, want %v", bad, want)
	}
}

// docCommand is an amplidex command line of a document.
type docCommand struct {
	line int    // 1-based
	text string // as written
	args []string
}

var (
	codeSpanRE = regexp.MustCompile("`([^`]+)`")
	// commentRE is a shell comment after a command.
	commentRE = regexp.MustCompile(`\s#.*$`)
)

// docCommands returns the amplidex command lines of a Markdown document:
// the lines of its fenced code blocks, and its code spans, that run
// amplidex (`amplidex …`, `$ amplidex …`, `- run: amplidex …`, `go run
// ./cmd/amplidex …`), each with its arguments up to a redirection or the
// next command.
func docCommands(doc string) []docCommand {
	var out []docCommand
	fenced := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		var texts []string
		if fenced {
			texts = []string{commentRE.ReplaceAllString(line, "")}
		} else {
			for _, m := range codeSpanRE.FindAllStringSubmatch(strings.ReplaceAll(line, `\|`, "|"), -1) {
				texts = append(texts, m[1])
			}
		}
		for _, text := range texts {
			if args, ok := amplidexArgs(text); ok {
				out = append(out, docCommand{line: i + 1, text: strings.TrimSpace(text), args: args})
			}
		}
	}
	return out
}

// amplidexArgs returns the arguments of text when it runs amplidex.
func amplidexArgs(text string) ([]string, bool) {
	s := strings.TrimSpace(text)
	for _, p := range []string{"$ ", "- run: ", "run: "} {
		s = strings.TrimPrefix(s, p)
	}
	words := strings.Fields(s)
	switch {
	case len(words) > 0 && words[0] == "amplidex":
		words = words[1:]
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/amplidex":
		words = words[3:]
	default:
		return nil, false
	}
	var args []string
	for _, w := range words {
		if slices.Contains([]string{">", ">>", "<", "|", "||", "&&", ";", "2>&1"}, w) {
			break
		}
		w = strings.Trim(w, "[]")
		if w == "" || w == "…" || w == "..." {
			continue
		}
		args = append(args, strings.TrimSuffix(strings.TrimSuffix(w, "…"), "..."))
	}
	return args, true
}

// helpTree answers what `amplidex … --help` says: the subcommands and
// flags of each command, and whether it takes arguments of its own.
type helpTree struct {
	t     *testing.T
	cache map[string]*helpPage
}

// helpPage is what one command's --help says.
type helpPage struct {
	subcommands []string
	// flags maps a flag's long and short names to whether it takes a value.
	flags map[string]bool
	// args says the usage line takes arguments (not only a subcommand).
	args bool
}

func newHelpTree(t *testing.T) *helpTree {
	return &helpTree{t: t, cache: map[string]*helpPage{}}
}

var (
	helpFlagRE = regexp.MustCompile(`^\s+(?:-(\w), )?--([A-Za-z0-9-]+)(?: (\S+))?(?:\s{2,}|$)`)
	helpCmdRE  = regexp.MustCompile(`^\s+(\S+)\s`)
)

// page runs `amplidex PATH… --help` in process and reads its output.
func (h *helpTree) page(path []string) (*helpPage, error) {
	key := strings.Join(path, " ")
	if p, ok := h.cache[key]; ok {
		return p, nil
	}
	home := h.t.TempDir()
	env := map[string]string{"HOME": home, "AMPLIDEX_HOME": home, "AMPLIDEX_NO_SPAWN": "1"}
	var stdout, stderr bytes.Buffer
	app := NewApp(strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	if code := app.Run(context.Background(), append(slices.Clone(path), "--help")); code != 0 {
		return nil, fmt.Errorf("amplidex %s --help exits %d: %s", key, code, strings.TrimSpace(stderr.String()))
	}
	p := &helpPage{flags: map[string]bool{}}
	section := ""
	usagePrefix := strings.TrimSpace("amplidex " + key)
	for _, line := range strings.Split(stdout.String(), "\n") {
		if !strings.HasPrefix(line, " ") {
			section = strings.TrimSpace(line)
			continue
		}
		switch section {
		case "Usage:":
			rest := strings.TrimPrefix(strings.TrimSpace(line), usagePrefix)
			rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "[flags]"))
			if rest != "" && rest != "[command]" {
				p.args = true
			}
		case "Available Commands:":
			if m := helpCmdRE.FindStringSubmatch(line); m != nil {
				p.subcommands = append(p.subcommands, m[1])
			}
		case "Flags:", "Global Flags:":
			if m := helpFlagRE.FindStringSubmatch(line); m != nil {
				p.flags[m[2]] = m[3] != ""
				if m[1] != "" {
					p.flags[m[1]] = m[3] != ""
				}
			}
		}
	}
	if len(p.flags) == 0 {
		return nil, fmt.Errorf("amplidex %s --help lists no flags:\n%s", key, stdout.String())
	}
	h.cache[key] = p
	return p, nil
}

// check says what of args names no subcommand or flag of amplidex.
func (h *helpTree) check(args []string) error {
	var path []string
	positional := false // the command's own arguments have begun
	for i := 0; i < len(args); i++ {
		a := args[i]
		p, err := h.page(path)
		if err != nil {
			return err
		}
		cmd := strings.TrimSpace("amplidex " + strings.Join(path, " "))
		if strings.HasPrefix(a, "-") && a != "-" {
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			takesValue, ok := p.flags[name]
			if !ok {
				return fmt.Errorf("%s has no flag %s (see %s --help)", cmd, a, cmd)
			}
			if takesValue && !hasValue {
				i++
			}
			continue
		}
		if positional || len(p.subcommands) == 0 {
			positional = true
			continue
		}
		var next string
		for _, alt := range strings.Split(a, "|") {
			if slices.Contains(p.subcommands, alt) {
				if next == "" {
					next = alt
				}
				continue
			}
			if p.args || alt == strings.ToUpper(alt) {
				// An argument of the command's own, or a placeholder.
				positional = true
				continue
			}
			return fmt.Errorf("%s has no command %q (it has %s)", cmd, alt, strings.Join(p.subcommands, ", "))
		}
		if next != "" && !positional {
			path = append(path, next)
		}
	}
	_, err := h.page(path)
	return err
}
