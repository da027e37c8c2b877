package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/amplidex/amplidex/query"
)

// readyInterval is how often a starting daemon is asked whether it is
// ready; it bounds the error of the start-up timings.
const readyInterval = 2 * time.Millisecond

// sampleTimeout bounds one latency sample.
const sampleTimeout = 10 * time.Second

// amplidexResult is what the harness measured of amplidex.
type amplidexResult struct {
	Initial         time.Duration // cold start to the first status answer
	InitialFiles    int           // files in the index after the cold start
	InitialAnalyzed int           // files read and parsed by the cold start
	Collections     int           // collections the user root holds
	Restart         time.Duration // restart, nothing changed, to the first status answer
	RestartAnalyzed int           // files read again by the restart
	ResolveProcess  timings       // whole `amplidex query resolve NAME` processes
	SocketNoSync    timings       // resolve over the socket, no_sync
	SocketSync      timings       // resolve over the socket, read-your-writes
	SaveVisible     timings       // write → diagnostics answer shows the defect
	SaveNotify      timings       // write → subscription notification with the defect
	ColdMemory      memory        // of the cold-started daemon once ready
	Memory          memory        // of the restarted daemon after every loop
}

// daemonStatus is the part of the daemon's "status" answer the harness
// reads.
type daemonStatus struct {
	PID      int `json:"pid"`
	Files    int `json:"files"`
	Analyzed int `json:"analyzed"`
	Roots    []struct {
		Path        string `json:"path"`
		Kind        string `json:"kind"`
		Collections int    `json:"collections"`
	} `json:"roots"`
	Warnings []string `json:"warnings"`
	// Scanning is set while the first scan runs (the socket answers
	// before it ends).
	Scanning bool `json:"scanning"`
}

// amplidexRun measures one amplidex binary against one tree.
type amplidexRun struct {
	h     *harness
	bin   string
	env   []string
	cwd   string // a directory outside any project
	paths query.Paths
	res   amplidexResult
}

// measureAmplidex runs every amplidex measurement in order: a cold start
// on an empty index, a restart with nothing changed, then the query and
// save loops against the restarted daemon.
func (h *harness) measureAmplidex(ctx context.Context, bin string) (*amplidexResult, error) {
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
	r := &amplidexRun{h: h, bin: bin, env: childEnv(vars), cwd: cwd, paths: paths}
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	return &r.res, nil
}

func (r *amplidexRun) run(ctx context.Context) error {
	h := r.h
	h.progress("amplidex: cold start on an empty index")
	d, took, st, err := r.start(ctx)
	if err != nil {
		return err
	}
	r.res.Initial, r.res.InitialFiles, r.res.InitialAnalyzed = took, st.Files, st.Analyzed
	for _, root := range st.Roots {
		if root.Kind == "user" {
			r.res.Collections = root.Collections
		}
	}
	// The pid the daemon reports, not the child's: -amplidex may name a
	// wrapper (a profiler, say) that runs the daemon.
	if r.res.ColdMemory, err = readMemory(st.PID); err != nil {
		d.stop(30 * time.Second)
		return err
	}
	h.progress("amplidex: indexed %d files of %d collections in %s (%d analyzed)", st.Files, r.res.Collections, took.Round(time.Millisecond), st.Analyzed)
	if err := d.stop(30 * time.Second); err != nil {
		return err
	}

	h.progress("amplidex: restart with nothing changed")
	d, took, st, err = r.start(ctx)
	if err != nil {
		return err
	}
	defer d.stop(30 * time.Second)
	r.res.Restart = took
	_, out, err := runTimed(ctx, r.env, r.cwd, nil, r.bin, "status", "--json")
	if err != nil {
		return fmt.Errorf("amplidex status: %w", err)
	}
	var st2 daemonStatus
	if err := json.Unmarshal(out, &st2); err != nil {
		return fmt.Errorf("amplidex status --json: %w", err)
	}
	r.res.RestartAnalyzed = st2.Analyzed
	h.progress("amplidex: restarted in %s, %d files read again", took.Round(time.Millisecond), st2.Analyzed)

	c, err := query.Dial(ctx, r.paths.Socket)
	if err != nil {
		return fmt.Errorf("amplidex: %w", err)
	}
	defer c.Close()
	type loop struct {
		what string
		ts   *timings
	}
	steps := []struct {
		what  string
		fn    func(context.Context, *query.Client) error
		loops []loop
	}{
		{"query resolve", r.resolveProcess, []loop{{"query resolve, whole process", &r.res.ResolveProcess}}},
		{"socket resolve", r.socketQueries, []loop{{"socket resolve, no_sync", &r.res.SocketNoSync}, {"socket resolve, synced", &r.res.SocketSync}}},
		{"save → diagnostics query", r.saveVisible, []loop{{"save → diagnostics query", &r.res.SaveVisible}}},
		{"save → subscription", r.saveNotify, []loop{{"save → subscription", &r.res.SaveNotify}}},
	}
	for _, s := range steps {
		if err := s.fn(ctx, c); err != nil {
			return fmt.Errorf("amplidex: %s: %w", s.what, err)
		}
		for _, l := range s.loops {
			h.progress("amplidex: %s: %s", l.what, l.ts)
		}
	}
	if r.res.Memory, err = readMemory(st.PID); err != nil {
		return err
	}
	h.progress("amplidex: memory once cold-started %s; at the end %s", r.res.ColdMemory, r.res.Memory)
	return d.stop(30 * time.Second)
}

