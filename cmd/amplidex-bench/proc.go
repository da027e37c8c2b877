package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// errExited is returned when a daemon under test exits before it is ready.
var errExited = errors.New("process exited")

// daemonProc is a long-running child process: a daemon under test. A
// single goroutine waits for it; stop ends the process and that goroutine.
type daemonProc struct {
	name string
	cmd  *exec.Cmd
	out  *tailBuffer
	// exited is closed when the process has exited; err then holds how.
	exited chan struct{}
	err    error
	wg     sync.WaitGroup
}

// startDaemon starts argv with env, its output kept in a bounded buffer.
func startDaemon(name string, env []string, dir string, argv ...string) (*daemonProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	out := &tailBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = ownGroup()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &daemonProc{name: name, cmd: cmd, out: out, exited: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pid is the process id of the daemon.
func (p *daemonProc) pid() int { return p.cmd.Process.Pid }

// failed describes a daemon that exited early, with the tail of its output.
func (p *daemonProc) failed() error {
	return fmt.Errorf("%s: %w (%v); its last output:\n%s", p.name, errExited, p.err, p.out.String())
}

// stop sends SIGTERM, waits up to grace, then kills the process, and waits
// for the goroutine that reaped it.
func (p *daemonProc) stop(grace time.Duration) error {
	defer p.wg.Wait()
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("stop %s: did not exit within %s of SIGTERM; killed", p.name, grace)
	}
}

// waitReady calls ready every interval until it succeeds, the process
// exits, or ctx ends. It returns when ready first succeeded.
func (p *daemonProc) waitReady(ctx context.Context, interval time.Duration, ready func(context.Context) error) (time.Time, error) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last error
	for {
		if last = ready(ctx); last == nil {
			return time.Now(), nil
		}
		select {
		case <-p.exited:
			return time.Time{}, p.failed()
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("wait for %s: %w (last: %v)", p.name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	mu  sync.Mutex // guards fields below
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = slices.Delete(b.buf, 0, over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// memory is a process's resident set, from /proc/PID/status, in bytes.
type memory struct {
	RSS   int64 `json:"rss"`       // VmRSS: RssAnon + RssFile + RssShmem
	Peak  int64 `json:"peak"`      // VmHWM
	Anon  int64 `json:"anonymous"` // RssAnon: private memory (the heap, stacks)
	File  int64 `json:"file"`      // RssFile: mapped files, such as an mmapped index
	Shmem int64 `json:"shmem"`     // RssShmem: shared memory
}

// String shows m in MiB.
func (m memory) String() string {
	return fmt.Sprintf("RSS %.1f MiB (RssAnon %.1f, RssFile %.1f, RssShmem %.1f), peak %.1f MiB",
		float64(m.RSS)/(1<<20), float64(m.Anon)/(1<<20), float64(m.File)/(1<<20), float64(m.Shmem)/(1<<20), float64(m.Peak)/(1<<20))
}

// readMemory reads the resident set size of pid.
func readMemory(pid int) (memory, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return memory{}, fmt.Errorf("read memory of %d: %w", pid, err)
	}
	defer f.Close()
	return parseMemory(f)
}

// parseMemory reads VmRSS, VmHWM, RssAnon, RssFile and RssShmem from the
// text of /proc/PID/status.
func parseMemory(r io.Reader) (memory, error) {
	var m memory
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		var field *int64
		switch key {
		case "VmRSS":
			field = &m.RSS
		case "VmHWM":
			field = &m.Peak
		case "RssAnon":
			field = &m.Anon
		case "RssFile":
			field = &m.File
		case "RssShmem":
			field = &m.Shmem
		}
		if !ok || field == nil {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return memory{}, fmt.Errorf("parse memory: unexpected %s line %q", key, sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("parse memory: %s: %w", key, err)
		}
		*field = kb << 10
	}
	if err := sc.Err(); err != nil {
		return memory{}, fmt.Errorf("parse memory: %w", err)
	}
	if m.RSS == 0 {
		return memory{}, errors.New("parse memory: no VmRSS line")
	}
	return m, nil
}

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, which
// is 100 on every Linux architecture Go runs on.
const userHZ = 100

// readCPU reads the CPU time (user and system) pid has used so far.
func readCPU(pid int) (time.Duration, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read CPU time of %d: %w", pid, err)
	}
	cpu, err := parseStatCPU(string(b))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return cpu, nil
}

// parseStatCPU returns utime + stime from the text of /proc/PID/stat.
// The command name, in parentheses, may hold spaces and parentheses: the
// fields are counted from the last closing one.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("parse stat: no command name in parentheses")
	}
	// After the name: state (field 3) ... utime (14), stime (15).
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("parse stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse stat: CPU time: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// runTimed runs argv to completion with stdin and returns its wall time,
// the CPU time it used (user and system, its children included) and its
// standard output. A non-zero exit is an error naming the command.
func runTimed(ctx context.Context, env []string, dir string, stdin []byte, argv ...string) (wall, cpu time.Duration, out []byte, err error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	if err != nil {
		return wall, 0, nil, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return wall, cpu, stdout.Bytes(), nil
}

// timings are the durations of repeated measurements.
type timings []time.Duration

// quantile returns the q-quantile (0 < q ≤ 1) by the nearest-rank method;
// zero for no samples.
func (ts timings) quantile(q float64) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	rank := int(math.Ceil(q*float64(len(s)) - 1e-9))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// String summarizes ts as min/p50/p99/max in milliseconds.
func (ts timings) String() string {
	if len(ts) == 0 {
		return "no samples"
	}
	return fmt.Sprintf("%d samples, min %.3f, p50 %.3f, p99 %.3f, max %.3f ms",
		len(ts), ms(ts.quantile(0)), ms(ts.quantile(0.5)), ms(ts.quantile(0.99)), ms(ts.quantile(1)))
}

// millis is ts in milliseconds.
func (ts timings) millis() []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = ms(t)
	}
	return out
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
