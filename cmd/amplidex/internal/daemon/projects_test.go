package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
)

// projectDirs asks status for the registered projects.
func projectDirs(t *testing.T, c *query.Client) []string {
	t.Helper()
	var st query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	dirs := []string{}
	for _, p := range st.Projects {
		if p.LastUsed.IsZero() {
			t.Errorf("project %s has no last use", p.Dir)
		}
		dirs = append(dirs, p.Dir)
	}
	return dirs
}

// waitProjects waits until the registered projects are want.
func waitProjects(t *testing.T, c *query.Client, want []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := projectDirs(t, c)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("projects %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProjectsPruned: a project whose directory is gone, and one nobody
// asked about for ForgetAfter, are forgotten by the daemon on its own; a
// restart keeps the last use of the others.
func TestProjectsPruned(t *testing.T) {
	e := newEnv(t)
	var offset atomic.Int64 // how far the daemon's clock is ahead
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	opts := func(o *daemon.Options) {
		o.Now, o.PruneEvery, o.ForgetAfter = now, 10*time.Millisecond, 48*time.Hour
	}
	d := e.startWith(opts)
	c := e.client()
	gone, idle, busy := e.otherProject("gone"), e.otherProject("idle"), e.otherProject("busy")
	ask := func(p string) {
		t.Helper()
		if err := callWithin(t, c, 10*time.Second, "collections", map[string]any{"project": p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{busy, gone, idle} {
		ask(p)
	}
	waitProjects(t, c, []string{busy, gone, idle})

	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	waitProjects(t, c, []string{busy, idle})

	offset.Store(int64(30 * time.Hour))
	ask(busy)
	offset.Store(int64(60 * time.Hour)) // idle: 60h unused; busy: 30h
	waitProjects(t, c, []string{busy})

	// A restart keeps busy's last use rather than making it fresh.
	c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	offset.Store(int64(100 * time.Hour)) // busy: 70h unused
	e.startWith(opts)
	c = e.client()
	waitProjects(t, c, []string{})
}

// TestForget: "forget" drops a registered project, even one whose
// directory is gone, and says when there was nothing to drop.
func TestForget(t *testing.T) {
	e := newEnv(t)
	e.startWith(func(*daemon.Options) {})
	c := e.client()
	a, b := e.otherProject("a"), e.otherProject("b")
	for _, p := range []string{a, b} {
		if err := callWithin(t, c, 10*time.Second, "collections", map[string]any{"project": p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var res query.ForgetResult
	if err := callWithin(t, c, 10*time.Second, "forget", query.ForgetParams{Dir: a}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Forgotten || res.Dir != a {
		t.Errorf("forget %s: %+v", a, res)
	}
	if got := projectDirs(t, c); !slices.Equal(got, []string{b}) {
		t.Errorf("projects %v, want %v", got, []string{b})
	}
	if err := callWithin(t, c, 10*time.Second, "forget", query.ForgetParams{Dir: a}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Forgotten {
		t.Errorf("forgot %s twice", a)
	}
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	if err := callWithin(t, c, 10*time.Second, "forget", query.ForgetParams{Dir: filepath.Clean(b + "/")}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Forgotten {
		t.Errorf("forget of the gone %s: %+v", b, res)
	}
	err := callWithin(t, c, 10*time.Second, "forget", query.ForgetParams{Dir: "relative"}, &res)
	if qe, ok := err.(*query.Error); !ok || qe.Code != query.CodeInvalidParams {
		t.Errorf("forget of a relative path: %v, want invalid-params", err)
	}
}

// TestRequestOfAnotherBuild: a request naming the build the daemon reports
// is answered; one naming another is refused with other-build.
func TestRequestOfAnotherBuild(t *testing.T) {
	e := newEnv(t)
	build := query.Build{Version: "v1.2.3", GoVersion: "go1.99", Platform: "plan9/mips"}
	e.startWith(func(o *daemon.Options) { o.Build = build })
	c := e.client()
	c.RequireBuild(build)
	var info query.DaemonInfo
	if err := callWithin(t, c, 10*time.Second, "version", nil, &info); err != nil || info.Build != build {
		t.Fatalf("version naming the daemon's build: %+v, %v", info, err)
	}
	c.RequireBuild(query.ReadBuild())
	err := callWithin(t, c, 10*time.Second, "version", nil, &info)
	if qe, ok := err.(*query.Error); !ok || qe.Code != query.CodeOtherBuild {
		t.Errorf("version naming another build: %v, want other-build", err)
	}
}

// TestVersionAndShutdown: "version" says who answers; "shutdown" asks the
// daemon's owner to stop it.
func TestVersionAndShutdown(t *testing.T) {
	e := newEnv(t)
	build := query.Build{Version: "v1.2.3", GoVersion: "go1.99", Platform: "plan9/mips"}
	d := e.startWith(func(o *daemon.Options) { o.Mode, o.Build = query.ModeDetached, build })
	c := e.client()
	var info query.DaemonInfo
	if err := callWithin(t, c, 10*time.Second, "version", nil, &info); err != nil {
		t.Fatal(err)
	}
	if info.PID != os.Getpid() || info.Mode != query.ModeDetached || info.Build != build || info.Scanning || info.SocketActivated {
		t.Errorf("version: %+v", info)
	}
	select {
	case <-d.StopRequested():
		t.Fatal("stop requested before shutdown")
	default:
	}
	var res query.ShutdownResult
	if err := callWithin(t, c, 10*time.Second, "shutdown", nil, &res); err != nil {
		t.Fatal(err)
	}
	if res.PID != os.Getpid() {
		t.Errorf("shutdown answered pid %d", res.PID)
	}
	select {
	case <-d.StopRequested():
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not ask the owner to stop")
	}
}

// TestAnswersDuringFirstScan: the socket answers while the first scan
// runs: status with its progress, version; a question waits for the scan.
func TestAnswersDuringFirstScan(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	for i := range 3 {
		name := "c" + strconv.Itoa(i)
		e.collection(filepath.Join(e.userRoot(), name), name, "1.0.0")
	}
	release := make(chan struct{})
	var reads atomic.Int64
	opts := daemon.Options{Paths: e.paths, Home: e.home, NoSync: true,
		ReadFile: func(p string) ([]byte, error) {
			reads.Add(1)
			<-release
			return os.ReadFile(p)
		}}
	started := make(chan error, 1)
	var d *daemon.Daemon
	go func() {
		var err error
		d, err = daemon.Start(context.Background(), opts)
		started <- err
	}()
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		if err := <-started; err == nil {
			d.Close()
		}
	})
	var c *query.Client
	deadline := time.Now().Add(10 * time.Second)
	for c == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, _ = query.Dial(ctx, e.paths.Socket)
		cancel()
		if c == nil && time.Now().After(deadline) {
			t.Fatal("the socket does not answer during the first scan")
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer c.Close()

	// The first scan reads the user root; a question waits for it.
	answered := make(chan error, 1)
	go func() {
		answered <- callWithin(t, c, time.Minute, "collections", map[string]any{"project": e.project}, nil)
	}()
	var st query.Status
	for reads.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the scan read nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if !st.Scanning || st.Progress == nil || st.Progress.Files < 1 || st.Progress.Phase != "reading roots" {
		t.Fatalf("status during the scan: scanning %v, progress %+v", st.Scanning, st.Progress)
	}
	var info query.DaemonInfo
	if err := callWithin(t, c, 10*time.Second, "version", nil, &info); err != nil || !info.Scanning {
		t.Fatalf("version during the scan: %+v, %v", info, err)
	}
	select {
	case err := <-answered:
		t.Fatalf("a question was answered during the first scan (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	var after query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &after); err != nil {
		t.Fatal(err)
	}
	if after.Scanning || after.Progress != nil {
		t.Errorf("status after the scan: scanning %v, progress %+v", after.Scanning, after.Progress)
	}
}
