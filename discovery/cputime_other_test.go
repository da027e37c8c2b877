//go:build !unix

package discovery_test

import "time"

// processCPU is not measured here; benchmarks report 0.
func processCPU() time.Duration { return 0 }
