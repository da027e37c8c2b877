package bundle_test

import (
	"testing"
	"unicode/utf8"

	"github.com/amplidex/amplidex/discovery/bundle"
)

// FuzzParse parses any bytes as each kind of file, as Markdown and as
// YAML: no panic, positions inside the text, mentions inside the body.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nbundle:\n  name: x\nincludes:\n  - bundle: a:b\n---\nBody @a:b.md.\n",
		"bundle: {name: x}\ntools:\n  - module: t\n    source: ./m\n",
		"\ufeff---\r\nmeta:\r\n  name: a\r\n---\r\n```\n@x:y\n```\n`@z:w` @q:r:\n",
		"mode:\n  name: m\n  tools: {safe: [a]}\n",
		"name: r\nversion: 1.0.0\ndescription: d\nsteps:\n  - id: a\n    depends_on: [b]\n",
		"a: &x [*x]\n", "<<: {a: 1}\nb: 2\n", "? [a]\n: 1\n", "- a\n", "---\n---\n", "x: !foo 1\n",
	} {
		f.Add([]byte(s), uint8(0), true)
		f.Add([]byte(s), uint8(1), false)
	}
	f.Fuzz(func(t *testing.T, src []byte, kind uint8, markdown bool) {
		name := "/r/x.yaml"
		if markdown {
			name = "/r/x.md"
		}
		k := bundle.Kind(kind % 7)
		file := bundle.Parse(name, src, bundle.Options{Kind: k})
		lines := file.Lines().Lines()
		for _, d := range file.Diagnostics {
			if d.Range.Start.Line < 0 || d.Range.Start.Line >= lines || d.Range.End.Line < d.Range.Start.Line {
				t.Fatalf("diagnostic out of the text: %+v", d)
			}
		}
		if file.Body.Start < 0 || file.Body.End > len(src) || file.Body.Start > file.Body.End {
			t.Fatalf("body %+v out of %d bytes", file.Body, len(src))
		}
		for _, m := range file.Mentions() {
			if m.Text == "" || m.Text[0] != '@' || !utf8.ValidString(m.Text) && utf8.Valid(src) {
				t.Fatalf("mention %q", m.Text)
			}
		}
		if len(file.Diagnostics) > bundle.MaxDiagnostics+1 {
			t.Fatalf("%d diagnostics", len(file.Diagnostics))
		}
	})
}
