package check

import (
	"fmt"
	pathpkg "path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery/bundle"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// Bounds of one repository check.
const (
	// MaxFiles is the most files of a repository checked.
	MaxFiles = 20_000
	// MaxDirDepth is the deepest directory walked.
	MaxDirDepth = 32
)

// skipDirs are directories never walked.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "__pycache__": true, ".venv": true, "venv": true, ".tox": true}

// Entry is a file of a repository and what it is.
type Entry struct {
	Path string      `json:"path"`
	Rel  string      `json:"rel"` // relative to the repository root, slash separated
	Kind bundle.Kind `json:"kind"`
}

// Repo is a bundle repository: its root and the files it holds that
// are checked.
type Repo struct {
	Root string `json:"root"`
	// Name is the root bundle's name ("" without one).
	Name string `json:"name,omitempty"`
	// RootBundle is bundle.md (or bundle.yaml) at the root, "" when none.
	RootBundle string  `json:"root_bundle,omitempty"`
	Entries    []Entry `json:"entries"`
}

// Options adjust Check.
type Options struct {
	// Manifest reports whether a file is an amplifier-agent manifest,
	// which must name a default_provider; nil means none is.
	Manifest func(path string) bool
	// Compose, when set, composes a bundle file of the repository in
	// place of compose.Compose over the same locations and files: a
	// caller that keeps compositions (the daemon) hands them out.
	Compose func(path string) *compose.Composition
}

// Result is the check of one repository. It is immutable.
type Result struct {
	Repo *Repo
	// Files are the parses of the files checked, in Repo.Entries' order.
	Files []*bundle.File
	// Compositions are the compositions of the repository's bundle files.
	Compositions map[string]*compose.Composition
	// Diagnostics are sorted and bounded per file.
	Diagnostics []diag.Diagnostic
	// Fixes are the fixes that need no choice (see bundle.Fix) of the
	// diagnostics the check makes beyond each file's own, by path: a
	// mention whose trailing . or : the runtime keeps, wrapped in
	// parentheses; a misspelt agent name or include replaced by the one
	// name near it.
	Fixes map[string][]bundle.Fix
	// Reads are every path the check read or looked for.
	Reads []string
}

// FilesChecked returns how many files were checked.
func (r *Result) FilesChecked() int { return len(r.Files) }

// Scan lists the files of the repository at root that a check reads:
// bundles, agents, modes, skills, recipes and context files. A file whose
// path does not tell is parsed to decide (a YAML or Markdown file with
// bundle: or includes: is a bundle wherever it is).
func Scan(files compose.Files, root string) *Repo {
	root = filepath.Clean(root)
	r := &Repo{Root: root}
	for _, n := range []string{"bundle.md", "bundle.yaml"} {
		if p := filepath.Join(root, n); files.Stat(p) == compose.RegularFile {
			r.RootBundle = p
			if f, err := files.Parse(p, bundle.KindBundle); err == nil && f.Bundle != nil {
				r.Name = f.Bundle.Name
			}
			break
		}
	}
	var walk func(dir, rel string, depth int)
	walk = func(dir, rel string, depth int) {
		if depth > MaxDirDepth || len(r.Entries) >= MaxFiles {
			return
		}
		names, err := files.List(dir)
		if err != nil {
			return
		}
		for _, n := range names {
			p, q := filepath.Join(dir, n), n
			if rel != "" {
				q = rel + "/" + n
			}
			switch files.Stat(p) {
			case compose.Directory:
				if !skipDir(rel, n) {
					walk(p, q, depth+1)
				}
			case compose.RegularFile:
				if len(r.Entries) >= MaxFiles {
					continue
				}
				if k := kindOf(files, p, q); k != bundle.KindOther {
					r.Entries = append(r.Entries, Entry{Path: p, Rel: q, Kind: k})
				}
			}
		}
	}
	walk(root, "", 0)
	return r
}

// skipDir reports whether the directory name, in the directory rel of a
// repository, is left out of its check: dot directories (but .amplifier),
// .git, node_modules, caches and virtual environments, and in .amplifier
// all but bundles/ (its collections are checked as such, its settings by
// where bundles are found).
func skipDir(rel, name string) bool {
	return skipDirs[name] || (strings.HasPrefix(name, ".") && name != ".amplifier") || (rel == ".amplifier" && name != "bundles")
}

// kindOf returns the kind of the file at p (rel, relative to its
// repository's root, slash separated): by its path, else, for a Markdown
// or YAML file its path does not tell, by what it holds.
func kindOf(files compose.Files, p, rel string) bundle.Kind {
	ext := strings.ToLower(filepath.Ext(rel))
	if ext != ".md" && ext != ".yaml" && ext != ".yml" || pathpkg.Dir(rel) == ".amplifier" {
		return bundle.KindOther // .amplifier/settings.yaml is no bundle
	}
	k := bundle.Classify(rel)
	if k == bundle.KindOther && !strings.EqualFold(pathpkg.Base(rel), "README.md") {
		if f, err := files.Parse(p, bundle.KindOther); err == nil {
			k = f.Kind
		}
	}
	return k
}

// KindOf returns the kind a check of the repository at root gives the
// file at path: KindOther for a file it does not check (one of a kind it
// does not know, or in a directory it does not walk).
func KindOf(files compose.Files, root, path string) bundle.Kind {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return bundle.KindOther
	}
	rel = filepath.ToSlash(rel)
	dirs := strings.Split(rel, "/")
	for i := range len(dirs) - 1 {
		if skipDir(strings.Join(dirs[:i], "/"), dirs[i]) {
			return bundle.KindOther
		}
	}
	return kindOf(files, path, rel)
}

