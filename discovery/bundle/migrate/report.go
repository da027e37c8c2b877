package migrate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
)

// manifestOpen and manifestClose delimit, at the end of MIGRATION.md, the
// record of what a migration wrote: the collection, and each file's path
// and SHA-256.
const (
	manifestOpen  = "<!-- amplidex migrate"
	manifestClose = "-->"
)

// report returns MIGRATION.md: what became of the collection, the notes,
// and the record of the files written.
func (m *migration) report() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Migration of the collection %s\n\n", m.c.Name)
	fmt.Fprintf(&b, "`amplidex migrate` wrote this bundle repository from the collection %s", m.c.Name)
	if m.c.Version != "" {
		fmt.Fprintf(&b, " %s", m.c.Version)
	}
	b.WriteString(". Check it with `amplidex check`, then delete this file when you have read the notes.\n\n")
	b.WriteString("| collection | bundle repository |\n|---|---|\n")
	fmt.Fprintf(&b, "| `pyproject.toml` `[project]` | `bundle.md` `bundle:` (namespace `%s`) |\n", m.ns)
	for _, p := range m.profiles {
		to := fmt.Sprintf("`behaviors/%s.yaml`", p.stem)
		if m.soleRoot(p) {
			to += ", included and its instruction in `bundle.md`"
		} else {
			to += fmt.Sprintf(", run as `bundles/%s.md`", p.stem)
			for _, q := range m.root {
				if q == p {
					to += ", included by `bundle.md`"
				}
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", m.rel(p.rel), to)
	}
	if len(m.agents) > 0 {
		fmt.Fprintf(&b, "| `%s` (%d) | `agents/`, name and description under `meta:` |\n", m.rel("agents/"), len(m.agents))
	}
	for _, d := range []string{"context", "scenario-tools", "modules"} {
		if n := m.carriedUnder(d); n > 0 {
			fmt.Fprintf(&b, "| `%s` (%s) | `%s/` |\n", m.rel(d+"/"), count(n, "file"), d)
		}
	}
	b.WriteString("\n## Notes\n\n")
	if len(m.notes) == 0 {
		b.WriteString("Everything was carried over as it was.\n")
	}
	for _, n := range m.notes {
		if n.Path == "" {
			fmt.Fprintf(&b, "- %s\n", n.Message)
			continue
		}
		where := "`" + n.Path + "`"
		if n.Line > 0 {
			where = fmt.Sprintf("`%s:%d`", n.Path, n.Line)
		}
		fmt.Fprintf(&b, "- %s: %s\n", where, n.Message)
	}
	b.WriteString("\n" + manifestOpen + " " + m.c.Name + "\n")
	paths := make([]string, 0, len(m.files))
	for p := range m.files {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return diag.ComparePaths(paths[i], paths[j]) < 0 })
	for _, p := range paths {
		fmt.Fprintf(&b, "%s %s\n", sum(m.files[p].Data), p)
	}
	b.WriteString(manifestClose + "\n")
	return b.Bytes()
}

// sum is the hex SHA-256 of data.
func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// manifest is what an earlier migration wrote into a directory.
type manifest struct {
	collection string
	files      map[string]string // path → SHA-256
}

// parseManifest reads the record at the end of a MIGRATION.md; ok is false
// when it holds none. A path may hold spaces; it may not be empty, be
// absolute, or leave the directory.
func parseManifest(src []byte) (manifest, bool) {
	i := bytes.LastIndex(src, []byte("\n"+manifestOpen+" "))
	if i < 0 {
		return manifest{}, false
	}
	sc := bufio.NewScanner(bytes.NewReader(src[i+1:]))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		return manifest{}, false
	}
	mf := manifest{collection: strings.TrimSpace(strings.TrimPrefix(sc.Text(), manifestOpen)), files: map[string]string{}}
	if mf.collection == "" {
		return manifest{}, false
	}
	for sc.Scan() {
		line := sc.Text()
		if line == manifestClose {
			return mf, true
		}
		h, p, ok := strings.Cut(line, " ")
		if !ok || len(h) != 64 || !isHex(h) || !safePath(p) {
			return manifest{}, false
		}
		mf.files[p] = h
	}
	return manifest{}, false
}

// isHex reports whether s is lowercase hexadecimal.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// safePath reports whether p, slash-separated, names a file inside a
// directory: not empty, not absolute, without . or .. components, not
// MIGRATION.md itself.
func safePath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) || p == "MIGRATION.md" {
		return false
	}
	for part := range strings.SplitSeq(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}
