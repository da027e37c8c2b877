package lsp_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/query/analysis"
	"github.com/amplidex/amplidex/query/lsp"
)

// BenchmarkDidChangeToPublish measures, through the pipes an editor uses,
// the time from writing a didChange to reading the publishDiagnostics of
// that version, with the real Workspace over a fixture tree or the corpus,
// in process or through a socket to a server that answers as the daemon
// does (without the daemon's wait for the watcher). Each edit
// waits for its result before the next is sent; the p50 and p99 of the
// latencies are reported. Run with -benchtime=200x for 200 edits.
func BenchmarkDidChangeToPublish(b *testing.B) {
	for _, bc := range []struct {
		name     string
		debounce time.Duration
	}{
		{"debounce=50ms", 50 * time.Millisecond},
		{"debounce=1µs", time.Microsecond},
	} {
		b.Run("fixture/"+bc.name, func(b *testing.B) {
			dir := unpack(b, "workspace.txtar")
			benchEdits(b, newWorkspace(dir), filepath.Join(dir, devProfile), "foundation:base", bc.debounce)
		})
		b.Run("fixture-daemon/"+bc.name, func(b *testing.B) {
			dir := unpack(b, "workspace.txtar")
			home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
			f := startFakeDaemon(b, home, nil)
			local := analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Home: home}), analysis.WorkspaceOptions{Project: project})
			benchEdits(b, lsp.NewDaemonAnalyzer(f.client, local, nil), filepath.Join(dir, devProfile), "foundation:base", bc.debounce)
		})
		for _, daemon := range []bool{false, true} {
			name := "corpus/"
			if daemon {
				name = "corpus-daemon/"
			}
			b.Run(name+bc.name, func(b *testing.B) {
				corpus := os.Getenv("AMPLIDEX_CORPUS")
				if corpus == "" {
					b.Skip("AMPLIDEX_CORPUS is not set")
				}
				bundled := []string{filepath.Join(corpus, "collections"), filepath.Join(corpus, "bundled")}
				var a lsp.Analyzer = analysis.NewWorkspace(analysis.NewLocal(analysis.LocalOptions{Bundled: bundled}), analysis.WorkspaceOptions{})
				if daemon {
					f := startFakeDaemon(b, "", bundled)
					a = lsp.NewDaemonAnalyzer(f.client, a.(*analysis.Workspace), nil)
				}
				path := filepath.Join(corpus, "collections/robotdad__amplifier-collection-ddd/profiles/documentation.md")
				benchEdits(b, a, path, "foundation:profiles/base.md", bc.debounce)
			})
		}
	}
}

// benchEdits opens path and alternates between its text and the text
// with ref replaced by one that does not resolve, one edit per iteration.
func benchEdits(b *testing.B, a lsp.Analyzer, path, ref string, debounce time.Duration) {
	uri := lsp.PathToURI(path)
	text := readTB(b, path)
	if !strings.Contains(text, ref) {
		b.Fatalf("%s does not contain %q", path, ref)
	}
	broken := strings.Replace(text, ref, "foundation:missing", 1)
	c := startServer(b, a, lsp.Options{Debounce: debounce})
	c.initialize()
	c.open(uri, text)
	c.diagnostics(uri)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		version := i + 2
		next := text
		if i%2 == 0 {
			next = broken
		}
		start := time.Now()
		c.changeAll(uri, version, next)
		for {
			p := c.diagnostics(uri)
			if p.Version != nil && int(*p.Version) == version {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

func readTB(tb testing.TB, p string) string {
	tb.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// BenchmarkLongLinePositions converts the ranges of many diagnostics on a
// buffer of one 1 MiB line (with multi-byte characters) into UTF-8
// columns, as the server does before it publishes them to a client that
// negotiated UTF-8. The work must grow with the buffer plus the number of
// diagnostics, not with their product.
func BenchmarkLongLinePositions(b *testing.B) {
	unit := []byte("key: välue 😀 漢字, ")
	text := bytes.Repeat(unit, (1<<20)/len(unit))
	lines := syntax.NewLineIndex(text)
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("diagnostics=%d", n), func(b *testing.B) {
			rs := make([]diag.Range, n)
			for i := range rs {
				off := (i*7919*len(unit) + 5) % (len(text) - 16)
				rs[i] = lines.Range(off, off+10)
			}
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				lsp.ConvertRanges(text, rs, true)
			}
		})
	}
}

// manyEdits returns a buffer of about size bytes (lines of ASCII and
// multi-byte characters) and n small edits spread over it, in the
// order a client sends them: each range is of the text the edits before
// it made. Some edits join or split lines.
func manyEdits(size, n int) ([]byte, []lsp.Change) {
	unit := "  - name: välue 😀 漢字 and some more words to fill the line\n"
	text := []byte(strings.Repeat(unit, size/len(unit)))
	lines := size / len(unit)
	r := rand.New(rand.NewPCG(1, 2))
	changes := make([]lsp.Change, n)
	for i := range changes {
		l, c := r.IntN(lines), r.IntN(60)
		rg := diag.Range{Start: diag.Position{Line: l, Character: c}, End: diag.Position{Line: l, Character: c + 2}}
		insert := "xé"
		switch i % 100 {
		case 17:
			insert = "\n"
		case 67:
			rg.End = diag.Position{Line: l + 1, Character: 0}
			insert = ""
		}
		changes[i] = lsp.Change{Range: &rg, Text: insert}
	}
	return text, changes
}

// BenchmarkDidChange20000Edits applies one didChange of 20,000 small
// edits to a 500 KiB buffer: alone (in UTF-16 and in UTF-8 positions),
// and through a session, from writing the notification to the answer to a
// request written after it.
func BenchmarkDidChange20000Edits(b *testing.B) {
	text, changes := manyEdits(500<<10, 20000)
	for _, enc := range []string{"utf-16", "utf-8"} {
		b.Run("apply/"+enc, func(b *testing.B) {
			for b.Loop() {
				if _, err := lsp.ApplyChanges(text, changes, enc == "utf-8"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("session", func(b *testing.B) {
		c := startServer(b, &fake{}, lsp.Options{Debounce: time.Hour})
		c.initialize()
		uri := lsp.PathToURI(filepath.Join(b.TempDir(), "context", "big.md"))
		c.open(uri, string(text))
		hover := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 0}}
		version := 1
		for b.Loop() {
			version++
			c.notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": version},
				"contentChanges": changes,
			})
			if r := c.call("textDocument/hover", hover); r.Error != nil {
				b.Fatal(r.Error.Message)
			}
		}
	})
}
