package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// readyInterval is how often a starting daemon is asked whether it is
// ready; it bounds the error of the start-up timings.
const readyInterval = 2 * time.Millisecond

// dialInterval is how often a starting daemon's socket is tried until it
// takes a connection; it bounds the error of the first-answer timing.
const dialInterval = time.Millisecond

// sampleTimeout bounds one latency sample.
const sampleTimeout = 10 * time.Second

// errScanning is returned while a starting daemon reports a scan in
// progress.
var errScanning = errors.New("scan in progress")

// amplidexResult is what the harness measured of amplidex.
type amplidexResult struct {
	Initial         time.Duration // cold start to a status answer without a scan in progress
	InitialFiles    int           // files in the index after the cold start
	InitialAnalyzed int           // files read and parsed by the cold start
	Collections     int           // collections the user root holds
	Restart         time.Duration // restart, nothing changed, likewise
	RestartAnalyzed int           // files read again by the restart
	// FirstAnswer is the time from the restarted process's start to the
	// first answer to a no_sync resolve; FirstFound says whether that
	// answer named the probe's collection, and FirstScan what a status
	// asked right after said of the scan ("n/a": Status has no field for
	// it).
	FirstAnswer    time.Duration
	FirstFound     bool
	FirstScan      string
	ResolveProcess timings // whole `amplidex query resolve NAME` processes
	DialFloor      timings // whole dial-floor processes, interleaved with them
	// ResolveProcessCPU and DialFloorCPU are the CPU time (user and
	// system) of the same processes: less skewed than their wall time by
	// other work on the machine.
	ResolveProcessCPU timings
	DialFloorCPU      timings
	SocketNoSync      timings // resolve over the socket, no_sync
	SocketSync        timings // resolve over the socket, read-your-writes
	SaveVisible       timings // write → diagnostics answer shows the defect
	SaveNotify        timings // write → subscription notification with the defect
	ColdMemory        memory  // of the cold-started daemon once ready
	Memory            memory  // of the restarted daemon after every loop
	QuietMemory       memory  // of the same, -quiet later
	// NewProject is the wall time of whole `amplidex query resolve NAME`
	// processes, each the first question in a project the daemon had not
	// seen, asked from inside it while the daemon ran for the user root;
	// NewProjects describes those projects, one for each time.
	NewProject  timings
	NewProjects []newProject
}

// newProject is one project whose first answer was timed.
type newProject struct {
	Dir         string `json:"dir"`
	Collections int    `json:"collections"`
	Files       int    `json:"files"`
	Name        string `json:"name"` // the collection asked for
	// ClientCPUMS is the CPU time (user and system) of the query process,
	// DaemonCPUMS the daemon's while that process ran.
	ClientCPUMS float64 `json:"client_cpu_ms"`
	DaemonCPUMS float64 `json:"daemon_cpu_ms"`
}

// amplidexRun measures one amplidex binary against one tree.
type amplidexRun struct {
	h         *harness
	bin       string
	dialFloor string // the dial-floor binary
	env       []string
	cwd       string // a directory outside any project
	paths     query.Paths
	res       amplidexResult
}

// measureAmplidex runs every amplidex measurement in order: a cold start
// on an empty index, a restart with nothing changed, then the query and
// save loops against the restarted daemon.
func (h *harness) measureAmplidex(ctx context.Context, bin, dialFloor string) (*amplidexResult, error) {
	home := filepath.Join(h.work, "amplidex")
	cwd := filepath.Join(h.work, "cwd")
	vars := map[string]string{
		"HOME":                 h.home,
		"AMPLIDEX_HOME":        filepath.Join(home, "state"),
		"XDG_CONFIG_HOME":      filepath.Join(home, "xdg", "config"),
		"XDG_STATE_HOME":       filepath.Join(home, "xdg", "state"),
		"XDG_CACHE_HOME":       filepath.Join(home, "xdg", "cache"),
		"XDG_DATA_HOME":        filepath.Join(home, "xdg", "data"),
		"XDG_RUNTIME_DIR":      filepath.Join(home, "xdg", "run"),
		"AMPLIFIER_AGENT_HOME": filepath.Join(home, "agent"),
		"NO_COLOR":             "1",
	}
	for _, dir := range []string{cwd, vars["AMPLIDEX_HOME"], vars["XDG_RUNTIME_DIR"]} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("amplidex: %w", err)
		}
	}
	paths, err := query.DefaultPaths(func(k string) string { return vars[k] })
	if err != nil {
		return nil, fmt.Errorf("amplidex: %w", err)
	}
	r := &amplidexRun{h: h, bin: bin, dialFloor: dialFloor, env: childEnv(vars), cwd: cwd, paths: paths}
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	return &r.res, nil
}

