package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
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
	Floor    floorRef    `json:"floor"`
	Watchman string      `json:"watchman"` // the version, or "" when skipped
	Metrics  []metric    `json:"metrics"`
	// Loops summarizes every timed loop, the ones without a row too.
	Loops map[string]loopStats `json:"loops"`
	// Memory breaks the daemons' resident sets down, at the points
	// measured: "amplidex_cold" once the cold start is ready, "amplidex"
	// at the end of its run, "amplidex_quiet" -quiet after,
	// "watchman_crawl" and "watchman" likewise.
	Memory map[string]memory `json:"memory"`
	// NewProject is the first answer in new projects; nil when not
	// measured.
	NewProject *newProjectRef `json:"new_project,omitempty"`
}

// newProjectRef is the first answer in each new project: a whole `amplidex
// query resolve NAME` process run inside a project the daemon had not seen.
type newProjectRef struct {
	MedianMS float64      `json:"median_ms"`
	MaxMS    float64      `json:"max_ms"`
	RunsMS   []float64    `json:"runs_ms"` // one for each project, in order
	Projects []newProject `json:"projects"`
}

// newProjectOf summarizes the first answers in new projects; nil for none.
func newProjectOf(a *amplidexResult) *newProjectRef {
	if len(a.NewProject) == 0 {
		return nil
	}
	return &newProjectRef{MedianMS: ms(a.NewProject.quantile(0.5)), MaxMS: ms(a.NewProject.quantile(1)),
		RunsMS: a.NewProject.millis(), Projects: a.NewProjects}
}

// amplidexRef says what was measured of amplidex besides the metrics.
type amplidexRef struct {
	Binary       string `json:"binary"`
	Revision     string `json:"revision,omitempty"` // the commit it was built from
	Collections  int    `json:"collections"`        // collections the daemon found in the user root
	FilesIndexed int    `json:"files_indexed"`      // files in its index after the cold start
	Analyzed     int    `json:"analyzed"`           // files the cold start read and parsed
	// FirstAnswerMS is the time from the restarted daemon's process start
	// to its first answer to a no_sync resolve; FirstAnswerFound says
	// whether that answer named the collection; FirstAnswerScan is what a
	// status asked right after said of the scan: its "scanning" and
	// "progress" fields, or "n/a" when it has none.
	FirstAnswerMS    float64 `json:"first_answer_ms"`
	FirstAnswerFound bool    `json:"first_answer_found"`
	FirstAnswerScan  string  `json:"first_answer_scan"`
}

// floorRef describes the floor walk.
type floorRef struct {
	WalkMS  float64   `json:"walk_ms"` // the median run
	Runs    []float64 `json:"runs_ms"`
	Files   int       `json:"files"`
	Dirs    int       `json:"dirs"`    // directories watched
	Watcher string    `json:"watcher"` // what the watches were added with
}

// loopStats summarizes one timed loop, in milliseconds.
type loopStats struct {
	Samples int     `json:"samples"`
	Min     float64 `json:"min_ms"`
	P50     float64 `json:"p50_ms"`
	P99     float64 `json:"p99_ms"`
	Max     float64 `json:"max_ms"`
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
	// Against names what Reference measured: "watchman", "floor" (the
	// floor walk) or "dial floor"; "" for a row without one.
	Against   string   `json:"against,omitempty"`
	Reference *float64 `json:"reference"`
	// Ratio is Amplidex / Reference.
	Ratio  *float64 `json:"ratio"`
	Target string   `json:"target"`
	// Met says whether the target is met; nil when it cannot be judged.
	Met *bool `json:"met"`
}

// metricNames are the names of every metric, in table order: the targets
// of the product contract this harness measures, then the memory figures
// that explain the private-memory rows.
var metricNames = []string{
	"initial_index", "restart", "restart_files_read", "restart_first_answer",
	"query_resolve_process", "query_resolve_process_cpu", "socket_query_p99",
	"save_notify_p50", "save_notify_p99", "save_visible_p50", "new_project_first_answer",
	"rss_anon_cold", "rss_anon", "rss_anon_quiet", "rss_file", "rss_anon_per_file",
}

