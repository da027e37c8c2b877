package prepare

import (
	"context"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
)

// LoadManifest validates src as the manifest at path, for fuzzing.
func LoadManifest(path string, src []byte) ([]diag.Diagnostic, error) {
	m, err := loadManifest(path, src, schema.Options{})
	if err != nil {
		return nil, err
	}
	return m.warnings, nil
}

// LockFile takes the lock of path as the cache does and returns its
// release.
func LockFile(ctx context.Context, path string, shared bool) (unlock func() error, err error) {
	l, err := lockFile(ctx, path, shared)
	if err != nil {
		return nil, err
	}
	return l.unlock, nil
}

// The bound on a stalled transfer that git gets unless the environment
// sets one.
const (
	LowSpeedLimit = lowSpeedLimit
	LowSpeedTime  = lowSpeedTime
)
