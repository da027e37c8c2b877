package watcher

import (
	"fmt"
	"strings"
)

// Reason is a set of reasons why a root must be rescanned, one bit each.
// The zero Reason is the empty set.
type Reason uint32

// The reasons for a rescan. A batch may carry several: a queue overflow
// and a root that appeared in the same debounce window give
// ReasonOverflow|ReasonRootAppeared.
const (
	// ReasonOverflow: the kernel event queue overflowed, so events of
	// every root may have been lost; every root was watched afresh.
	ReasonOverflow Reason = 1 << iota
	// ReasonWatchLost: fsnotify reported an error other than an overflow,
	// so events and watches may have been lost; every root was watched
	// afresh.
	ReasonWatchLost
	// ReasonRootAppeared: the root did not exist and now does.
	ReasonRootAppeared
	// ReasonRootVanished: the root was removed, or moved away with a
	// directory above it.
	ReasonRootVanished
	// ReasonRootReplaced: the root's path now leads to another directory.
	ReasonRootReplaced
	// ReasonWatchLimit: adding a watch failed with ENOSPC (the kernel's
	// watch limit, or Options.MaxWatches). It comes with ReasonPolling.
	ReasonWatchLimit
	// ReasonTooManyFiles: adding a watch failed with EMFILE or ENFILE (the
	// process or the system ran out of file descriptors; kqueue holds one
	// per watched file and directory). It comes with ReasonPolling.
	ReasonTooManyFiles
	// ReasonPolling: the root switched from watching to polling, and
	// changes may have been missed on the way.
	ReasonPolling
	// ReasonTooLarge: the root holds more directories than
	// Options.MaxRootDirs; it is neither watched nor polled any more, and
	// changes may have been missed on the way.
	ReasonTooLarge

	reasonEnd // one past the last reason
)

// reasonText is what String says for each reason, in bit order.
var reasonText = [...]string{
	"kernel event queue overflowed",
	"watch error",
	"root appeared",
	"root vanished",
	"root replaced",
	"watch limit reached",
	"too many open files",
	"switched to polling",
	"too large to watch",
}

// reasonText has one entry per reason, or this does not compile.
var _ = [1]struct{}{}[reasonEnd-1<<len(reasonText)]

// Has reports whether every reason in r is in x.
func (x Reason) Has(r Reason) bool { return x&r == r }

// String lists the reasons in x in a fixed order (that of the constants),
// separated by "; ": "kernel event queue overflowed; root appeared". The
// empty set is "none".
func (x Reason) String() string {
	if x == 0 {
		return "none"
	}
	var parts []string
	for i, text := range reasonText {
		if x.Has(1 << i) {
			parts = append(parts, text)
		}
	}
	if rest := x &^ (reasonEnd - 1); rest != 0 {
		parts = append(parts, fmt.Sprintf("Reason(%#x)", uint32(rest)))
	}
	return strings.Join(parts, "; ")
}
