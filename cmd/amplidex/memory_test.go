package main

import (
	"testing"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
)

// TestMemoryPolicies: the daemon's policy has a memory limit, a low idle
// target and a trim period, and check's a high target; GOGC and
// GOMEMLIMIT, when set, are kept instead of the command's settings.
func TestMemoryPolicies(t *testing.T) {
	for _, tc := range []struct {
		name          string
		env           map[string]string
		daemon, check daemon.Memory
	}{
		{"defaults", nil,
			daemon.Memory{Limit: daemon.DefaultMemoryLimit, IdleGC: idleGC, TrimEvery: daemon.DefaultTrimEvery},
			daemon.Memory{ReadGC: checkGC}},
		{"GOGC set", map[string]string{"GOGC": "50"},
			daemon.Memory{Limit: daemon.DefaultMemoryLimit, TrimEvery: daemon.DefaultTrimEvery},
			daemon.Memory{}},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "300MiB"},
			daemon.Memory{IdleGC: idleGC, TrimEvery: daemon.DefaultTrimEvery},
			daemon.Memory{ReadGC: checkGC}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewApp(nil, nil, nil, func(k string) string { return tc.env[k] })
			if got := a.daemonMemory(); got != tc.daemon {
				t.Errorf("daemon: %+v, want %+v", got, tc.daemon)
			}
			if got := a.checkMemory(); got != tc.check {
				t.Errorf("check: %+v, want %+v", got, tc.check)
			}
		})
	}
}