// Check checks every file of the repository at root: each file's syntax
// and schema, the composition of each bundle (includes, as the runtime
// loads them), the agents and context files each bundle declares, and
// the @mentions of bundles, agents, modes and context files. Diagnostics
// are made only for files of the repository.
func Check(loc *compose.Locations, files compose.Files, root string, opts Options) *Result {
	rec := &recordFiles{Files: files, read: map[string]bool{}}
	repo := Scan(rec, root)
	res := &Result{Repo: repo, Compositions: map[string]*compose.Composition{}, Fixes: map[string][]bundle.Fix{}}
	var diags []diag.Diagnostic
	inRepo := func(p string) bool {
		r, err := filepath.Rel(repo.Root, p)
		return err == nil && r != ".." && !strings.HasPrefix(r, "../")
	}
	seen := map[string]bool{}
	add := func(ds ...diag.Diagnostic) {
		for _, d := range ds {
			if !inRepo(d.Path) {
				continue
			}
			d.Collection = repo.Name
			k := fmt.Sprint(d.Path, d.Range, d.Code, d.Message)
			if seen[k] {
				continue
			}
			seen[k] = true
			diags = append(diags, d)
		}
	}
	// The repository's settings files (.amplifier/settings.yaml).
	add(loc.Diagnostics...)
	for _, e := range repo.Entries {
		f, err := rec.Parse(e.Path, e.Kind)
		if err != nil {
			add(diag.Diagnostic{Code: bundle.CodeUnreadable, Severity: diag.SeverityError, Path: e.Path, Message: "cannot read the file: " + err.Error()})
			continue
		}
		if e.Kind == bundle.KindBundle && opts.Manifest != nil && opts.Manifest(e.Path) {
			f = bundle.Parse(e.Path, f.Text(), bundle.Options{Kind: e.Kind, Manifest: true})
		}
		res.Files = append(res.Files, f)
		add(f.Diagnostics...)
	}

	// Compose every bundle; the root bundle's namespaces serve the files
	// no bundle composes (agents, modes, context).
	var rootNS map[string]string
	for _, f := range res.Files {
		if f.Kind != bundle.KindBundle || f.Bundle == nil {
			continue
		}
		var c *compose.Composition
		if opts.Compose != nil {
			c = opts.Compose(f.Path)
		} else {
			c = compose.Compose(loc, rec, f.Path)
		}
		res.Compositions[f.Path] = c
		add(c.Diagnostics...)
		refs := refDiagnostics(f, c)
		add(refs...)
		res.addFixes(f.Path, nameFixes(rec, f, c, append(slices.Clip(c.Diagnostics), refs...)))
		ns := namespaces(c)
		if f.Path == repo.RootBundle {
			rootNS = ns
		}
		ds, fixes := mentionDiagnostics(rec, f, ns)
		add(ds...)
		res.addFixes(f.Path, fixes)
	}
	if rootNS == nil && repo.Name != "" {
		rootNS = map[string]string{repo.Name: repo.Root}
	}
	for _, f := range res.Files {
		switch f.Kind {
		case bundle.KindAgent, bundle.KindMode, bundle.KindContext:
			ds, fixes := mentionDiagnostics(rec, f, rootNS)
			add(ds...)
			res.addFixes(f.Path, fixes)
		}
	}
	diag.Sort(diags)
	res.Diagnostics = bundle.Limit(diags)
	// The compositions read mostly what the check read: their paths join
	// its set, which is sorted once.
	for _, c := range res.Compositions {
		for _, p := range c.Reads {
			rec.read[p] = true
		}
	}
	for p := range rec.read {
		res.Reads = append(res.Reads, p)
	}
	sort.Strings(res.Reads)
	return res
}

// namespaces returns the namespaces of a composition by name, the
// composed bundle's own name included (as the runtime's mention resolver
// adds it).
func namespaces(c *compose.Composition) map[string]string {
	ns := map[string]string{}
	for _, n := range c.Namespaces {
		ns[n.Name] = n.Dir
	}
	if c.Name != "" && ns[c.Name] == "" {
		ns[c.Name] = filepath.Dir(c.Path)
	}
	return ns
}

