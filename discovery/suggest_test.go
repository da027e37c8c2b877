package discovery_test

import (
	"strings"
	"testing"

	"github.com/amplidex/amplidex/discovery"
)

func TestSuggest(t *testing.T) {
	keys := []string{"profile", "session", "providers", "tools", "hooks", "agents", "default_provider", "ui", "task", "model", "model_role"}
	tests := []struct {
		key, want string
	}{
		{"sesion", "session"},      // deletion
		{"sessions", "session"},    // insertion
		{"tols", "tools"},          // deletion
		{"hokos", "hooks"},         // swap
		{"provdiers", "providers"}, // swap
		{"Tools", "tools"},         // case
		{"default-provider", "default_provider"},
		{"DefaultProvider", "default_provider"},
		{"modelrole", "model_role"},
		{"model-role", "model_role"},
		{"modle", "model"},
		{"ux", "ui"}, // short keys: one edit
		{"xy", ""},   // two edits from "ui": too far for a short key
		{"profiles", "profile"},
		{"agent", "agents"},
		{"tasks", "task"},
		{"model_temperature", ""},
		{"wibble", ""},
		{"", ""},
		{"tools", ""}, // a known key needs no hint
		{strings.Repeat("t", 100), ""},
	}
	for _, tc := range tests {
		if got := discovery.Suggest(tc.key, keys); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