func (r *amplidexRun) run(ctx context.Context) error {
	h := r.h
	h.progress("amplidex: cold start on an empty index")
	s, err := r.start(ctx)
	if err != nil {
		return err
	}
	st := s.status
	r.res.Initial, r.res.InitialFiles, r.res.InitialAnalyzed = s.ready, st.Files, st.Analyzed
	for _, root := range st.Roots {
		if root.Kind == discovery.RootUser {
			r.res.Collections = root.Collections
		}
	}
	// The pid the daemon reports, not the child's: -amplidex may name a
	// wrapper (a profiler, say) that runs the daemon.
	if r.res.ColdMemory, err = readMemory(st.PID); err != nil {
		s.d.stop(30 * time.Second)
		return err
	}
	h.progress("amplidex: indexed %d files of %d collections in %s (%d analyzed); %s",
		st.Files, r.res.Collections, s.ready.Round(time.Millisecond), st.Analyzed, r.res.ColdMemory)
	if h.cfg.only == onlyQuery {
		return r.queryOnly(ctx, s)
	}
	if err := s.d.stop(30 * time.Second); err != nil {
		return err
	}

	h.progress("amplidex: restart with nothing changed")
	if s, err = r.start(ctx); err != nil {
		return err
	}
	defer s.d.stop(30 * time.Second)
	st = s.status
	r.res.Restart, r.res.RestartAnalyzed = s.ready, st.Analyzed
	r.res.FirstAnswer, r.res.FirstFound, r.res.FirstScan = s.firstAnswer, s.found, s.scan
	h.progress("amplidex: restarted in %s, %d files read again; first no_sync answer %s after the start (named the collection: %v; scan: %s)",
		s.ready.Round(time.Millisecond), st.Analyzed, s.firstAnswer.Round(100*time.Microsecond), s.found, s.scan)

	c, err := query.Dial(ctx, r.paths.Socket)
	if err != nil {
		return fmt.Errorf("amplidex: %w", err)
	}
	defer c.Close()
	for _, s := range r.steps() {
		if err := r.runStep(ctx, c, s); err != nil {
			return err
		}
	}
	if r.res.Memory, err = readMemory(st.PID); err != nil {
		return err
	}
	h.progress("amplidex: memory at the end %s", r.res.Memory)
	// What a daemon holds while nobody looks at it: it gives back what
	// the loops freed once it finds itself quiet (-quiet).
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(h.cfg.quiet):
	}
	if r.res.QuietMemory, err = readMemory(st.PID); err != nil {
		return err
	}
	h.progress("amplidex: memory %s later, quiet: %s", h.cfg.quiet, r.res.QuietMemory)
	// Last, so that the projects it adds to the daemon change neither the
	// loops above nor the memory read at the end.
	if h.cfg.newProject > 0 {
		if err := r.runStep(ctx, c, r.newProjectStep()); err != nil {
			return err
		}
	}
	return s.d.stop(30 * time.Second)
}

// queryOnly runs the whole-process query loop alone against the daemon
// of the cold start, and stops it.
func (r *amplidexRun) queryOnly(ctx context.Context, s *started) error {
	defer s.d.stop(30 * time.Second)
	if err := r.runStep(ctx, nil, r.steps()[0]); err != nil {
		return err
	}
	return s.d.stop(30 * time.Second)
}

// step is one measurement against a running daemon, and the loops it
// fills.
type step struct {
	what  string
	fn    func(context.Context, *query.Client) error
	loops []loop
}

// loop is one series of timings a step fills.
type loop struct {
	what string
	ts   *timings
}