// target judges a metric.
type target struct {
	text string
	// ratio, when positive, is the largest allowed amplidex/reference
	// ratio.
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

// reference is what a row compares amplidex with.
type reference struct {
	name  string
	value *float64
}

// against returns a reference; none when v is nil.
func against(name string, v *float64) reference {
	if v == nil {
		return reference{}
	}
	return reference{name, v}
}

// newMetric builds a row from the values measured, judging the target.
func newMetric(name, label, unit string, a *float64, ref reference, t target) metric {
	m := metric{Name: name, Label: label, Unit: unit, Amplidex: a, Against: ref.name, Reference: ref.value, Target: t.text}
	if a != nil && ref.value != nil && *ref.value > 0 {
		m.Ratio = ptr(*a / *ref.value)
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

// quantileOf is the q-quantile of ts in milliseconds, nil for none.
func quantileOf(ts timings, q float64) *float64 {
	if len(ts) == 0 {
		return nil
	}
	return ptr(ms(ts.quantile(q)))
}

func mib(b int64) *float64 { return ptr(float64(b) / (1 << 20)) }

// onlyQueryMetrics are the metrics a run with -only query measures: the
// cold start's, and the whole-process query's.
var onlyQueryMetrics = []string{"initial_index", "query_resolve_process", "query_resolve_process_cpu", "rss_anon_cold"}

// metrics turns the measurements into the rows of the table: every row,
// or with only set (the -only flag), the rows that run measured.
func metrics(a *amplidexResult, f *floorResult, w *watchmanResult, only string) []metric {
	all := allMetrics(a, f, w)
	if only != onlyQuery {
		return all
	}
	return slices.DeleteFunc(all, func(m metric) bool { return !slices.Contains(onlyQueryMetrics, m.Name) })
}

// allMetrics is every row of the table.
func allMetrics(a *amplidexResult, f *floorResult, w *watchmanResult) []metric {
	var crawl, subP50, subP99, wRSSCrawl, wRSS, wFile, wPerFile *float64
	if w != nil {
		crawl = ptr(ms(w.Crawl))
		subP50, subP99 = quantileOf(w.Subscription, 0.5), quantileOf(w.Subscription, 0.99)
		wRSSCrawl, wRSS, wFile = mib(w.CrawlMemory.RSS), mib(w.Memory.RSS), mib(w.Memory.File)
		if f.Files > 0 {
			wPerFile = ptr(float64(w.Memory.RSS) / float64(f.Files))
		}
	}
	var perFile *float64
	if a.InitialFiles > 0 {
		perFile = ptr(float64(a.Memory.Anon) / float64(a.InitialFiles))
	}
	newProject := "new project: first query resolve, whole process, worst"
	if n := len(a.NewProjects); n > 0 {
		newProject = fmt.Sprintf("%s of %d", newProject, n)
	}
	return []metric{
		newMetric("initial_index", "initial index, cold (vs crawl)", "ms", ptr(ms(a.Initial)), against("watchman", crawl), ratioAtMost(1, "≤ 1.0× watchman")),
		newMetric("restart", "restart, nothing changed (vs floor walk)", "ms", ptr(ms(a.Restart)), against("floor", ptr(ms(f.Walk))), ratioAtMost(1.2, "≤ 1.2× floor")),
		newMetric("restart_files_read", "files re-read on restart", "files", ptr(float64(a.RestartAnalyzed)), reference{}, atMost(0, "0")),
		newMetric("restart_first_answer", "restart: first no_sync answer after process start", "ms", ptr(ms(a.FirstAnswer)), reference{}, atMost(50, "≤ 50 ms")),
		newMetric("query_resolve_process", "query resolve, whole process, p50", "ms", quantileOf(a.ResolveProcess, 0.5), against("dial floor", quantileOf(a.DialFloor, 0.5)), ratioAtMost(1.5, "≤ 1.5× dial floor")),
		newMetric("query_resolve_process_cpu", "query resolve, whole process, CPU (user+sys), p50", "ms", quantileOf(a.ResolveProcessCPU, 0.5), against("dial floor", quantileOf(a.DialFloorCPU, 0.5)), noTarget),
		newMetric("socket_query_p99", "socket query (resolve, no_sync), p99", "ms", quantileOf(a.SocketNoSync, 0.99), reference{}, under(1, "< 1 ms")),
		newMetric("save_notify_p50", "save → subscription notified, p50", "ms", quantileOf(a.SaveNotify, 0.5), against("watchman", subP50), under(30, "< 30 ms")),
		newMetric("save_notify_p99", "save → subscription notified, p99", "ms", quantileOf(a.SaveNotify, 0.99), against("watchman", subP99), under(60, "< 60 ms")),
		newMetric("save_visible_p50", "save → visible to a read-your-writes query, p50", "ms", quantileOf(a.SaveVisible, 0.5), reference{}, under(15, "< 15 ms")),
		newMetric("new_project_first_answer", newProject, "ms", quantileOf(a.NewProject, 1), reference{}, under(1000, "< 1 s")),
		newMetric("rss_anon_cold", "private memory (RssAnon) after the first scan (vs RSS)", "MiB", mib(a.ColdMemory.Anon), against("watchman", wRSSCrawl), ratioAtMost(0.5, "≤ ½ watchman")),
		newMetric("rss_anon", "private memory (RssAnon), end of run (vs RSS)", "MiB", mib(a.Memory.Anon), against("watchman", wRSS), ratioAtMost(0.5, "≤ ½ watchman")),
		newMetric("rss_anon_quiet", "private memory (RssAnon), quiet, after -quiet more (vs RSS)", "MiB", mib(a.QuietMemory.Anon), against("watchman", wRSS), ratioAtMost(0.5, "≤ ½ watchman")),
		newMetric("rss_file", "file-backed memory (RssFile), end of run", "MiB", mib(a.Memory.File), against("watchman", wFile), noTarget),
		newMetric("rss_anon_per_file", "RssAnon per indexed file, end (vs RSS per file)", "B", perFile, against("watchman", wPerFile), noTarget),
	}
}

// loops summarizes every timed loop.
func loops(a *amplidexResult, f *floorResult, w *watchmanResult) map[string]loopStats {
	all := map[string]timings{
		"amplidex_resolve_process": a.ResolveProcess, "dial_floor_process": a.DialFloor,
		"amplidex_resolve_process_cpu": a.ResolveProcessCPU, "dial_floor_process_cpu": a.DialFloorCPU,
		"amplidex_socket_nosync": a.SocketNoSync, "amplidex_socket_sync": a.SocketSync,
		"amplidex_save_visible": a.SaveVisible, "amplidex_save_notify": a.SaveNotify,
		"floor_walk": f.Runs, "amplidex_new_project_first_answer": a.NewProject,
	}
	if w != nil {
		all["watchman_path_query_process"], all["watchman_subscription"] = w.PathQuery, w.Subscription
	}
	out := map[string]loopStats{}
	for name, ts := range all {
		if len(ts) > 0 {
			out[name] = loopStats{Samples: len(ts), Min: ms(ts.quantile(0)), P50: ms(ts.quantile(0.5)),
				P99: ms(ts.quantile(0.99)), Max: ms(ts.quantile(1))}
		}
	}
	return out
}

// writeTable prints the report as an aligned table, with the figures the
// rows refer to below it.
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
	rows := [][]string{{"metric", "amplidex", "reference", "ratio", "target", "met?"}}
	for _, m := range r.Metrics {
		met := "-"
		if m.Met != nil {
			met = map[bool]string{true: "yes", false: "NO"}[*m.Met]
		}
		ref := value(m.Reference, m.Unit)
		if m.Reference != nil {
			ref = m.Against + " " + ref
		}
		rows = append(rows, []string{m.Label, value(m.Amplidex, m.Unit), ref, ratioText(m.Ratio), m.Target, met})
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
	yes := map[bool]string{true: "yes", false: "no"}
	fmt.Fprintf(w, "\nrestart: first no_sync answer %.1f ms after the process started; it named the collection: %s; status then said of the scan: %s\n",
		r.Amplidex.FirstAnswerMS, yes[r.Amplidex.FirstAnswerFound], r.Amplidex.FirstAnswerScan)
	if p := r.NewProject; p != nil {
		fmt.Fprintf(w, "new project: first answer median %.1f ms, worst %.1f ms, each: %s\n", p.MedianMS, p.MaxMS, millisText(p.RunsMS))
		for i, np := range p.Projects {
			fmt.Fprintf(w, "  project %d: %d collections, %d files; resolve %s: %.1f ms (CPU: the command's %.1f ms, the daemon's %.1f ms)\n",
				i+1, np.Collections, np.Files, np.Name, p.RunsMS[i], np.ClientCPUMS, np.DaemonCPUMS)
		}
	}
	fmt.Fprintf(w, "floor: %d files lstat()ed, %d directories watched (%s), one goroutine; median of %d walks\n",
		r.Floor.Files, r.Floor.Dirs, r.Floor.Watcher, len(r.Floor.Runs))
	for _, k := range []string{"amplidex_cold", "amplidex", "amplidex_quiet", "watchman_crawl", "watchman"} {
		if m, ok := r.Memory[k]; ok {
			fmt.Fprintf(w, "memory %s: %s\n", k, m)
		}
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
	case unit == "B":
		return fmt.Sprintf("%.0f B", *v)
	case unit == "ms" && *v < 10:
		return fmt.Sprintf("%.3f ms", *v)
	default:
		return fmt.Sprintf("%.1f %s", *v, unit)
	}
}

// millisText lists vs, in milliseconds.
func millisText(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf("%.1f ms", v)
	}
	return strings.Join(s, ", ")
}

func ratioText(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f×", *r)
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
