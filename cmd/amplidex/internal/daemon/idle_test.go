package daemon_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
)

// TestIdleExit: a daemon with an idle time says so in status, with its
// deadline while the asker's is its one connection, and asks its owner to
// stop once its last client has gone; a daemon without one says nothing
// of it and stays.
func TestIdleExit(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "alone"), "alone", "1.0.0")
	d := e.startWith(func(o *daemon.Options) { o.IdleExit = 2 * time.Second; o.Mode = query.ModeAutostart })

	c := e.client()
	var st query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.IdleExit != "2s" || st.Connections != 1 || st.IdleDeadline.IsZero() || st.Mode != query.ModeAutostart {
		t.Errorf("status of an idle daemon: idle_exit %q, connections %d, deadline %v, mode %s",
			st.IdleExit, st.Connections, st.IdleDeadline, st.Mode)
	}
	var text strings.Builder
	if err := query.MethodStatus.Print(&text, &st, query.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "idle exit") || !strings.Contains(text.String(), "2s without clients") {
		t.Errorf("status does not show the idle deadline:\n%s", text.String())
	}
	second := e.client()
	st = query.Status{}
	if err := callWithin(t, second, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.Connections != 2 || !st.IdleDeadline.IsZero() {
		t.Errorf("with two clients: connections %d, deadline %v", st.Connections, st.IdleDeadline)
	}
	select {
	case <-d.StopRequested():
		t.Fatal("the daemon asked to stop with clients connected")
	default:
	}
	c.Close()
	second.Close()
	select {
	case <-d.StopRequested():
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not ask to stop once its clients had gone")
	}

	// Without an idle time: nothing in status.
	e2 := newEnv(t)
	e2.startWith(func(o *daemon.Options) {})
	st = query.Status{}
	if err := callWithin(t, e2.client(), 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.IdleExit != "" || !st.IdleDeadline.IsZero() || st.Connections != 1 {
		t.Errorf("status of a daemon that never idles: idle_exit %q, deadline %v, connections %d", st.IdleExit, st.IdleDeadline, st.Connections)
	}
}

// TestIdleExitReload: a reload that sets an idle time on a daemon
// without clients makes it ask to stop.
func TestIdleExitReload(t *testing.T) {
	e := newEnv(t)
	d := e.startWith(func(o *daemon.Options) {})
	opts := daemon.Options{Paths: e.paths, Home: e.home, Bundled: []string{e.bundled}, NoSync: true, IdleExit: time.Millisecond}
	opts.Watch.Debounce, opts.Watch.PollInterval = 5*time.Millisecond, 20*time.Millisecond
	if err := d.Reload(opts); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.StopRequested():
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not ask to stop after a reload set an idle time")
	}
}
