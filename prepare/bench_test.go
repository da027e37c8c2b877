package prepare_test

import (
	"context"
	"testing"

	"github.com/amplidex/amplidex/prepare"
)

// BenchmarkWarmHit measures Ensure on a warm entry: read and hash the
// manifest, read and check both entry files, stat the module directories.
// The target is under 5 ms.
func BenchmarkWarmHit(b *testing.B) {
	f := newFixture(b)
	c, _ := f.cache(b)
	ensure(b, c, f.manifest)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e, err := c.Ensure(ctx, f.manifest)
		if err != nil || e.State != prepare.StateWarm {
			b.Fatalf("Ensure: %s, %v", e.State, err)
		}
	}
}