// steps are the measurements against the restarted daemon, in order; the
// first, whole processes, needs no client of the harness's own.
func (r *amplidexRun) steps() []step {
	return []step{
		{"query resolve", r.resolveProcess, []loop{
			{"query resolve, whole process", &r.res.ResolveProcess}, {"dial floor, whole process", &r.res.DialFloor},
			{"query resolve, whole process, CPU", &r.res.ResolveProcessCPU}, {"dial floor, whole process, CPU", &r.res.DialFloorCPU},
		}},
		{"socket resolve", r.socketQueries, []loop{{"socket resolve, no_sync", &r.res.SocketNoSync}, {"socket resolve, synced", &r.res.SocketSync}}},
		{"save → diagnostics query", r.saveVisible, []loop{{"save → diagnostics query", &r.res.SaveVisible}}},
		{"save → subscription", r.saveNotify, []loop{{"save → subscription", &r.res.SaveNotify}}},
	}
}

// newProjectStep is the measurement of the first answer in new projects.
func (r *amplidexRun) newProjectStep() step {
	return step{"first answer in a new project", r.newProjectAnswers, []loop{{"first answer in a new project, whole process", &r.res.NewProject}}}
}

// runStep runs s with the client c and reports its loops.
func (r *amplidexRun) runStep(ctx context.Context, c *query.Client, s step) error {
	if err := s.fn(ctx, c); err != nil {
		return fmt.Errorf("amplidex: %s: %w", s.what, err)
	}
	for _, l := range s.loops {
		r.h.progress("amplidex: %s: %s", l.what, l.ts)
	}
	return nil
}

// started is what one start of the daemon measured.
type started struct {
	d *daemonProc
	// ready is the time from the process's start to a status answer
	// that reports no scan in progress.
	ready time.Duration
	// firstAnswer is the time from the process's start to the first
	// answer to a no_sync resolve of a probe; found says whether that
	// answer named the probe's collection.
	firstAnswer time.Duration
	found       bool
	// scan is what a status asked right after the first answer said of
	// the scan (see scanState).
	scan string
	// status is the status that reported no scan in progress.
	status *query.Status
}

// start starts a daemon and, from the moment its process starts, tries
// its socket every dialInterval until a no_sync resolve is answered; then
// it asks for the status until no scan is reported in progress.
func (r *amplidexRun) start(ctx context.Context) (*started, error) {
	if err := warmTree(r.h.tree.Root); err != nil {
		return nil, err
	}
	p := r.h.tree.probeAt(0, 1)
	began := time.Now()
	d, err := startDaemon("amplidex daemon", r.env, r.cwd, r.bin, "daemon", "--log-level", "warn")
	if err != nil {
		return nil, err
	}
	s := &started{d: d}
	if err := r.waitStarted(ctx, s, p, began); err != nil {
		d.stop(30 * time.Second)
		return nil, err
	}
	return s, nil
}

func (r *amplidexRun) waitStarted(ctx context.Context, s *started, p probe, began time.Time) error {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var c *query.Client
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	answered, err := s.d.waitReady(wctx, dialInterval, func(ctx context.Context) error {
		if c == nil {
			var err error
			if c, err = query.Dial(ctx, r.paths.Socket); err != nil {
				return err
			}
		}
		cctx, cancel := context.WithTimeout(ctx, sampleTimeout)
		defer cancel()
		res, _, err := query.Call(cctx, c, query.MethodResolve, query.NameParams{Common: query.Common{NoSync: true}, Name: p.Name})
		var qe *query.Error
		switch {
		case err == nil:
			s.found = res != nil && res.Found && res.Winner != nil && res.Winner.Dir == p.Dir
			return nil
		case errors.As(err, &qe) && qe.Code == query.CodeNotFound:
			return nil // an answer: the name is not indexed yet
		case errors.As(err, &qe):
			return err
		}
		c.Close()
		c = nil
		return err
	})
	if err != nil {
		return err
	}
	s.firstAnswer = answered.Sub(began)
	st, err := statusOf(wctx, c)
	if err != nil {
		return err
	}
	s.scan, _ = scanState(st)
	ready, err := s.d.waitReady(wctx, readyInterval, func(ctx context.Context) error {
		if _, scanning := scanState(st); !scanning {
			return nil
		}
		st, err = statusOf(ctx, c)
		if err != nil {
			return err
		}
		return errScanning
	})
	if err != nil {
		return err
	}
	s.ready, s.status = ready.Sub(began), st
	return nil
}

// statusOf asks the daemon for its status.
func statusOf(ctx context.Context, c *query.Client) (*query.Status, error) {
	cctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	st, _, err := query.Call(cctx, c, query.MethodStatus, query.StatusParams{Common: query.Common{NoSync: true}})
	if err == nil && st == nil {
		err = errors.New("status: empty answer")
	}
	return st, err
}

