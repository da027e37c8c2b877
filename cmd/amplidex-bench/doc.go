// Command amplidex-bench measures amplidex against watchman on one
// synthetic tree of collections, in one run, and prints the figures side by
// side with the targets of the product contract.
//
// It generates, deterministically from -seed, a user root of -collections
// collection directories of about twelve files each, in the shapes real
// collections have: pyproject.toml, profiles extending a few foundation
// collections, agents, nested context, scenario tools and modules, flat and
// nested (pip-installed) layouts, and a few defects (bad YAML, a missing
// pyproject.toml, unknown keys, broken extends). It then runs, one after the
// other, each with its own home and state directories:
//
//   - amplidex: a cold start on an empty index, a restart with nothing
//     changed (and how many files it read again), whole `amplidex query
//     resolve NAME` processes, resolve over the socket with and without the
//     wait for pending changes, and a save of an agent with a new defect
//     until a diagnostics query or a subscription reports it;
//   - watchman: its initial crawl of the same root, whole `watchman -j`
//     processes answering a path query, and a save until its subscription
//     names the file.
//
// The resident memory of both daemons is read from /proc. The table goes to
// standard output, progress to standard error, and with -json the same
// figures to a file.
//
//	go run ./cmd/amplidex-bench -collections 10000 -json bench.json
//
// # Caveats
//
//   - It is a benchmark, not a test: figures vary with the machine and its
//     load. Run it on an otherwise idle machine and compare ratios.
//   - The tree is in the page cache for both daemons: the harness reads all
//     of it right before each timed start, because some machines page out
//     idle cache within seconds. Neither figure includes a cold disk.
//   - Watchman's crawl is timed from its watch command to a synced clock and
//     an answered query on a server already running; amplidex's start-up
//     timings include starting its process.
//   - When watchman is missing it is installed with apt-get if the harness
//     runs as root; otherwise its column shows "-".
//   - The latency loops rewrite agent files of the tree; the daemons run one
//     at a time, never side by side, so they do not compete for the CPU.
package main
