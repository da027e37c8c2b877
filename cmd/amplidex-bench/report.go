package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"
)

// report is the result of one run, printed as a table and written as JSON.
type report struct {
	Date     string      `json:"date"`
	Machine  machine     `json:"machine"`
	Seed     uint64      `json:"seed"`
	Samples  int         `json:"samples"`
	GapMS    float64     `json:"gap_ms"` // pause before each save
	Tree     *treeStats  `json:"tree"`
	Amplidex amplidexRef `json:"amplidex"`
	Watchman string      `json:"watchman"` // the version, or "" when skipped
	Metrics  []metric    `json:"metrics"`
	// Memory breaks the daemons' resident sets down, at the points
	// measured: "amplidex_cold" once the cold start is ready, "amplidex"
	// at the end of its run, "watchman_crawl" and "watchman" likewise.
	Memory map[string]memory `json:"memory"`
}

// amplidexRef says what was measured of amplidex besides the metrics.
type amplidexRef struct {
	Binary       string `json:"binary"`
	Revision     string `json:"revision,omitempty"` // the commit it was built from
	Collections  int    `json:"collections"`        // collections the daemon found in the user root
	FilesIndexed int    `json:"files_indexed"`      // files in its index after the cold start
	Analyzed     int    `json:"analyzed"`           // files the cold start read and parsed
}

// machine describes where the run happened.
type machine struct {
	CPUs      int    `json:"cpus"`
	CPU       string `json:"cpu"`
	Memory    string `json:"memory"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go"`
	// Load is /proc/loadavg when the run began and when it ended: other
	// work on the machine skews the figures.
	LoadStart string `json:"load_start"`
	LoadEnd   string `json:"load_end"`
}

// metric is one row of the table. Values are nil where not measured.
type metric struct {
	Name     string   `json:"name"`
	Label    string   `json:"label"`
	Unit     string   `json:"unit"`
	Amplidex *float64 `json:"amplidex"`
	Watchman *float64 `json:"watchman"`
	// Ratio is Amplidex / Watchman.
	Ratio  *float64 `json:"ratio"`
	Target string   `json:"target"`
	// Met says whether the target is met; nil when it cannot be judged.
	Met *bool `json:"met"`
}

// metricNames are the names of every metric, in table order.
var metricNames = []string{
	"initial_index", "restart", "restart_files_read", "query_resolve_process",
	"socket_resolve_nosync_p50", "socket_resolve_nosync_p99",
	"socket_resolve_sync_p50", "socket_resolve_sync_p99",
	"save_visible_p50", "save_visible_p99", "save_notify_p50", "save_notify_p99",
	"rss", "peak_rss",
}

// target judges a metric.
type target struct {
	text string
	// ratio, when positive, is the largest allowed amplidex/watchman ratio.
	ratio float64
	// below, when ratio is zero, is the bound amplidex must stay under
	// (or, with orEqual, reach at most).
	below   float64
	orEqual bool
	none    bool
}

func ratioAtMost(r float64, text string) target { return target{text: text, ratio: r} }
func under(v float64, text string) target       { return target{text: text, below: v} }
func atMost(v float64, text string) target      { return target{text: text, below: v, orEqual: true} }

var noTarget = target{text: "-", none: true}

