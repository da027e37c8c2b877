package main

import "github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"

// The memory policy of the process, the one place the command chooses it
// (see daemon.Memory): nothing else sets the collector's target or the
// memory limit, or gives memory back. GOGC and GOMEMLIMIT, when set, are
// kept instead of the command's own settings.

// checkGC is the collector's target for check: at 2,000 collections it
// halves the collector's CPU time for 20 MB more of peak memory.
const checkGC = 400

// idleGC is the collector's target of a daemon that reads nothing.
const idleGC = 25

// daemonMemory is the daemon's policy. Its first scan runs at the
// collector's default target: a higher one saved little time and left the
// heap fragmented (at 10,000 collections, 30 MiB more RssAnon after a
// restart at 200). Once it is done the daemon is idle most of the time: it
// trades a little CPU for a smaller heap, and gives back at once what a
// burst of work freed, once the burst is over.
func (a *App) daemonMemory() daemon.Memory {
	m := daemon.Memory{Limit: daemon.DefaultMemoryLimit, IdleGC: idleGC, TrimEvery: daemon.DefaultTrimEvery}
	if a.Getenv("GOGC") != "" {
		m.IdleGC = 0
	}
	if a.Getenv("GOMEMLIMIT") != "" {
		m.Limit = 0
	}
	return m
}

// checkMemory is check's policy: a check reads and parses every file,
// keeps little of it, and exits, so it collects garbage less often than a
// long-lived process would.
func (a *App) checkMemory() daemon.Memory {
	var m daemon.Memory
	if a.Getenv("GOGC") == "" {
		m.ReadGC = checkGC
	}
	return m
}