// start starts a daemon and waits until its status says the first scan is
// done, returning the time that took.
func (r *amplidexRun) start(ctx context.Context) (*daemonProc, time.Duration, *daemonStatus, error) {
	if err := warmTree(r.h.tree.Root); err != nil {
		return nil, 0, nil, err
	}
	began := time.Now()
	d, err := startDaemon("amplidex daemon", r.env, r.cwd, r.bin, "daemon", "--log-level", "warn")
	if err != nil {
		return nil, 0, nil, err
	}
	var st daemonStatus
	wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	ready, err := d.waitReady(wctx, readyInterval, func(ctx context.Context) error {
		st = daemonStatus{}
		if err := r.status(ctx, &st); err != nil {
			return err
		}
		if st.Scanning {
			return errors.New("the first scan runs")
		}
		return nil
	})
	if err != nil {
		d.stop(30 * time.Second)
		return nil, 0, nil, err
	}
	return d, ready.Sub(began), &st, nil
}

// status asks the daemon for its status over a new connection.
func (r *amplidexRun) status(ctx context.Context, st *daemonStatus) error {
	c, err := query.Dial(ctx, r.paths.Socket)
	if err != nil {
		return err
	}
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = c.Call(cctx, "status", nil, st)
	return err
}

// resolveProcess times whole `amplidex query resolve NAME` processes.
func (r *amplidexRun) resolveProcess(ctx context.Context, _ *query.Client) error {
	n := r.h.processRuns()
	for i := -1; i < n; i++ { // the first run warms the page cache
		p := r.h.tree.probeAt(max(i, 0), n)
		took, out, err := runTimed(ctx, r.env, r.cwd, nil, r.bin, "query", "resolve", p.Name)
		if err != nil {
			return err
		}
		if !strings.Contains(string(out), p.Dir) {
			return fmt.Errorf("query resolve %s did not name %s:\n%s", p.Name, p.Dir, out)
		}
		if i >= 0 {
			r.res.ResolveProcess = append(r.res.ResolveProcess, took)
		}
	}
	return nil
}

// socketQueries times resolve calls over one connection, without and with
// the wait for pending changes.
func (r *amplidexRun) socketQueries(ctx context.Context, c *query.Client) error {
	n := r.h.cfg.samples
	type params struct {
		Name   string `json:"name"`
		NoSync bool   `json:"no_sync,omitempty"`
	}
	for _, noSync := range []bool{true, false} {
		for i := -10; i < n; i++ { // ten calls to warm up
			p := r.h.tree.probeAt(max(i, 0), n)
			var res struct {
				Found  bool `json:"found"`
				Winner struct {
					Dir string `json:"dir"`
				} `json:"winner"`
			}
			cctx, cancel := context.WithTimeout(ctx, sampleTimeout)
			start := time.Now()
			_, err := c.Call(cctx, "resolve", params{Name: p.Name, NoSync: noSync}, &res)
			took := time.Since(start)
			cancel()
			if err != nil {
				return err
			}
			if !res.Found || res.Winner.Dir != p.Dir {
				return fmt.Errorf("resolve %s: found %v in %q, want %s", p.Name, res.Found, res.Winner.Dir, p.Dir)
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
func hasProbe(ds []diagnostic, key string) bool {
	for _, d := range ds {
		if d.Code == "schema/unknown-key" && strings.Contains(d.Message, key) {
			return true
		}
	}
	return false
}

// diagnostic is the part of a diagnostic the harness reads.
type diagnostic struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
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
			var res struct {
				Diagnostics []diagnostic `json:"diagnostics"`
			}
			if _, err = c.Call(sctx, "diagnostics", map[string]string{"path": p.Agent}, &res); err == nil && hasProbe(res.Diagnostics, key) {
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
	ch, err := c.Subscribe(sctx, "subscribe", map[string]any{"paths": files})
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
			var u struct {
				Files []struct {
					Path        string       `json:"path"`
					Diagnostics []diagnostic `json:"diagnostics"`
				} `json:"files"`
			}
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
