package compose_test

import (
	"bytes"
	"path"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/compose"
)

// FuzzParseURI reads any source as a URI: no panic, and a git URI has a
// cache directory named after its repository.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"git+https://github.com/o/r@main#subdirectory=a", "file:///x#subdirectory=y", "./a", "ns:path", "https://h/p?q#f", "git+", "zip+https://x/y.zip", "a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u := compose.ParseURI(s)
		if u.IsGit() && u.CacheDir() == "" {
			t.Fatalf("%q: no cache directory", s)
		}
	})
}

// FuzzCompose composes the first file of any set of files under /w
// (names and contents separated by NUL bytes): no panic, no hang, and
// every diagnostic names a file.
func FuzzCompose(f *testing.F) {
	for _, s := range []string{
		"repo/bundle.md\x00---\nbundle: {name: a}\nincludes:\n  - bundle: a:b\n  - bundle: ./c.yaml\n---\n\x00repo/b.yaml\x00bundle: {name: b}\nincludes: [a:b, ../repo/bundle.md]\n\x00repo/c.yaml\x00includes: [git+https://github.com/o/r@main]\n",
		"repo/bundle.yaml\x00bundle: {name: x}\nincludes: {a: 1}\nsession: 1\n\x00home/settings.yaml\x00bundle: {added: {x: /w/repo}}\nsources: {bundles: {x: file:///w}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parts := bytes.Split(data, []byte{0})
		if len(parts) < 2 || len(parts) > 100 {
			return
		}
		files := map[string][]byte{}
		for i := 0; i+1 < len(parts); i += 2 {
			name := path.Clean("/w/" + string(parts[i]))
			if !strings.HasPrefix(name, "/w/") {
				return
			}
			files[name] = parts[i+1]
		}
		fs := compose.NewOverlay(nil, files)
		target := path.Clean("/w/" + string(parts[0]))
		loc := compose.Locate(compose.Env{WorkDir: "/w/repo", AmplifierHome: "/w/home", Home: "/w"}, fs)
		c := compose.Compose(loc, fs, target)
		for _, d := range c.Diagnostics {
			if d.Path == "" {
				t.Fatalf("a diagnostic without a path: %+v", d)
			}
		}
	})
}
