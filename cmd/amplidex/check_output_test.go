package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query/lint"
)

func TestSARIF(t *testing.T) {
	wd := t.TempDir()
	file := filepath.Join(wd, "coll", "profiles", "p.md")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("---\nprofile:\n  extnds: x\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := []diag.Diagnostic{
		{Code: diag.CodeUnknownKey, Severity: diag.SeverityError, Path: file,
			Range:   diag.Range{Start: diag.Position{Line: 2, Character: 2}, End: diag.Position{Line: 2, Character: 8}},
			Message: "unknown key `extnds`"},
		{Code: diag.CodeNameMismatch, Severity: diag.SeverityWarning, Path: file, Message: "name"},
		{Code: diag.CodeShadowed, Severity: diag.SeverityInfo, Path: "/elsewhere/pyproject.toml", Message: "shadowed"},
		{Code: diag.CodeMissingPyproject, Severity: diag.SeverityError, Path: filepath.Join(wd, "coll"), Message: "Missing pyproject.toml"},
	}
	var out bytes.Buffer
	if err := lint.WriteSARIF(&out, ds, wd, "1.2.3"); err != nil {
		t.Fatal(err)
	}
	log := validateSARIF(t, out.Bytes())
	results := log["runs"].([]any)[0].(map[string]any)["results"].([]any)
	if len(results) != len(ds) {
		t.Fatalf("%d results, want %d", len(results), len(ds))
	}
	first := results[0].(map[string]any)
	loc := first["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
	art := loc["artifactLocation"].(map[string]any)
	if art["uri"] != "coll/profiles/p.md" || art["uriBaseId"] != "%SRCROOT%" {
		t.Errorf("artifactLocation = %v, want coll/profiles/p.md under %%SRCROOT%%", art)
	}
	region := loc["region"].(map[string]any)
	for k, want := range map[string]float64{"startLine": 3, "startColumn": 3, "endLine": 3, "endColumn": 9} {
		if region[k] != want {
			t.Errorf("region %s = %v, want %v", k, region[k], want)
		}
	}
	if first["level"] != "error" || results[1].(map[string]any)["level"] != "warning" || results[2].(map[string]any)["level"] != "note" {
		t.Errorf("levels: %v %v %v", first["level"], results[1].(map[string]any)["level"], results[2].(map[string]any)["level"])
	}
	other := results[2].(map[string]any)["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["artifactLocation"].(map[string]any)
	if other["uri"] != "file:///elsewhere/pyproject.toml" {
		t.Errorf("a path outside the working directory: uri %v", other["uri"])
	}
}

// TestSARIF checks the structure of `check --format sarif` against what
// SARIF 2.1.0 requires and GitHub code scanning reads: a version, runs
// with a named driver, rules with ids, descriptions, help and a default
// level, and results that name a rule, say something, and point at a
// file region with 1-based lines and columns.
// TestCheckSARIF runs check --format sarif end to end.
func TestCheckSARIF(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("coll/pyproject.toml", "[project]\nname = \"coll\"\nversion = \"1.0\"\ndescription = \"C\"\n")
	write("coll/agents/a.md", "---\nname: a\ndescription: A\ncolour: red\n---\n")
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "AMPLIDEX_HOME": filepath.Join(dir, "amplidex"), "NO_COLOR": "1"}
	var stdout, stderr bytes.Buffer
	a := NewApp(strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	code := a.Run(context.Background(), []string{"check", "--format", "sarif", filepath.Join(dir, "coll")})
	if code != exitFailed {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	log := validateSARIF(t, stdout.Bytes())
	results := log["runs"].([]any)[0].(map[string]any)["results"].([]any)
	var ids []string
	for _, r := range results {
		ids = append(ids, r.(map[string]any)["ruleId"].(string))
	}
	if strings.Join(ids, " ") != "schema/unknown-key metadata/invalid-version" {
		t.Errorf("rule ids %q", ids)
	}
}

// validateSARIF decodes a SARIF log and checks the properties SARIF 2.1.0
// requires, and those GitHub code scanning needs, of it.
func validateSARIF(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var log map[string]any
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	if log["version"] != "2.1.0" {
		t.Errorf("version %v, want 2.1.0", log["version"])
	}
	if s, _ := log["$schema"].(string); !strings.Contains(s, "sarif-2.1.0") {
		t.Errorf("$schema %q", s)
	}
	runs, _ := log["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("runs: %v", log["runs"])
	}
	run := runs[0].(map[string]any)
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	if driver["name"] != "amplidex" {
		t.Errorf("driver name %v", driver["name"])
	}
	levels := map[string]bool{"none": true, "note": true, "warning": true, "error": true}
	rules, _ := driver["rules"].([]any)
	if len(rules) != len(diag.Codes) {
		t.Errorf("%d rules, want one per code (%d)", len(rules), len(diag.Codes))
	}
	ruleIDs := map[string]int{}
	for i, r := range rules {
		rule := r.(map[string]any)
		id, _ := rule["id"].(string)
		if id == "" {
			t.Errorf("rule %d has no id", i)
		}
		if _, dup := ruleIDs[id]; dup {
			t.Errorf("rule id %s twice", id)
		}
		ruleIDs[id] = i
		for _, k := range []string{"shortDescription", "fullDescription", "help"} {
			if m, _ := rule[k].(map[string]any); m == nil || m["text"] == "" || m["text"] == nil {
				t.Errorf("rule %s: no %s.text", id, k)
			}
		}
		if cfg, _ := rule["defaultConfiguration"].(map[string]any); cfg == nil || !levels[cfg["level"].(string)] {
			t.Errorf("rule %s: defaultConfiguration %v", id, rule["defaultConfiguration"])
		}
	}
	bases, _ := run["originalUriBaseIds"].(map[string]any)
	results, ok := run["results"].([]any)
	if !ok {
		t.Fatalf("results: %v", run["results"])
	}
	for i, r := range results {
		res := r.(map[string]any)
		id, _ := res["ruleId"].(string)
		idx, known := ruleIDs[id]
		if !known {
			t.Errorf("result %d: ruleId %q names no rule", i, id)
		}
		if ri, ok := res["ruleIndex"].(float64); !ok || int(ri) != idx {
			t.Errorf("result %d: ruleIndex %v, rule %s is %d", i, res["ruleIndex"], id, idx)
		}
		if msg, _ := res["message"].(map[string]any); msg == nil || msg["text"] == "" {
			t.Errorf("result %d: no message.text", i)
		}
		if lv, _ := res["level"].(string); !levels[lv] {
			t.Errorf("result %d: level %v", i, res["level"])
		}
		locs, _ := res["locations"].([]any)
		if len(locs) == 0 {
			t.Errorf("result %d: no locations", i)
			continue
		}
		phys := locs[0].(map[string]any)["physicalLocation"].(map[string]any)
		art := phys["artifactLocation"].(map[string]any)
		if u, _ := art["uri"].(string); u == "" {
			t.Errorf("result %d: no artifactLocation.uri", i)
		}
		if base, ok := art["uriBaseId"].(string); ok && bases[base] == nil {
			t.Errorf("result %d: uriBaseId %s not in originalUriBaseIds", i, base)
		}
		if reg, ok := phys["region"].(map[string]any); ok {
			sl, _ := reg["startLine"].(float64)
			sc, _ := reg["startColumn"].(float64)
			el, _ := reg["endLine"].(float64)
			ec, _ := reg["endColumn"].(float64)
			if sl < 1 || sc < 1 || el < sl || ec < 1 || (el == sl && ec < sc) {
				t.Errorf("result %d: region %v is not 1-based and ordered", i, reg)
			}
		}
	}
	return log
}
