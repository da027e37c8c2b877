package discovery_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/lock"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Sizes of the one-line inputs of BenchmarkPositionsOneLine: the time per
// byte must stay flat from the first to the last.
var oneLineSizes = []struct {
	name string
	n    int
}{{"128KiB", 128 << 10}, {"1MiB", 1 << 20}, {"8MiB", 8 << 20}}

// oneLineMentions returns a context file of about n bytes on one line:
// @mentions between words of one, two, three and four UTF-8 bytes (the
// last needing a UTF-16 surrogate pair).
func oneLineMentions(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "See @coll-%d:context/é%d.md and 中文 😀 ", i%7, i)
	}
	return b.Bytes()
}

// oneLineLock returns a minified lock file of about n bytes whose entries
// all earn diagnostics from lock.Check: a path that does not exist, and a
// module path that leaves the collection.
func oneLineLock(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":"1.1","collections":{`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		name := "c" + strconv.Itoa(i)
		fmt.Fprintf(&b, `%q:{"name":%q,"source":"git+https://example.invalid/é😀/%s","commit":null,"path":"/nonexistent/中文/%s","installed_at":"2024-01-01T00:00:00","modules":{"m":{"type":"tool","path":"../x"}}}`,
			name, name, name, name)
	}
	b.WriteString("}}")
	return b.Bytes()
}

// oneLineFrontMatter returns a profile whose front matter is one flow
// mapping of about n bytes, every key but the first two unknown (so each
// earns a diagnostic and a range), with values of multi-byte characters.
func oneLineFrontMatter(n int) []byte {
	var b bytes.Buffer
	b.WriteString("---\n{profile: {name: p, version: 1.0.0, description: d}, session: {orchestrator: {module: o}, context: {module: c}}")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, ", k%d: \"é😀中文 a value of some length, %d\"", i, i)
	}
	b.WriteString("}\n---\n")
	return b.Bytes()
}

// oneLineBody returns an agent with a short front matter and a body of
// about n bytes of @mentions on one line.
func oneLineBody(n int) []byte {
	head := "---\nmeta:\n  name: p\n  description: d\n---\n"
	return append([]byte(head), oneLineMentions(n-len(head))...)
}

// measureCPU runs body b.N times and reports the process CPU time per op
// besides the wall time, which is what counts on a busy machine.
func measureCPU(b *testing.B, body func()) {
	b.ResetTimer()
	start := processCPU()
	for i := 0; i < b.N; i++ {
		body()
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkPositionsOneLine measures the work that turns byte offsets into
// UTF-16 positions on inputs that are one long line: positions asked for
// in random order, a context file of mentions, a minified lock file (parsed and checked, every entry earning
// diagnostics), a profile's one-line front matter (up to MaxFrontMatter)
// and an agent's one-line body. Before positions were computed from one
// pass over the file, each of these took time quadratic in the size.
func BenchmarkPositionsOneLine(b *testing.B) {
	for _, sz := range oneLineSizes {
		src := oneLineMentions(sz.n)
		b.Run("context/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			measureCPU(b, func() {
				f := discovery.AnalyzeFile("/c/context/x.md", src, discovery.KindContext, schema.Options{})
				if len(f.Mentions) == 0 {
					b.Fatal("no mentions")
				}
			})
		})
	}
	// Positions out of order: one for every 64 bytes of a one-line text,
	// converted there and back.
	for _, sz := range oneLineSizes {
		src := oneLineMentions(sz.n)
		offs := rand.New(rand.NewPCG(1, 2)).Perm(len(src) / 64)
		for i, o := range offs {
			o *= 64
			for !utf8.RuneStart(src[o]) {
				o--
			}
			offs[i] = o
		}
		b.Run("random/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			measureCPU(b, func() {
				x := syntax.NewLineIndex(src)
				for _, o := range offs {
					if x.PositionOffset(x.Position(o)) != o {
						b.Fatalf("position of %d does not come back", o)
					}
				}
			})
		})
	}
	for _, sz := range oneLineSizes {
		src := oneLineLock(sz.n)
		b.Run("lock/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			measureCPU(b, func() {
				l, _, err := lock.Parse("/p/.amplifier/collections.lock", src)
				if err != nil {
					b.Fatal(err)
				}
				if ds := lock.Check("/p/.amplifier/collections.lock", l, nil); len(ds) == 0 {
					b.Fatal("no diagnostics")
				}
			})
		})
	}
	for _, sz := range []struct {
		name string
		n    int
	}{{"32KiB", 32 << 10}, {"128KiB", 128 << 10}, {"240KiB", 240 << 10}} {
		src := oneLineFrontMatter(sz.n)
		b.Run("frontmatter/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			measureCPU(b, func() {
				f := discovery.AnalyzeFile("/c/profiles/p.md", src, discovery.KindProfile, schema.Options{})
				if len(f.Diagnostics) < 100 {
					b.Fatalf("%d diagnostics: %v", len(f.Diagnostics), f.Diagnostics)
				}
			})
		})
	}
	for _, sz := range oneLineSizes {
		src := oneLineBody(sz.n)
		b.Run("body/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			measureCPU(b, func() {
				f := discovery.AnalyzeFile("/c/agents/p.md", src, discovery.KindAgent, schema.Options{})
				if len(f.Mentions) == 0 {
					b.Fatal("no mentions")
				}
			})
		})
	}
}