// scanState describes what a status answer says of a scan in progress:
// "scanning" with the files and collections seen so far, or "done".
func scanState(st *query.Status) (state string, scanning bool) {
	if st == nil || !st.Scanning {
		return "done", false
	}
	if p := st.Progress; p != nil {
		return fmt.Sprintf("scanning (%s: %d files, %d collections, %s)", p.Phase, p.Files, p.Collections, p.Elapsed), true
	}
	return "scanning", true
}

// resolveProcess times whole `amplidex query resolve NAME` processes and,
// interleaved with them, whole dial-floor processes asking the same: a
// program that only dials the socket, sends one no_sync resolve and
// prints the answer.
func (r *amplidexRun) resolveProcess(ctx context.Context, _ *query.Client) error {
	n := r.h.processRuns()
	for i := -1; i < n; i++ { // the first run warms the page cache
		p := r.h.tree.probeAt(max(i, 0), n)
		params, err := json.Marshal(query.NameParams{Common: query.Common{NoSync: true}, Name: p.Name})
		if err != nil {
			return err
		}
		cli := func() (sample, error) {
			wall, cpu, out, err := runTimed(ctx, r.env, r.cwd, nil, r.bin, "query", "resolve", p.Name)
			if err == nil && !strings.Contains(string(out), p.Dir) {
				err = fmt.Errorf("query resolve %s did not name %s:\n%s", p.Name, p.Dir, out)
			}
			return sample{wall, cpu}, err
		}
		floor := func() (sample, error) {
			wall, cpu, out, err := runTimed(ctx, r.env, r.cwd, nil, r.dialFloor, r.paths.Socket, resolveName, string(params))
			if err == nil {
				err = checkResolve(out, p)
			}
			return sample{wall, cpu}, err
		}
		// Alternate which goes first, so that neither always finds the
		// other's caches warm.
		first, second := cli, floor
		if i%2 != 0 {
			first, second = floor, cli
		}
		t1, err := first()
		if err != nil {
			return err
		}
		t2, err := second()
		if err != nil {
			return err
		}
		if i < 0 {
			continue
		}
		if i%2 != 0 {
			t1, t2 = t2, t1
		}
		r.res.ResolveProcess = append(r.res.ResolveProcess, t1.wall)
		r.res.ResolveProcessCPU = append(r.res.ResolveProcessCPU, t1.cpu)
		r.res.DialFloor = append(r.res.DialFloor, t2.wall)
		r.res.DialFloorCPU = append(r.res.DialFloorCPU, t2.cpu)
	}
	return nil
}

// newProjectTimeout bounds the first answer in one new project.
const newProjectTimeout = 5 * time.Minute

// newProjectAnswers generates, one after the other, new projects the
// daemon has not seen, each of -new-project collections holding about
// -new-project-files files, in the work directory; and times a whole
// `amplidex query resolve NAME` process run inside each, from its start to
// its exit, NAME being a collection of that project. Before each, it waits
// for the daemon to settle, so that the work the previous project left
// does not count. The answer must name the project's collection, and the
// daemon must have registered the project afterwards (and not before): an
// answer from the command's own in-process scan, with no daemon reached,
// fails the measurement.
func (r *amplidexRun) newProjectAnswers(ctx context.Context, c *query.Client) error {
	cfg := r.h.cfg
	for k := range cfg.newProjects {
		dir := filepath.Join(r.h.work, "projects", fmt.Sprintf("new-%d", k+1))
		r.h.progress("amplidex: generating new project %d of %d: %d collections, about %d files, in %s",
			k+1, cfg.newProjects, cfg.newProject, cfg.newProjectFiles, dir)
		st, err := generateProject(dir, cfg.newProject, cfg.newProjectFiles, cfg.seed+uint64(k)+1)
		if err != nil {
			return err
		}
		if len(st.Probes) == 0 {
			return fmt.Errorf("new project %s has no defect-free collection to ask for", dir)
		}
		p := st.Probes[len(st.Probes)/2]
		if err := warmTree(st.Root); err != nil {
			return err
		}
		pid, err := r.settle(ctx, c, dir)
		if err != nil {
			return err
		}
		before, err := readCPU(pid)
		if err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, newProjectTimeout)
		wall, cpu, out, err := runTimed(pctx, r.env, dir, nil, r.bin, "query", "resolve", p.Name)
		cancel()
		after, cerr := readCPU(pid)
		if err == nil && !strings.Contains(string(out), p.Dir) {
			err = fmt.Errorf("query resolve %s in %s did not name %s:\n%s", p.Name, dir, p.Dir, out)
		}
		if err = cmp.Or(err, cerr); err != nil {
			return err
		}
		if known, err := known(ctx, c, dir); err != nil || !known {
			return cmp.Or(err, fmt.Errorf("new project %s: the daemon did not register it: the answer came from elsewhere", dir))
		}
		r.res.NewProject = append(r.res.NewProject, wall)
		r.res.NewProjects = append(r.res.NewProjects, newProject{Dir: dir, Collections: st.Collections, Files: st.Files, Name: p.Name,
			ClientCPUMS: ms(cpu), DaemonCPUMS: ms(after - before)})
		r.h.progress("amplidex: new project %d: %d files; first `query resolve %s` took %s (CPU: its own %s, the daemon's %s)",
			k+1, st.Files, p.Name, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), (after - before).Round(time.Millisecond))
	}
	return nil
}

