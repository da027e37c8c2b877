package service

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Launcher finds the daemon of a workspace, starts one in the background
// when none answers and auto-start is on, and replaces or stops it, for
// one run of the command line. Its fields are set before its first use.
type Launcher struct {
	// Getenv reads the environment.
	Getenv func(string) string
	// Stderr gets what the launcher says: a daemon started, one of
	// another build.
	Stderr io.Writer
	// Status shows how long a start or a stop has taken, on a terminal;
	// nil: nowhere.
	Status Status
	// ConfigPath and LogLevel are --config and --log-level, passed on to
	// a daemon it starts ("" when not given).
	ConfigPath, LogLevel string
	// RejoinLimit bounds how long Rejoin looks for a daemon; rejoinLimit
	// when zero. Tests shorten it.
	RejoinLimit time.Duration

	// older says once that the daemon, of another build that is not
	// older, is asked as it is.
	older sync.Once
}

// Status is a line of progress that the next line said replaces.
type Status interface {
	Set(format string, args ...any)
	Clear()
}

// status is l.Status, or one that shows nothing.
func (l *Launcher) status() Status {
	if l.Status == nil {
		return noStatus{}
	}
	return l.Status
}

type noStatus struct{}

func (noStatus) Set(string, ...any) {}
func (noStatus) Clear()             {}

// UnreachableError is returned when the daemon's socket is there but
// this user may not use it.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }

// UsageError is returned when the service cannot be installed or
// removed as asked; the command line exits 2. Err is nil when why was
// said on Stderr already.
type UsageError struct{ Err error }

func (e *UsageError) Error() string {
	if e.Err == nil {
		return "usage"
	}
	return e.Err.Error()
}

func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}
