package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEConfig keeps the configuration example of the README valid:
// every key it shows is known and every value well-formed.
func TestREADMEConfig(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "The configuration is TOML.")
	if !ok {
		t.Fatal("README.md has no configuration section")
	}
	_, rest, ok = strings.Cut(rest, "```toml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md shows no configuration example")
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatalf("the README's configuration example: %v", err)
	}
	if len(cfg.Check.PerPath) == 0 {
		t.Errorf("the example shows no [check.per-path]")
	}
}

// TestParseConfig: every problem of a configuration is said with the
// file, the line and column, the key and, for a value, the type wanted in
// the user's terms; a project's file sets [check] and [schema] only.
func TestParseConfig(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		prefix []string
		kind   Kind
		want   []string // substrings of the error; none: no error
	}{
		{"user file", "[roots]\nbundled = [\"/x\"]\n[check]\nseverity = \"warn\"\n", nil, User, nil},
		{"list for a string", "[prepare]\nmanifest = [\"a\"]\n", nil, User,
			[]string{"f.toml:2:1: prepare.manifest: want a string, not a list of strings"}},
		{"negative duration", "[watch]\ndebounce = \"-1s\"\n", nil, User,
			[]string{`f.toml:2:1: watch.debounce: "-1s" is negative`}},
		{"table for a list", "[check.select]\nx = 1\n", nil, User,
			[]string{"f.toml:1:1: check.select: want a list of strings, such as [\"a\", \"b\"], not a table"}},
		{"severity", "[check]\nseverity = \"warnings\"\n", nil, User,
			[]string{`f.toml:2:1: check.severity: "warnings" is not a severity: want error, warning or info; did you mean "warning"?`}},
		{"glob", "[check.per-path]\n\"[\" = [\"schema/\"]\n", nil, User, []string{`f.toml:2:1: check.per-path: bad glob "["`}},
		{"project may set check and schema", "[check]\nignore = [\"layout/\"]\n[schema]\nunknown_key = \"warning\"\n", nil, Project, nil},
		{"project sets prepare", "[prepare]\nmanifest = \"b.md\"\n[watch]\n", nil, Project, []string{
			"f.toml:2:1: prepare.manifest: a project's configuration sets only [check] and [schema]; [prepare] changes what runs",
			"f.toml:3:1: watch: a project's configuration sets only"}},
		{"pyproject without the table", "[project]\nname = \"x\"\n", []string{"tool", "amplidex"}, Project, nil},
		{"pyproject", "[project]\nname = \"x\"\n[tool.amplidex.check]\nignore = \"ref/\"\n", []string{"tool", "amplidex"}, Project,
			[]string{"f.toml:4:1: check.ignore: want a list of strings, such as [\"a\", \"b\"], not the string \"ref/\""}},
		{"pyproject tool.amplidex not a table", "[tool]\namplidex = 3\n", []string{"tool", "amplidex"}, Project,
			[]string{"f.toml:2:1: tool.amplidex: want a table, not the number 3"}},
		{"pyproject unknown key", "[tool.amplidex.check]\nselct = []\n", []string{"tool", "amplidex"}, Project,
			[]string{"f.toml:2:1: unknown configuration key tool.amplidex.check.selct; did you mean tool.amplidex.check.select?"}},
		{"syntax", "[check\n", nil, User, []string{"f.toml:", "to end table name"}},
		// Nesting the decoder must not see is refused where it starts,
		// in every kind of file, before a byte is decoded.
		{"project file nested deep", "[check]\nignore = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n", nil, Project,
			[]string{"f.toml:2:42: TOML not read: arrays and inline tables nest more than 32 deep"}},
		{"user file nested deep", "[check]\nper-path = " + strings.Repeat("{a=", 40) + "1" + strings.Repeat("}", 40) + "\n", nil, User,
			[]string{"f.toml:2:108: TOML not read: arrays and inline tables nest more than 32 deep"}},
		{"pyproject nested deep", "[project]\nname = \"x\"\n[tool.amplidex.check]\nignore = " + strings.Repeat("[", 50) + strings.Repeat("]", 50) + "\n",
			[]string{"tool", "amplidex"}, Project, []string{"f.toml:4:42: TOML not read: arrays and inline tables nest more than 32 deep"}},
		{"key of many parts", "[check]\n" + strings.Repeat("a.", 40) + "a = 1\n", nil, Project,
			[]string{"f.toml:2:1: TOML not read: a key or table name has more than 32 dotted parts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.toml", []byte(tc.src), tc.prefix, tc.kind, "")
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not say %q", err, w)
				}
			}
			for _, goName := range []string{"slice", "int64", "destination", "struct", "interface", "missing unit"} {
				if strings.Contains(err.Error(), goName) {
					t.Errorf("error %q speaks Go (%s)", err, goName)
				}
			}
		})
	}
}

// TestParseConfigSet: the keys a file sets are known with their lines,
// under the pyproject prefix too.
func TestParseConfigSet(t *testing.T) {
	src := "[project]\nname = \"x\"\n\n[tool.amplidex.check]\nselect = [\"schema/\"]\nseverity = \"error\"\n[tool.amplidex.check.per-path]\n\"a/*\" = [\"ref/\"]\n"
	cfg, err := Parse("pyproject.toml", []byte(src), []string{"tool", "amplidex"}, Project, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"check.select": 5, "check.severity": 6, "check.per-path": 7}
	for k, line := range want {
		if got, ok := cfg.set[k]; !ok || got != line {
			t.Errorf("set[%q] = %d, %v; want line %d", k, got, ok, line)
		}
	}
	if len(cfg.set) != len(want) {
		t.Errorf("set = %v, want the keys of %v", cfg.set, want)
	}
	if len(cfg.Check.Select) != 1 || cfg.Check.Severity != "error" || len(cfg.Check.PerPath["a/*"]) != 1 {
		t.Errorf("decoded %+v", cfg.Check)
	}
}

// FuzzParseConfig: no configuration, however broken, panics the parser,
// and what it accepts decodes.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"[check]\nselect = [\"schema/\"]\n", "[tool.amplidex.check]\nignore = [1]\n", "[watch]\ndebounce = 3\n",
		"[check.per-path]\n\"**\" = [\"ref/\"]\n", "a = {b = [[1]]}\n"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, src string, pyproject bool) {
		var prefix []string
		if pyproject {
			prefix = []string{"tool", "amplidex"}
		}
		for _, kind := range []Kind{User, Project} {
			cfg, err := Parse("f.toml", []byte(src), prefix, kind, "")
			if err == nil && cfg != nil && cfg.path != "f.toml" {
				t.Fatalf("accepted without its path: %+v", cfg)
			}
		}
	})
}
