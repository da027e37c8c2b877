package compose_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/bundle/check"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// referenceCommit is the commit of amplifier-foundation PRODUCT.md names.
const referenceCommit = "d0d96f7"

// referenceSource returns a directory holding the reference's source
// (amplifier_foundation/ in it), from $AMPLIDEX_FOUNDATION_SRC: such a
// directory, or a git directory of the reference, extracted at
// referenceCommit. It skips when there is none, or no python3 with PyYAML.
func referenceSource(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the differential test against amplifier-foundation is skipped")
	}
	if out, err := exec.Command("python3", "-c", "import yaml").CombinedOutput(); err != nil {
		t.Skipf("python3 has no PyYAML (%v: %s): the differential test is skipped", err, bytes.TrimSpace(out))
	}
	src := os.Getenv("AMPLIDEX_FOUNDATION_SRC")
	if src == "" {
		t.Skip("AMPLIDEX_FOUNDATION_SRC is not set (a directory of amplifier-foundation's source, or its git directory): the differential test is skipped")
	}
	if _, err := os.Stat(filepath.Join(src, "amplifier_foundation", "registry.py")); err == nil {
		return src
	}
	dir := t.TempDir()
	cmd := exec.Command("git", "--git-dir", src, "archive", "--format=tar", referenceCommit)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("AMPLIDEX_FOUNDATION_SRC=%s is neither the reference's source nor a git directory holding %s: %v", src, referenceCommit, err)
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(h.Name, "amplifier_foundation/") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// referenceResult is what reference_load.py prints for one file.
type referenceResult struct {
	Path         string                     `json:"path"`
	OK           bool                       `json:"ok"`
	Error        string                     `json:"error"`
	Name         string                     `json:"name"`
	MountPlan    map[string]json.RawMessage `json:"mount_plan"`
	CPUSeconds   float64                    `json:"cpu_seconds"`
	Logs         []struct{ Level, Message string }
	FetchRefused []string `json:"fetch_refused"`
}