// Settling: the daemon is taken to be idle once no project is being
// registered and its CPU time grows by less than settleCPU over
// settleWindow.
const (
	settleWindow  = 200 * time.Millisecond
	settleCPU     = 20 * time.Millisecond
	settleTimeout = 5 * time.Minute
)

// settle waits until the daemon is idle and checks that it does not know
// the project dir yet; it returns the daemon's pid.
func (r *amplidexRun) settle(ctx context.Context, c *query.Client, dir string) (int, error) {
	sctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for {
		st, err := statusOf(sctx, c)
		if err != nil {
			return 0, fmt.Errorf("settle: %w", err)
		}
		if slices.ContainsFunc(st.Projects, func(p query.ProjectStatus) bool { return p.Dir == dir }) {
			return 0, fmt.Errorf("new project %s: the daemon knew it before it was asked", dir)
		}
		var before, after time.Duration
		if len(st.Registering) == 0 {
			if before, err = readCPU(st.PID); err != nil {
				return 0, err
			}
		}
		if err := pause(sctx, settleWindow); err != nil {
			return 0, fmt.Errorf("settle: the daemon stayed busy: %w", err)
		}
		if len(st.Registering) > 0 {
			continue
		}
		if after, err = readCPU(st.PID); err != nil {
			return 0, err
		}
		if after-before < settleCPU {
			return st.PID, nil
		}
	}
}

// known reports whether the daemon behind c has registered dir or is
// registering it: a first resolve is answered before the registration
// ends, which goes on in the background.
func known(ctx context.Context, c *query.Client, dir string) (bool, error) {
	st, err := statusOf(ctx, c)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(st.Projects, func(p query.ProjectStatus) bool { return p.Dir == dir }) ||
		slices.ContainsFunc(st.Registering, func(r query.RegistrationProgress) bool { return r.Dir == dir }), nil
}

// sample is one timed process: its wall and CPU time.
type sample struct{ wall, cpu time.Duration }

// resolveName is the resolve method's name on the socket, for the dial
// floor's command line.
var resolveName = query.MethodResolve.Name()

// checkResolve checks that out, a resolve result in JSON, names p's
// collection.
func checkResolve(out []byte, p probe) error {
	var res query.ResolveResult
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("decode resolve %s: %w: %.200q", p.Name, err, out)
	}
	if !res.Found || res.Winner == nil || res.Winner.Dir != p.Dir {
		return fmt.Errorf("resolve %s did not name %s: %.200q", p.Name, p.Dir, out)
	}
	return nil
}

// socketQueries times resolve calls over one connection, without and with
// the wait for pending changes.
func (r *amplidexRun) socketQueries(ctx context.Context, c *query.Client) error {
	n := r.h.cfg.samples
	for _, noSync := range []bool{true, false} {
		for i := -10; i < n; i++ { // ten calls to warm up
			p := r.h.tree.probeAt(max(i, 0), n)
			cctx, cancel := context.WithTimeout(ctx, sampleTimeout)
			start := time.Now()
			res, _, err := query.Call(cctx, c, query.MethodResolve, query.NameParams{Common: query.Common{NoSync: noSync}, Name: p.Name})
			took := time.Since(start)
			cancel()
			if err != nil {
				return err
			}
			if !res.Found || res.Winner == nil || res.Winner.Dir != p.Dir {
				return fmt.Errorf("resolve %s: found %v in %+v, want %s", p.Name, res.Found, res.Winner, p.Dir)
			}
			switch {
			case i < 0:
			case noSync:
				r.res.SocketNoSync = append(r.res.SocketNoSync, took)
			default:
				r.res.SocketSync = append(r.res.SocketSync, took)
			}
		}
	}
	return nil
}

