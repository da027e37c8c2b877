package prepare_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/amplidex/amplidex/prepare"
)

// FuzzLoadManifest checks that validating any bytes as a manifest never
// panics and fails only with a *ManifestError.
func FuzzLoadManifest(f *testing.F) {
	dir := f.TempDir()
	unpack(f, "bundle.txtar", dir, map[string]string{
		"${REPO_A}": "git+file:///srv/a", "${REPO_B}": "git+file:///srv/b", "${REPO_C}": "git+file:///srv/c",
	})
	seed, err := os.ReadFile(filepath.Join(dir, "bundle.md"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("---\nbundle: {name: x}\ndefault_provider: a\ntools:\n  - &m {module: t, source: ./x, config: {k: .nan, j: *m}}\n---\n"))
	f.Add([]byte("---\nbundle: {name: x}\ndefault_provider: a\nagents: {include: [x:y, ../z], inline: {tools: [{module: q}]}}\n---\n@x:../../etc\n"))
	manifest := filepath.Join(dir, "bundle.md")
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := prepare.LoadManifest(manifest, src)
		var me *prepare.ManifestError
		if err != nil && !errors.As(err, &me) {
			t.Fatalf("error %v is not a *ManifestError", err)
		}
	})
}