// runReference loads files with the reference, offline.
func runReference(t testing.TB, src, home string, files []string, repeat int) (results []referenceResult, importCPU float64) {
	t.Helper()
	type item struct {
		Path string `json:"path"`
		Cwd  string `json:"cwd"`
	}
	req := struct {
		WellKnown map[string]string `json:"well_known"`
		Files     []item            `json:"files"`
		Repeat    int               `json:"repeat"`
	}{WellKnown: map[string]string{}, Repeat: repeat}
	for _, w := range compose.WellKnownBundles() {
		req.WellKnown[w.Name] = w.URI
	}
	for _, f := range files {
		req.Files = append(req.Files, item{f, filepath.Dir(f)})
	}
	in, _ := json.Marshal(req)
	script, _ := filepath.Abs(filepath.Join("..", "testdata", "reference_load.py"))
	cmd := exec.Command("python3", script, "--src", src, "--home", home)
	cmd.Stdin = bytes.NewReader(in)
	// HOME=/: the reference walks up from a file to its repository's
	// root while the path sorts after the home directory (ruling 10 of
	// docs/bundles.md walks up to the home directory, or to the root for a
	// file outside it); with the root as home both walk the same way
	// wherever the corpus is.
	cmd.Env = append(os.Environ(), "HOME=/", "AMPLIFIER_HOME="+home, "PYTHONHASHSEED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference_load.py: %v\n%s", err, stderr.String())
	}
	var doc struct {
		ImportCPU float64           `json:"import_cpu_seconds"`
		Results   []referenceResult `json:"results"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("reference_load.py printed no JSON: %v\n%s", err, stderr.String())
	}
	return doc.Results, doc.ImportCPU
}

// rulings are the corpus files whose mount plan differs from the
// reference's because of a ruling of docs/bundles.md (by path in the
// corpus, and the ruling's name there).
var rulings = map[string]string{}

// TestDifferential composes every bundle file of the corpus with amplidex
// and with amplifier-foundation's own loader, includes from a runtime
// cache laid out from the corpus, and compares the mount plans: session,
// providers, tools and hooks field for field, and the agents' names.
func TestDifferential(t *testing.T) {
	corpus := corpusDir(t)
	src := referenceSource(t)
	home := t.TempDir()
	copies := layoutCache(t, corpus, home)
	files := bundleFiles(t, corpus)
	refs, _ := runReference(t, src, home, files, 1)

	norm := normalizer(corpus, copies)
	loaded, agree := 0, 0
	sections := []string{"session", "providers", "tools", "hooks"}
	sectionAgree := map[string]int{}
	agentsAgree := 0
	var undocumented []string
	for _, r := range refs {
		if !r.OK {
			t.Logf("the reference does not load %s: %s", rel(corpus, r.Path), firstLine(r.Error))
			continue
		}
		loaded++
		loc := compose.Locate(corpusEnv(home, r.Path), &compose.DiskFiles{})
		c := compose.Compose(loc, &compose.DiskFiles{}, r.Path)
		ours, _ := json.Marshal(c.MountPlan)
		var mine map[string]json.RawMessage
		json.Unmarshal(ours, &mine)
		var diffs []string
		for _, s := range sections {
			a, b := norm(mine[s]), norm(r.MountPlan[s])
			if reflect.DeepEqual(a, b) {
				sectionAgree[s]++
				continue
			}
			diffs = append(diffs, s+firstDiff(a, b))
		}
		an, bn := agentNames(mine["agents"]), agentNames(r.MountPlan["agents"])
		if reflect.DeepEqual(an, bn) {
			agentsAgree++
		} else {
			diffs = append(diffs, fmt.Sprintf("agents:\n    amplidex:  %v\n    reference: %v", an, bn))
		}
		name := rel(corpus, r.Path)
		if len(diffs) == 0 {
			agree++
			if rulings[name] != "" {
				t.Logf("%s agrees, yet is listed under the ruling %q", name, rulings[name])
			}
			continue
		}
		if rulings[name] != "" {
			t.Logf("%s differs (ruling %q):\n  %s", name, rulings[name], strings.Join(diffs, "\n  "))
			continue
		}
		undocumented = append(undocumented, name+":\n  "+strings.Join(diffs, "\n  "))
	}
	t.Logf("bundle files: %d; loaded by the reference: %d; mount plans that agree: %d (%.1f%%)", len(files), loaded, agree, 100*float64(agree)/float64(max(loaded, 1)))
	for _, s := range sections {
		t.Logf("  %s: %d of %d agree", s, sectionAgree[s], loaded)
	}
	t.Logf("  agent names: %d of %d agree", agentsAgree, loaded)
	for _, u := range undocumented {
		t.Errorf("differs from the reference, and no ruling says why: %s", u)
	}
	if loaded == 0 || float64(agree) < 0.95*float64(loaded) {
		t.Errorf("only %d of %d mount plans agree: the target is 95%%", agree, loaded)
	}

	// check in amplifier-foundation, its includes in the cache: no error
	// on a file the reference loads without a finding.
	root := filepath.Join(corpus, "microsoft__amplifier-foundation")
	files2 := &compose.DiskFiles{}
	res := check.Check(compose.Locate(corpusEnv(home, filepath.Join(root, "bundle.md")), files2), files2, root, check.Options{})
	if res.FilesChecked() < 20 {
		t.Errorf("check of amplifier-foundation checked %d files, want at least 20", res.FilesChecked())
	}
	clean := map[string]bool{}
	for _, r := range refs {
		if r.OK && len(r.Logs) == 0 && strings.HasPrefix(r.Path, root+"/") {
			clean[r.Path] = true
		}
	}
	for _, d := range res.Diagnostics {
		if d.Severity == diag.SeverityError && clean[d.Path] {
			t.Errorf("an error on a file the reference loads without a finding: %s", d)
		}
	}
	t.Logf("check of amplifier-foundation: %d files checked, %d diagnostics (%d errors); %d of its bundle files load in the reference without a finding",
		res.FilesChecked(), len(res.Diagnostics), diag.CountErrors(res.Diagnostics), len(clean))
}

// normalizer returns a function that decodes a JSON section and writes
// every path of a cache copy, and of the corpus, as owner__repo/…, so
// that a file read from the cache and its original compare equal.
func normalizer(corpus string, copies map[string]string) func(json.RawMessage) any {
	type pair struct{ from, to string }
	var ps []pair
	for c, src := range copies {
		ps = append(ps, pair{c, "repo:" + filepath.Base(src)})
	}
	ps = append(ps, pair{corpus, "repo:"})
	sort.Slice(ps, func(i, j int) bool { return len(ps[i].from) > len(ps[j].from) })
	var fix func(v any) any
	fix = func(v any) any {
		switch x := v.(type) {
		case string:
			for _, p := range ps {
				if strings.HasPrefix(x, p.from) {
					return strings.Replace(x, p.from, p.to, 1)
				}
			}
			return x
		case []any:
			for i := range x {
				x[i] = fix(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = fix(x[k])
			}
		}
		return v
	}
	return func(raw json.RawMessage) any {
		if raw == nil {
			return nil
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "invalid JSON: " + err.Error()
		}
		return fix(v)
	}
}

func agentNames(raw json.RawMessage) []string {
	if raw == nil {
		return nil
	}
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

func rel(corpus, p string) string {
	r, err := filepath.Rel(corpus, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// firstDiff describes where a and b first differ.
func firstDiff(a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range x {
				keys[k] = true
			}
			for k := range y {
				keys[k] = true
			}
			var ks []string
			for k := range keys {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				if !reflect.DeepEqual(x[k], y[k]) {
					return "." + k + firstDiff(x[k], y[k])
				}
			}
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := 0; i < len(x) && i < len(y); i++ {
				if !reflect.DeepEqual(x[i], y[i]) {
					return fmt.Sprintf("[%d]", i) + firstDiff(x[i], y[i])
				}
			}
			if len(x) != len(y) {
				return fmt.Sprintf(" (%d entries, the reference %d)\n    amplidex:  %s\n    reference: %s", len(x), len(y), short(x), short(y))
			}
		}
	}
	return fmt.Sprintf(":\n    amplidex:  %s\n    reference: %s", short(a), short(b))
}
