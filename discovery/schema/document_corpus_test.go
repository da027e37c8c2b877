package schema_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
)

// documentCorpus returns $AMPLIDEX_CORPUS or skips the test.
func documentCorpus(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("AMPLIDEX_CORPUS")
	if dir == "" {
		t.Skip("AMPLIDEX_CORPUS is not set; skipping the test over the real corpus")
	}
	return dir
}

// corpusDocument is a profile, agent or bundle manifest of the corpus.
type corpusDocument struct {
	rel  string // slash-separated, relative to the corpus
	kind schema.DocKind
	src  []byte
}

// corpusDocuments lists the profiles and agents of corpus/collections and
// corpus/bundled (profiles/*.md and agents/*.md, README files included, as
// EXPECTED.md counts them) and the manifests and agents of corpus/bundle.
func corpusDocuments(t testing.TB, dir string) []corpusDocument {
	t.Helper()
	var docs []corpusDocument
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		// bundles/ holds repositories of today's bundle format, which
		// EXPECTED.md does not count: package bundle reads them.
		if err == nil && e.IsDir() && rel == "bundles" {
			return filepath.SkipDir
		}
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		parent := filepath.Base(filepath.Dir(p))
		var kind schema.DocKind
		switch {
		case strings.HasPrefix(rel, "bundle/") && e.Name() == "bundle.md":
			kind = schema.DocBundle
		case strings.HasPrefix(rel, "bundle/") && parent == "agents":
			kind = schema.DocBundleAgent
		case strings.HasPrefix(rel, "bundle/"):
			return nil
		case parent == "profiles":
			kind = schema.DocProfile
		case parent == "agents":
			kind = schema.DocAgent
		default:
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		docs = append(docs, corpusDocument{rel, kind, src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestCorpusFrontMatter checks the front matter verdicts of EXPECTED.md:
// which files have none, which fail to parse as YAML and where; every
// other profile and agent parses, and its name is its file stem.
func TestCorpusFrontMatter(t *testing.T) {
	dir := documentCorpus(t)
	noFrontMatter := []string{
		"collections/payneio__amplifier-collection-issues/max_payne_collection/profiles/README.md",
		"collections/robotdad__amplifier-collection-spec-kit/agents/implementation-guide.md",
		"collections/robotdad__amplifier-collection-spec-kit/agents/requirement-clarifier.md",
		"collections/robotdad__amplifier-collection-spec-kit/agents/research-architect.md",
		"collections/samueljklee__amplifier-collection-amplifier-dev/amplifier_collection_amplifier_dev/agents/session-debugger.md",
	}
	// Front matter line and column of "mapping values are not allowed", as
	// PyYAML reports them. go-yaml reports only the line; the column is
	// that of the colon YAML refuses, found on that line, and agrees with
	// PyYAML's for all eight files.
	badYAML := map[string][2]int{
		"bug-hunter.md":            {2, 229},
		"convergence-architect.md": {2, 308},
		"issue-capturer.md":        {2, 334},
		"modular-builder.md":       {2, 268},
		"post-task-cleanup.md":     {2, 366},
		"sprint-planner.md":        {2, 423},
		"tdd-specialist.md":        {2, 336},
		"zen-architect.md":         {2, 197},
	}
	crlf := []string{
		"collections/samueljklee__amplifier-collection-amplifier-dev/amplifier_collection_amplifier_dev/agents/amplifier-explainer.md",
		"collections/samueljklee__amplifier-collection-amplifier-dev/amplifier_collection_amplifier_dev/agents/module-author.md",
	}
	n := 0
	for _, doc := range corpusDocuments(t, dir) {
		if doc.kind != schema.DocProfile && doc.kind != schema.DocAgent {
			continue
		}
		n++
		d := schema.ParseDocument(doc.rel, doc.src, doc.kind, schema.Options{})
		var fm []diag.Diagnostic
		for _, g := range d.Diagnostics {
			if strings.HasPrefix(g.Code, "frontmatter/") {
				fm = append(fm, g)
			}
			if g.Code == diag.CodeNameMismatch {
				t.Errorf("%s", g)
			}
		}
		convergent := strings.HasPrefix(doc.rel, "collections/momuno__amplifier-collection-convergent-dev/agents/")
		switch want, bad := badYAML[filepath.Base(doc.rel)]; {
		case slices.Contains(noFrontMatter, doc.rel):
			if len(fm) != 1 || fm[0].Code != diag.CodeFrontMatterMissing && fm[0].Code != diag.CodeFrontMatterInCodeFence {
				t.Errorf("%s: want no front matter, got %v", doc.rel, fm)
			}
		case convergent && bad:
			if len(fm) != 1 || fm[0].Code != diag.CodeFrontMatterSyntax {
				t.Errorf("%s: want a YAML syntax error, got %v", doc.rel, fm)
				continue
			}
			open := d.Lines.Position(d.Open).Line
			line, col := fm[0].Range.Start.Line-open, fm[0].Range.Start.Character+1
			if line != want[0] || col != want[1] {
				t.Errorf("%s: YAML error at front matter %d:%d, want %d:%d (%s)", doc.rel, line, col, want[0], want[1], fm[0].Message)
			}
		default:
			if len(fm) != 0 || d.Front == nil {
				t.Errorf("%s: want front matter, got %v", doc.rel, fm)
			}
		}
		if slices.Contains(crlf, doc.rel) {
			if !bytes.Contains(doc.src, []byte("---\r\n")) || d.Front == nil ||
				d.Name() != strings.TrimSuffix(filepath.Base(doc.rel), ".md") {
				t.Errorf("%s: CRLF file not parsed: %v", doc.rel, d.Diagnostics)
			}
		}
		// The bundled collections ship with the application: they are
		// clean, but for the test profile's inline agents, a mapping that
		// PRODUCT.md's ruling and the reference model reject (agents is
		// "all", "none" or a list of names).
		if doc.rel == "bundled/foundation/profiles/test.md" {
			if len(d.Diagnostics) != 1 || d.Diagnostics[0].Code != diag.CodeWrongType || !strings.Contains(d.Diagnostics[0].Message, "`agents`") {
				t.Errorf("%s: want only agents rejected as a mapping, got %v", doc.rel, d.Diagnostics)
			}
		} else if strings.HasPrefix(doc.rel, "bundled/") && len(d.Diagnostics) > 0 {
			t.Errorf("%s: %v", doc.rel, d.Diagnostics)
		}
	}
	if n != 90 {
		t.Errorf("%d profiles and agents, EXPECTED.md counts 90 (75 in collections, 15 bundled)", n)
	}
}

func TestCorpusBundles(t *testing.T) {
	dir := documentCorpus(t)
	seen := 0
	for _, doc := range corpusDocuments(t, dir) {
		d := schema.ParseDocument(doc.rel, doc.src, doc.kind, schema.Options{})
		switch {
		case strings.HasPrefix(doc.rel, "bundle/amplifier-agent/"):
			seen++
			if len(d.Diagnostics) != 0 {
				t.Errorf("%s: %v", doc.rel, d.Diagnostics)
			}
		case doc.rel == "bundle/foundation-anchors/bundle.md":
			seen++
			want := diag.Diagnostic{
				Code:     diag.CodeBundleLoadFailed,
				Severity: diag.SeverityError,
				Path:     doc.rel,
				Range:    diag.Range{End: diag.Position{Character: 3}},
				Message:  "bundle.md needs a top-level default_provider string: add `default_provider: <provider>`, such as `default_provider: anthropic`, to its front matter",
			}
			if len(d.Diagnostics) != 1 || d.Diagnostics[0] != want {
				t.Errorf("%s: got %v, want %s", doc.rel, d.Diagnostics, want)
			}
		}
	}
	if seen != 8 {
		t.Errorf("saw %d bundle documents, want 8 (2 manifests, 6 agents)", seen)
	}
}

// BenchmarkParseCorpus parses every profile, agent and bundle manifest of
// the corpus once per iteration.
func BenchmarkParseCorpus(b *testing.B) {
	docs := corpusDocuments(b, documentCorpus(b))
	size := 0
	for _, doc := range docs {
		size += len(doc.src)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, doc := range docs {
			schema.ParseDocument(doc.rel, doc.src, doc.kind, schema.Options{})
		}
	}
	b.ReportMetric(float64(len(docs)), "docs/op")
}
