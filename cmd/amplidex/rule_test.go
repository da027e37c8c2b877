package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query/lint"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/diagnostics.md from diag.Codes")

// docsPath is docs/diagnostics.md, from this package's directory.
var docsPath = filepath.Join("..", "..", "docs", "diagnostics.md")

// TestDiagnosticsDoc keeps docs/diagnostics.md what amplidex makes of
// diag.Codes; -update-docs rewrites it.
func TestDiagnosticsDoc(t *testing.T) {
	want := append(lint.DiagnosticsDoc(), '\n')
	if *updateDocs {
		if err := os.MkdirAll(filepath.Dir(docsPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(docsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/amplidex -run TestDiagnosticsDoc -args -update-docs makes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what diag.Codes makes; go test ./cmd/amplidex -run TestDiagnosticsDoc -args -update-docs rewrites it", docsPath)
	}
	for _, c := range diag.Codes {
		if !bytes.Contains(got, []byte("### "+c.Code+"\n")) {
			t.Errorf("%s does not explain %s", docsPath, c.Code)
		}
	}
	if !bytes.Contains(got[:min(len(got), 400)], []byte("This page is for authors of Amplifier collections")) {
		t.Errorf("%s does not open with who it is for", docsPath)
	}
}

// TestRule: rule explains a code, an area or every code, in text and
// JSON, and answers a misspelt code with the nearest one and exit 2.
func TestRule(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := NewApp(strings.NewReader(""), &stdout, &stderr, lspEnv(t)).Run(context.Background(), append([]string{"rule"}, args...))
		return code, stdout.String(), stderr.String()
	}
	code, out, _ := run("bundle/load-failed")
	for _, want := range []string{"bundle/load-failed (error)\n", "What it means:\n    A bundle manifest cannot be loaded", "Example:\n    # bundle.md\n",
		"How to fix it:\n    Add a top-level default_provider", "on its line:   # amplidex: ignore[bundle/load-failed]",
		`everywhere:    [check] ignore = ["bundle/load-failed"], or --ignore bundle/load-failed`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("rule bundle/load-failed: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "reinstall") {
		t.Errorf("rule bundle/load-failed tells a bundle's author to reinstall:\n%s", out)
	}

	code, out, _ = run("--all", "--json")
	var docs []lint.Rule
	if err := json.Unmarshal([]byte(out), &docs); err != nil || code != 0 {
		t.Fatalf("rule --all --json: exit %d, %v", code, err)
	}
	if len(docs) != len(diag.Codes) {
		t.Errorf("rule --all --json lists %d codes, want %d", len(docs), len(diag.Codes))
	}
	for i, d := range docs {
		if d.Code != diag.Codes[i].Code || d.Summary == "" || d.Fix == "" || d.Example == "" || d.Suppress.Line == "" {
			t.Errorf("rule --all --json: %+v lacks something", d)
		}
	}

	code, out, _ = run("lock/", "--json")
	if err := json.Unmarshal([]byte(out), &docs); err != nil || code != 0 || len(docs) != 6 || docs[0].Area != "lock" {
		t.Errorf("rule lock/ --json: exit %d, %d codes (%v)", code, len(docs), err)
	}
	code, out, _ = run("schema/unknown-key", "--json")
	var one lint.Rule
	if err := json.Unmarshal([]byte(out), &one); err != nil || code != 0 || one.Code != "schema/unknown-key" {
		t.Errorf("rule schema/unknown-key --json: exit %d, %v: %s", code, err, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"schema/unknwn"}, `did you mean "schema/unknown-key"?`},
		{[]string{"ref/agent-unkown"}, `did you mean "ref/agent-unknown"?`},
		{nil, "rule needs CODE"},
		{[]string{"--all", "schema/"}, "does not go with"},
	} {
		if code, _, errOut := run(tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("rule %q: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, errOut, tc.want)
		}
	}
}
