package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// errWatchman is returned when watchman answers a command with an error.
var errWatchman = errors.New("watchman error")

// watchmanResult is what the harness measured of watchman.
type watchmanResult struct {
	Version      string
	Crawl        time.Duration // watch → a synced clock and an empty query answered
	PathQuery    timings       // whole `watchman -j` processes answering a path query
	Subscription timings       // write → subscription notification naming the file
	CrawlMemory  memory        // once the crawl is done
	Memory       memory        // after every loop
}

// findWatchman returns the watchman binary to use: the one named, else the
// one on PATH, installing the Debian package first when running as root.
// It returns "" when there is none and it cannot be installed.
func (h *harness) findWatchman(ctx context.Context) (string, error) {
	if h.cfg.watchman != "" {
		return h.cfg.watchman, nil
	}
	if p, err := exec.LookPath("watchman"); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		h.progress("watchman is not installed and this is not root: skipping it")
		return "", nil
	}
	h.progress("watchman is not installed; installing the Debian package (running as root): apt-get install -y watchman")
	for _, argv := range [][]string{{"apt-get", "update", "-qq"}, {"apt-get", "install", "-y", "-qq", "watchman"}} {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v: %w\n%s", argv, err, out)
		}
	}
	return exec.LookPath("watchman")
}

// watchmanRun measures one watchman server against one tree.
type watchmanRun struct {
	h    *harness
	bin  string
	env  []string
	dir  string // watchman's own files
	sock string
	root string
	res  watchmanResult
}

// measureWatchman starts a watchman server with its own state files,
// watches the tree's root and measures its crawl, path queries through
// `watchman -j`, subscription latency and memory.
func (h *harness) measureWatchman(ctx context.Context, bin string) (*watchmanResult, error) {
	dir := filepath.Join(h.work, "watchman")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("watchman: %w", err)
	}
	env := childEnv(map[string]string{"HOME": dir, "TMPDIR": dir})
	r := &watchmanRun{h: h, bin: bin, env: env, dir: dir, sock: filepath.Join(dir, "sock"), root: h.tree.Root}
	if err := r.run(ctx); err != nil {
		return nil, fmt.Errorf("watchman: %w", err)
	}
	return &r.res, nil
}

// cli returns the arguments that point a watchman client at this server.
func (r *watchmanRun) cli(args ...string) []string {
	return append([]string{r.bin, "--sockname=" + r.sock, "--no-spawn", "--no-local", "--no-pretty"}, args...)
}

func (r *watchmanRun) run(ctx context.Context) error {
	h := r.h
	d, err := startDaemon("watchman", r.env, r.dir, r.bin, "--foreground",
		"--sockname="+r.sock, "--statefile="+filepath.Join(r.dir, "state"),
		"--logfile="+filepath.Join(r.dir, "log"), "--pidfile="+filepath.Join(r.dir, "pid"))
	if err != nil {
		return err
	}
	defer d.stop(30 * time.Second)
	var c *watchmanConn
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	_, err = d.waitReady(wctx, readyInterval, func(context.Context) error {
		var err error
		c, err = dialWatchman(r.sock)
		return err
	})
	cancel()
	if err != nil {
		return err
	}
	defer c.close()
	v, err := c.call([]any{"version"})
	if err != nil {
		return err
	}
	r.res.Version, _ = v["version"].(string)
	p, err := c.call([]any{"get-pid"})
	if err != nil {
		return err
	}
	pid := d.pid()
	if f, ok := p["pid"].(float64); ok {
		pid = int(f)
	}

	h.progress("watchman %s: initial crawl", r.res.Version)
	if err := warmTree(r.root); err != nil {
		return err
	}
	start := time.Now()
	if _, err := c.call([]any{"watch", r.root}); err != nil {
		return err
	}
	if _, err := c.call([]any{"clock", r.root, map[string]any{"sync_timeout": 30 * 60 * 1000}}); err != nil {
		return err
	}
	if _, err := c.call([]any{"query", r.root, map[string]any{
		"expression": []any{"name", "amplidex-bench-nothing", "wholename"}, "fields": []string{"name"},
	}}); err != nil {
		return err
	}
	r.res.Crawl = time.Since(start)
	if r.res.CrawlMemory, err = readMemory(pid); err != nil {
		return err
	}
	h.progress("watchman: crawled in %s", r.res.Crawl.Round(time.Millisecond))

	if err := r.pathQueries(ctx); err != nil {
		return err
	}
	h.progress("watchman: path query, whole watchman -j process: %s", r.res.PathQuery)
	if err := r.subscription(ctx); err != nil {
		return err
	}
	h.progress("watchman: save → subscription: %s", r.res.Subscription)
	if r.res.Memory, err = readMemory(pid); err != nil {
		return err
	}
	h.progress("watchman: memory after the crawl %s; at the end %s", r.res.CrawlMemory, r.res.Memory)
	_, _ = c.call([]any{"shutdown-server"})
	return d.stop(30 * time.Second)
}

