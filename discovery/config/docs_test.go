package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConfigurationDocListsEveryKey keeps docs/configuration.md complete:
// every table and key the configuration parser accepts (the toml tags of
// Config) is in its table of keys, and its example sets every key and is
// a valid configuration.
func TestConfigurationDocListsEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	keys := Keys()
	if len(keys) < 10 {
		t.Fatalf("the configuration has %d keys: %q; the struct's tags were not read", len(keys), keys)
	}
	var leaves []string
	for _, k := range keys {
		if !strings.Contains(k, ".") {
			if !strings.Contains(doc, "`["+k+"]`") {
				t.Errorf("docs/configuration.md does not name the table `[%s]`", k)
			}
			continue
		}
		leaves = append(leaves, k)
		if !regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(k) + "` \\|").MatchString(doc) {
			t.Errorf("docs/configuration.md has no row for %s in its table of keys", k)
		}
	}

	_, rest, ok := strings.Cut(doc, "```toml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/configuration.md shows no configuration example")
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, true)
	if err != nil {
		t.Fatalf("the example of docs/configuration.md: %v", err)
	}
	for _, k := range leaves {
		if _, ok := cfg.set[k]; !ok {
			t.Errorf("the example of docs/configuration.md does not set %s", k)
		}
	}
	for k := range cfg.set {
		if !slices.Contains(leaves, k) {
			t.Errorf("the example sets %s, which is not a key of its own", k)
		}
	}
}
