// Command amplidex-bench measures amplidex against watchman and against
// two floors on one synthetic tree of collections, in one run, and prints
// the figures side by side with the targets of the product contract
// (PRODUCT.md, "Targets"), run at 10,000 and at 2,000 collections.
//
// It generates, deterministically from -seed, a user root of -collections
// collection directories of about twelve files each, in the shapes real
// collections have: pyproject.toml, profiles extending a few foundation
// collections, agents, nested context, scenario tools and modules, flat and
// nested (pip-installed) layouts, and a few defects (bad YAML, a missing
// pyproject.toml, unknown keys, broken extends). It builds amplidex and
// the dial floor (internal/dialfloor) into its work directory, then
// measures, one after the other, each daemon with its own home and state
// directories:
//
//   - the floor: a walk of the tree on one goroutine that reads every
//     directory, lstats every entry and adds an inotify watch on every
//     directory (inotify_add_watch through golang.org/x/sys/unix, with
//     fsnotify's mask), timed three times, the median kept;
//   - amplidex: a cold start on an empty index; a restart with nothing
//     changed, during which the socket is tried every millisecond from the
//     moment the process starts until a no_sync resolve is answered (when,
//     whether it named the collection, and what a status asked right after
//     says of the scan), then how many files it read again; whole `amplidex
//     query resolve NAME` processes, interleaved with whole processes of
//     the dial floor, which only dials the socket, sends one no_sync
//     resolve and prints the answer; resolve over the socket with and
//     without the wait for pending changes; a save of an agent with a
//     new defect until a diagnostics query or a subscription reports it;
//     and last, with that daemon still running for the user root, the
//     first answer in new projects it has not seen: -new-projects
//     projects (default 3), each generated in the work directory with
//     -new-project collections (default 1,500) in its .amplifier/collections
//     holding about -new-project-files files (default 45,000; collections
//     the generator makes smaller than their share get more agents and
//     context), and in each a whole `amplidex query resolve NAME` process,
//     run inside the project for one of its collections, timed from its
//     start to its exit (the answer must name the project's collection,
//     and the daemon must have registered the project: an in-process
//     answer fails); the row shows the worst of them, the figures below
//     the table the median and each (-new-project 0 skips it);
//   - watchman: its initial crawl of the same root, whole `watchman -j`
//     processes answering a path query, and a save until its subscription
//     names the file.
//
// The whole processes are timed by the wall clock, and their CPU time
// (user and system, from the kernel's accounting at exit) is recorded
// beside it: on a machine shared with other work, the CPU time varies
// less than the wall time. With -only query, the harness measures the
// whole-process query loop alone, against the daemon of the cold start,
// with no floor walk, restart, other loop or watchman: a quicker run for
// work on the client's start.
//
// Every socket method is called through the query package's method table
// (query.Call, query.Subscribe) with its params and result types; the dial
// floor gets the method's name from the table on its command line.
//
// Memory is read from /proc/PID/status after the first scan and at the end
// of each daemon's run, and amplidex's once more -quiet later (11 s), when
// it has found itself quiet and given back what its last loops freed:
// amplidex's private memory (RssAnon) against
// watchman's whole RSS, amplidex's file-backed memory (RssFile: its binary
// and the mapped index) beside it, and RssAnon per indexed file.
//
// Each row of the table shows amplidex's value, the value it is compared
// with (watchman, the floor or the dial floor), the ratio, the target and
// whether it is met; the machine and its load average come first, the
// memory breakdown and the restart's first answer after. The table goes to
// standard output, progress to standard error, and with -json the same
// figures, and a summary of every timed loop, to a file.
//
//	go run ./cmd/amplidex-bench -collections 10000 -json bench.json
//	go run ./cmd/amplidex-bench -collections 2000 -json bench-2000.json
//	go run ./cmd/amplidex-bench -collections 2000 -only query
//
// With -generate-only (and -dir) it only generates the tree, keeps it and
// prints its root, for measuring something else on it (the README's
// comparison of `amplidex check` with the reference libraries):
//
//	go run ./cmd/amplidex-bench -collections 2000 -generate-only -dir /tmp/tree2000
//
// # Caveats
//
//   - It is a benchmark, not a test: figures vary with the machine and its
//     load. Run it on an otherwise idle machine and compare ratios.
//   - The tree is in the page cache for the floor and both daemons: the
//     harness reads all of it right before each timed start, because some
//     machines page out idle cache within seconds. No figure includes a
//     cold disk.
//   - The floor walk runs inside the harness: unlike amplidex's restart it
//     includes no process start, and its watches are removed after the
//     timing ends.
//   - Watchman's crawl is timed from its watch command to a synced clock and
//     an answered query on a server already running; amplidex's start-up
//     timings include starting its process.
//   - A start counts as done at the first status answer that reports no
//     scan in progress: a bool "scanning" field of query.Status, once the
//     daemon has one; until then, the first answer at all.
//   - `amplidex query resolve` waits for pending changes (the command line
//     has no way to opt out); the dial floor asks with no_sync.
//   - When watchman is missing it is installed with apt-get if the harness
//     runs as root; otherwise its column shows "-".
//   - The new projects are generated while the daemon runs, then read
//     once (the page cache again), and kept until the daemon stops; the
//     memory figures at the end are read before they are added. Before
//     each, the harness waits until the daemon registers no project and
//     uses less than a tenth of a CPU, and it records the CPU time of the
//     command and of the daemon during the first answer beside its wall
//     time.
//   - The latency loops rewrite agent files of the tree; the daemons run one
//     at a time, never side by side, so they do not compete for the CPU.
package main