// newMetric builds a row from the values measured, judging the target.
func newMetric(name, label, unit string, a, w *float64, t target) metric {
	m := metric{Name: name, Label: label, Unit: unit, Amplidex: a, Watchman: w, Target: t.text}
	if a != nil && w != nil && *w > 0 {
		m.Ratio = ptr(*a / *w)
	}
	switch {
	case t.none || a == nil:
	case t.ratio > 0:
		if m.Ratio != nil {
			m.Met = ptr(*m.Ratio <= t.ratio)
		}
	case t.orEqual:
		m.Met = ptr(*a <= t.below)
	default:
		m.Met = ptr(*a < t.below)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

// msOf is a duration in milliseconds, nil for no samples.
func msOf(d time.Duration, ok bool) *float64 {
	if !ok {
		return nil
	}
	return ptr(ms(d))
}

// quantileOf is the q-quantile of ts in milliseconds, nil for none.
func quantileOf(ts timings, q float64) *float64 {
	return msOf(ts.quantile(q), len(ts) > 0)
}

func mib(b int64) *float64 { return ptr(float64(b) / (1 << 20)) }

// metrics turns the measurements into the rows of the table.
func metrics(a *amplidexResult, w *watchmanResult) []metric {
	var (
		crawl, pathQuery, subP50, subP99, wRSS, wPeak *float64
	)
	if w != nil {
		crawl = ptr(ms(w.Crawl))
		pathQuery = quantileOf(w.PathQuery, 0.5)
		subP50, subP99 = quantileOf(w.Subscription, 0.5), quantileOf(w.Subscription, 0.99)
		wRSS, wPeak = mib(w.Memory.RSS), mib(max(w.Memory.Peak, w.CrawlMemory.Peak))
	}
	return []metric{
		newMetric("initial_index", "initial index, cold (vs crawl)", "ms", ptr(ms(a.Initial)), crawl, ratioAtMost(0.5, "≤ ½ watchman")),
		newMetric("restart", "restart, nothing changed (vs crawl)", "ms", ptr(ms(a.Restart)), crawl, ratioAtMost(0.25, "≤ ¼ watchman")),
		newMetric("restart_files_read", "files re-read on restart", "files", ptr(float64(a.RestartAnalyzed)), nil, atMost(0, "0")),
		newMetric("query_resolve_process", "query resolve, whole process (vs -j), median", "ms", quantileOf(a.ResolveProcess, 0.5), pathQuery, ratioAtMost(0.25, "≤ ¼ watchman")),
		newMetric("socket_resolve_nosync_p50", "socket resolve, no_sync, p50", "ms", quantileOf(a.SocketNoSync, 0.5), nil, noTarget),
		newMetric("socket_resolve_nosync_p99", "socket resolve, no_sync, p99", "ms", quantileOf(a.SocketNoSync, 0.99), nil, under(1, "< 1 ms")),
		newMetric("socket_resolve_sync_p50", "socket resolve, synced, p50", "ms", quantileOf(a.SocketSync, 0.5), nil, noTarget),
		newMetric("socket_resolve_sync_p99", "socket resolve, synced, p99", "ms", quantileOf(a.SocketSync, 0.99), nil, under(1, "< 1 ms")),
		newMetric("save_visible_p50", "save → diagnostics query, p50 (vs subscription)", "ms", quantileOf(a.SaveVisible, 0.5), subP50, under(50, "< 50 ms")),
		newMetric("save_visible_p99", "save → diagnostics query, p99 (vs subscription)", "ms", quantileOf(a.SaveVisible, 0.99), subP99, under(150, "< 150 ms")),
		newMetric("save_notify_p50", "save → subscription, p50", "ms", quantileOf(a.SaveNotify, 0.5), subP50, under(50, "< 50 ms")),
		newMetric("save_notify_p99", "save → subscription, p99", "ms", quantileOf(a.SaveNotify, 0.99), subP99, under(150, "< 150 ms")),
		newMetric("rss", "daemon RSS, end of run", "MiB", mib(a.Memory.RSS), wRSS, ratioAtMost(0.5, "≤ ½ watchman")),
		newMetric("peak_rss", "daemon peak RSS (VmHWM)", "MiB", mib(max(a.Memory.Peak, a.ColdMemory.Peak)), wPeak, noTarget),
	}
}

// writeTable prints the report as an aligned table.
func (r *report) writeTable(out io.Writer) error {
	fmt.Fprintf(out, "amplidex-bench %s: %d collections, %d files, %d dirs (seed %d, %d samples)\n",
		r.Date, r.Tree.Collections, r.Tree.Files, r.Tree.Dirs, r.Seed, r.Samples)
	fmt.Fprintf(out, "machine: %d CPUs (%s), %s memory, Linux %s, %s; load %s at the start, %s at the end\n",
		r.Machine.CPUs, r.Machine.CPU, r.Machine.Memory, r.Machine.Kernel, r.Machine.GoVersion, r.Machine.LoadStart, r.Machine.LoadEnd)
	wm := "watchman " + r.Watchman
	if r.Watchman == "" {
		wm = "watchman (skipped)"
	}
	fmt.Fprintf(out, "amplidex: %d collections, %d files indexed; %s\n\n", r.Amplidex.Collections, r.Amplidex.FilesIndexed, wm)
	rows := [][]string{{"metric", "amplidex", "watchman", "ratio", "target", "met?"}}
	for _, m := range r.Metrics {
		met := "-"
		if m.Met != nil {
			met = map[bool]string{true: "yes", false: "NO"}[*m.Met]
		}
		rows = append(rows, []string{m.Label, value(m.Amplidex, m.Unit), value(m.Watchman, m.Unit), ratioText(m.Ratio), m.Target, met})
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	w := bufio.NewWriter(out)
	for _, row := range rows {
		for i, cell := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			switch {
			case i == 0:
				w.WriteString(cell + pad)
			default:
				w.WriteString(" | " + pad + cell)
			}
		}
		w.WriteString("\n")
	}
	return w.Flush()
}

// value formats a measured value with its unit, "-" when absent.
func value(v *float64, unit string) string {
	switch {
	case v == nil:
		return "-"
	case unit == "files":
		return fmt.Sprintf("%.0f", *v)
	case unit == "ms" && *v < 10:
		return fmt.Sprintf("%.3f ms", *v)
	default:
		return fmt.Sprintf("%.1f %s", *v, unit)
	}
}

func ratioText(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *r)
}

// writeJSON writes the report to path.
func (r *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// describeMachine reads the CPU, memory, kernel and load from /proc; load
// is the load average when the run began.
func describeMachine(load string) machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadStart: load, LoadEnd: loadAverage()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.CPU = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int64
		if _, err := fmt.Sscanf(kb, "%d kB", &n); err == nil {
			m.Memory = fmt.Sprintf("%.1f GiB", float64(n)/(1<<20))
		}
	}
	return m
}

// procField returns the value of the first "key: value" line of file.
func procField(file, key string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