// refDiagnostics reports the agents and context files that f declares and
// that resolve to nothing in its own composition.
func refDiagnostics(f *bundle.File, c *compose.Composition) []diag.Diagnostic {
	var out []diag.Diagnostic
	at := map[string]diag.Range{}
	for _, a := range f.Bundle.Agents {
		at[a.Name] = a.Range
	}
	for _, a := range c.Agents {
		if a.Problem == "" || a.Origin.Path != f.Path || strings.HasPrefix(a.Name, "@") || (a.UnknownNamespace && c.Incomplete()) {
			continue // a leading @ is its own diagnostic; an include not in the cache may bring the namespace
		}
		out = append(out, diag.Diagnostic{Code: bundle.CodeAgentUnresolved, Severity: diag.SeverityError, Path: f.Path,
			Range: at[a.Name], Message: fmt.Sprintf("the agent %s resolves to no file: %s; the runtime never loads it", quote(a.Name), a.Problem)})
	}
	ctx := map[string]diag.Range{}
	for _, r := range f.Bundle.Context {
		ctx[r.Key] = r.Range
	}
	for _, cf := range c.Context {
		if cf.Exists || cf.Origin.Path != f.Path || strings.HasPrefix(cf.Ref, "@") || strings.HasPrefix(cf.Key, "@") || (cf.UnknownNamespace && c.Incomplete()) {
			continue
		}
		what := cf.Ref
		if what == "" {
			what = cf.Key
		}
		r, ok := ctx[what]
		if !ok {
			r = ctx[cf.Key]
		}
		msg := fmt.Sprintf("the context file %s resolves to nothing", quote(what))
		if cf.Problem != "" {
			msg += ": " + cf.Problem
		}
		out = append(out, diag.Diagnostic{Code: bundle.CodeContextUnresolved, Severity: diag.SeverityError, Path: f.Path,
			Range: r, Message: msg + "; it contributes nothing"})
	}
	return out
}

// addFixes records fixes of the file at path.
func (r *Result) addFixes(path string, fixes []bundle.Fix) {
	if len(fixes) > 0 {
		r.Fixes[path] = append(r.Fixes[path], fixes...)
	}
}

// mentionDiagnostics reports the @ns:path mentions of f that name a
// namespace of ns but no file in it, saying so when a trailing . or :
// the runtime keeps is the reason; the fix of that one wraps the mention
// in parentheses, before the punctuation: (@ns:path).
func mentionDiagnostics(files compose.Files, f *bundle.File, ns map[string]string) ([]diag.Diagnostic, []bundle.Fix) {
	var out []diag.Diagnostic
	var fixes []bundle.Fix
	for _, m := range f.Mentions() {
		name, p, ok := m.Namespace()
		if !ok {
			continue
		}
		dir, known := ns[name]
		if !known {
			continue
		}
		if files.Stat(mentionPath(dir, p)) != compose.Missing {
			continue
		}
		trimmed := strings.TrimRight(p, ".:")
		if trimmed != p && trimmed != "" && files.Stat(mentionPath(dir, trimmed)) != compose.Missing {
			tail := p[len(trimmed):]
			out = append(out, diag.Diagnostic{Code: bundle.CodeMentionPunctuation, Severity: diag.SeverityError, Path: f.Path, Range: m.Range,
				Message: fmt.Sprintf("the runtime reads this mention as %s, keeping the trailing %s, and finds no such file; you meant @%s:%s: put a space before the %s, or wrap the mention in parentheses", quote(m.Text), quote(tail), name, trimmed, quote(tail))})
			if x, ok := wrapMention(f, m, len(tail)); ok {
				fixes = append(fixes, x)
			}
			continue
		}
		out = append(out, diag.Diagnostic{Code: bundle.CodeMentionUnresolved, Severity: diag.SeverityError, Path: f.Path, Range: m.Range,
			Message: fmt.Sprintf("%s names no file: the namespace %s (%s) has no %s; the runtime skips the mention", quote(m.Text), quote(name), dir, p)})
	}
	return out, fixes
}

// wrapMention returns the fix of the mention m of f whose last tail
// bytes are punctuation the runtime keeps: the mention without them, in
// parentheses, then the punctuation.
func wrapMention(f *bundle.File, m bundle.Mention, tail int) (bundle.Fix, bool) {
	lines := f.Lines()
	start, end := lines.PositionOffset(m.Range.Start), lines.PositionOffset(m.Range.End)
	text := f.Text()
	if start < 0 || end > len(text) || start > end || string(text[start:end]) != m.Text || tail >= len(m.Text) {
		return bundle.Fix{}, false
	}
	cut := len(m.Text) - tail
	return bundle.Fix{Code: bundle.CodeMentionPunctuation, At: m.Range, Start: start, End: end,
		Text: "(" + m.Text[:cut] + ")" + m.Text[cut:]}, true
}

// mentionPath is where @ns:path resolves: construct_context_path.
func mentionPath(dir, p string) string {
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return dir
	}
	return filepath.Join(dir, p)
}

func quote(s string) string { return "`" + s + "`" }

// recordFiles passes through to Files and remembers what was read.
type recordFiles struct {
	compose.Files
	read map[string]bool
}

func (r *recordFiles) Stat(p string) compose.Entry {
	r.read[p] = true
	return r.Files.Stat(p)
}

func (r *recordFiles) Parse(p string, k bundle.Kind) (*bundle.File, error) {
	r.read[p] = true
	return r.Files.Parse(p, k)
}

func (r *recordFiles) List(dir string) ([]string, error) {
	r.read[dir] = true
	return r.Files.List(dir)
}
