package main

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
	cfg, err := loadConfig(path, true)
	if err != nil {
		t.Fatalf("the README's configuration example: %v", err)
	}
	if len(cfg.Check.PerPath) == 0 {
		t.Errorf("the example shows no [check.per-path]")
	}
}
