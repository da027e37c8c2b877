package watcher_test

import (
	"strings"
	"testing"

	"github.com/amplidex/amplidex/watcher"
)

var allReasons = []watcher.Reason{
	watcher.ReasonOverflow,
	watcher.ReasonWatchLost,
	watcher.ReasonRootAppeared,
	watcher.ReasonRootVanished,
	watcher.ReasonRootReplaced,
	watcher.ReasonWatchLimit,
	watcher.ReasonTooManyFiles,
	watcher.ReasonPolling,
}

func TestReasonString(t *testing.T) {
	tests := []struct {
		name   string
		reason watcher.Reason
		want   string
	}{
		{"empty", 0, "none"},
		{"one", watcher.ReasonRootAppeared, "root appeared"},
		{"overflow with root appeared", watcher.ReasonRootAppeared | watcher.ReasonOverflow, "kernel event queue overflowed; root appeared"},
		{"polled for want of files", watcher.ReasonPolling | watcher.ReasonTooManyFiles, "too many open files; switched to polling"},
		{"unknown bit", watcher.ReasonRootVanished | 1<<31, "root vanished; Reason(0x80000000)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.reason.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}

	seen := make(map[string]watcher.Reason)
	for _, r := range allReasons {
		s := r.String()
		if s == "" || strings.Contains(s, "Reason(") || strings.Contains(s, ";") {
			t.Errorf("reason %#x has no text of its own: %q", uint32(r), s)
		}
		if other, ok := seen[s]; ok {
			t.Errorf("reasons %#x and %#x both read %q", uint32(other), uint32(r), s)
		}
		seen[s] = r
	}
}

func TestReasonHas(t *testing.T) {
	set := watcher.ReasonOverflow | watcher.ReasonRootAppeared
	tests := []struct {
		name string
		r    watcher.Reason
		want bool
	}{
		{"member", watcher.ReasonOverflow, true},
		{"other member", watcher.ReasonRootAppeared, true},
		{"both", watcher.ReasonOverflow | watcher.ReasonRootAppeared, true},
		{"not a member", watcher.ReasonRootVanished, false},
		{"one of two missing", watcher.ReasonOverflow | watcher.ReasonRootVanished, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := set.Has(tc.r); got != tc.want {
				t.Errorf("(%s).Has(%s) = %v, want %v", set, tc.r, got, tc.want)
			}
		})
	}
}