// pathQueries times whole `watchman -j` processes answering a query for
// one collection's pyproject.toml.
func (r *watchmanRun) pathQueries(ctx context.Context) error {
	n := r.h.processRuns()
	for i := -1; i < n; i++ {
		p := r.h.tree.probeAt(max(i, 0), n)
		rel, err := filepath.Rel(r.root, filepath.Join(p.Dir, "pyproject.toml"))
		if err != nil {
			return err
		}
		q, _ := json.Marshal([]any{"query", r.root, map[string]any{
			"expression": []any{"name", rel, "wholename"}, "fields": []string{"name"},
		}})
		took, _, out, err := runTimed(ctx, r.env, r.dir, q, r.cli("-j")...)
		if err != nil {
			return err
		}
		var res struct {
			Files []string `json:"files"`
		}
		if err := json.Unmarshal(out, &res); err != nil || !slices.Equal(res.Files, []string{rel}) {
			return fmt.Errorf("watchman -j query for %s answered %s", rel, out)
		}
		if i >= 0 {
			r.res.PathQuery = append(r.res.PathQuery, took)
		}
	}
	return nil
}

// subscription times a write of a probe agent until watchman's subscription
// names the file.
func (r *watchmanRun) subscription(ctx context.Context) error {
	n := r.h.cfg.samples
	var names []string
	for i := range n {
		names = append(names, r.h.tree.probeAt(i, n).Rel)
	}
	c, err := dialWatchman(r.sock)
	if err != nil {
		return err
	}
	defer c.close()
	clock, err := c.call([]any{"clock", r.root, map[string]any{"sync_timeout": 60000}})
	if err != nil {
		return err
	}
	if _, err := c.call([]any{"subscribe", r.root, "amplidex-bench", map[string]any{
		"expression": []any{"name", names, "wholename"}, "fields": []string{"name"},
		"since": clock["clock"], "empty_on_fresh_instance": true,
	}}); err != nil {
		return err
	}
	for i := -1; i < n; i++ {
		p := r.h.tree.probeAt(max(i, 0), n)
		key := fmt.Sprintf("bench_probe_watchman_%d", i+1)
		if err := pause(ctx, r.h.cfg.gap); err != nil {
			return err
		}
		if err := c.nc.SetReadDeadline(time.Now().Add(sampleTimeout)); err != nil {
			return err
		}
		start := time.Now()
		if err := os.WriteFile(p.Agent, p.agentContent(key), 0o644); err != nil {
			return err
		}
		err := c.waitSubscription("amplidex-bench", p.Rel)
		took := time.Since(start)
		if err != nil {
			return fmt.Errorf("subscription for %s: %w", p.Rel, err)
		}
		if i >= 0 {
			r.res.Subscription = append(r.res.Subscription, took)
		}
	}
	return nil
}

// watchmanConn speaks watchman's JSON protocol on its socket: one JSON
// value per line each way. Answers to commands and unilateral
// notifications (subscriptions, logs) arrive on the same connection.
type watchmanConn struct {
	nc net.Conn
	r  *bufio.Reader
	// pending are unilateral PDUs read while waiting for an answer.
	pending []map[string]any
}

func dialWatchman(sock string) (*watchmanConn, error) {
	nc, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial watchman %s: %w", sock, err)
	}
	return &watchmanConn{nc: nc, r: bufio.NewReaderSize(nc, 1<<20)}, nil
}

func (c *watchmanConn) close() { c.nc.Close() }

// read reads one PDU.
func (c *watchmanConn) read() (map[string]any, error) {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("read from watchman: %w", err)
	}
	var pdu map[string]any
	if err := json.Unmarshal(line, &pdu); err != nil {
		return nil, fmt.Errorf("decode watchman answer %.200q: %w", line, err)
	}
	return pdu, nil
}

// call sends cmd and returns its answer, keeping unilateral PDUs read
// meanwhile for waitSubscription.
func (c *watchmanConn) call(cmd []any) (map[string]any, error) {
	line, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	if err := c.nc.SetDeadline(time.Now().Add(30 * time.Minute)); err != nil {
		return nil, err
	}
	if _, err := c.nc.Write(append(line, '\n')); err != nil {
		return nil, fmt.Errorf("write to watchman: %w", err)
	}
	for {
		pdu, err := c.read()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmd[0], err)
		}
		if pdu["unilateral"] == true || pdu["log"] != nil || pdu["subscription"] != nil && pdu["subscribe"] == nil {
			c.pending = append(c.pending, pdu)
			continue
		}
		if e, ok := pdu["error"]; ok {
			return nil, fmt.Errorf("%s: %w: %v", cmd[0], errWatchman, e)
		}
		return pdu, nil
	}
}

// waitSubscription reads PDUs until a notification of subscription name
// lists file.
func (c *watchmanConn) waitSubscription(name, file string) error {
	for {
		var pdu map[string]any
		if len(c.pending) > 0 {
			pdu, c.pending = c.pending[0], c.pending[1:]
		} else {
			var err error
			if pdu, err = c.read(); err != nil {
				return err
			}
		}
		if pdu["subscription"] != name {
			continue
		}
		files, _ := pdu["files"].([]any)
		for _, f := range files {
			if f == file {
				return nil
			}
		}
	}
}
