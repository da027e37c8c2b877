// Package service finds, starts and stops amplidex's daemon for the
// command line, and writes the files that let the user's service manager
// run it. A Launcher dials a workspace's socket, starts a daemon in the
// background when none answers and auto-start is on (one client at a
// time, under a lock file in the state directory), waits for its first
// answer, replaces a daemon of an older build that a client started, and
// stops one. Files writes the units of systemd (a socket unit and its
// service) or launchd's agent; PackagedUnits those a package installs.
// ActivationListener takes the socket systemd passes on, and LogFile is
// the bounded, rotated log of a daemon in the background. Answer asks
// the daemon one of query's methods, or answers it in process when no
// daemon can be had. DaemonOptions, DaemonBundles and OpenCache turn the
// configuration into the daemon's options and a prepared-bundle cache;
// Settings lists every setting with where it comes from. Built with
// -tags pprof, the process writes profiles on SIGUSR1 and SIGUSR2.
//
// It does not run the daemon (package daemon does), parse flags or pick
// exit codes (the command line does; a socket this user may not use is
// an *UnreachableError).
//
// A Launcher is one run's and is used by one goroutine at a time; a
// LogFile is safe for concurrent writes.
//
// # Caveats
//
//   - A daemon that another user runs, or of a build that is not older,
//     is never replaced; one the service manager runs is named, not
//     stopped.
//   - A daemon's pid file is trusted only for a live process whose
//     command line is amplidex's daemon (see DaemonProcess).
package service
