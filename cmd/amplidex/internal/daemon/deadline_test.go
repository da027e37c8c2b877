package daemon_test

import (
	"testing"
	"time"

	"github.com/amplidex/amplidex/internal/testdeadline"
)

// deadline gives a concurrency test a deadline of its own (see
// testdeadline.Set).
func deadline(t *testing.T, d time.Duration) { testdeadline.Set(t, d) }