// hasProbe reports whether ds holds the unknown-key diagnostic for key.
func hasProbe(ds []diag.Diagnostic, key string) bool {
	for _, d := range ds {
		if d.Code == diag.CodeUnknownKey && strings.Contains(d.Message, key) {
			return true
		}
	}
	return false
}

// saveVisible times a save of an agent with a new defect until a
// diagnostics query (which waits for pending changes) reports it.
func (r *amplidexRun) saveVisible(ctx context.Context, c *query.Client) error {
	n := r.h.cfg.samples
	for i := -1; i < n; i++ {
		p := r.h.tree.probeAt(max(i, 0), n)
		key := fmt.Sprintf("bench_probe_visible_%d", i+1)
		if err := pause(ctx, r.h.cfg.gap); err != nil {
			return err
		}
		sctx, cancel := context.WithTimeout(ctx, sampleTimeout)
		start := time.Now()
		err := os.WriteFile(p.Agent, p.agentContent(key), 0o644)
		for err == nil {
			var res *query.DiagnosticsResult
			res, _, err = query.Call(sctx, c, query.MethodDiagnostics, query.DiagnosticsParams{Path: p.Agent})
			if err == nil && res != nil && hasProbe(res.Diagnostics, key) {
				break
			}
		}
		took := time.Since(start)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", p.Agent, err)
		}
		if i >= 0 {
			r.res.SaveVisible = append(r.res.SaveVisible, took)
		}
	}
	return nil
}

// saveNotify times a save of an agent with a new defect until the
// subscription following that file reports it: the debounce included.
func (r *amplidexRun) saveNotify(ctx context.Context, c *query.Client) error {
	n := r.h.cfg.samples
	var files []string
	seen := map[string]bool{}
	for i := range n {
		if p := r.h.tree.probeAt(i, n); !seen[p.Agent] {
			seen[p.Agent] = true
			files = append(files, p.Agent)
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := query.Subscribe(sctx, c, query.MethodSubscribe, query.SubscribeParams{Paths: files})
	if err != nil {
		return err
	}
	// The first sample is not counted: once it arrives, the subscription
	// is known to be following.
	for i := -1; i < n; i++ {
		p := r.h.tree.probeAt(max(i, 0), n)
		key := fmt.Sprintf("bench_probe_notify_%d", i+1)
		if err := pause(ctx, r.h.cfg.gap); err != nil {
			return err
		}
		timeout := time.NewTimer(sampleTimeout)
		start := time.Now()
		if err := os.WriteFile(p.Agent, p.agentContent(key), 0o644); err != nil {
			timeout.Stop()
			return err
		}
		err := waitNotification(ch, timeout.C, p.Agent, key)
		took := time.Since(start)
		timeout.Stop()
		if err != nil {
			return fmt.Errorf("%s: %w", p.Agent, err)
		}
		if i >= 0 {
			r.res.SaveNotify = append(r.res.SaveNotify, took)
		}
	}
	return nil
}

// waitNotification reads notifications until one reports key for path.
func waitNotification(ch <-chan query.Notification, timeout <-chan time.Time, path, key string) error {
	for {
		select {
		case n, ok := <-ch:
			if !ok {
				return fmt.Errorf("subscription ended")
			}
			if n.End {
				return fmt.Errorf("subscription ended: %v", n.Error)
			}
			var u query.Update
			if err := json.Unmarshal(n.Params, &u); err != nil {
				return fmt.Errorf("decode notification: %w", err)
			}
			for _, f := range u.Files {
				if f.Path == path && hasProbe(f.Diagnostics, key) {
					return nil
				}
			}
		case <-timeout:
			return fmt.Errorf("no notification within %s", sampleTimeout)
		}
	}
}

// childEnv is this process's environment with vars set and every other
// variable that would point a child at the user's own files removed.
func childEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := vars[k]; ok || k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "AMPLIDEX_") ||
			strings.HasPrefix(k, "AMPLIFIER_") || strings.HasPrefix(k, "WATCHMAN_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}
