// Package prepare keeps the prepared-bundle cache: for a bundle manifest
// (bundle.md) and an application version it builds, once, the mount plan the
// agent runtime loads, and serves it again in milliseconds while neither the
// manifest's bytes nor the version change.
//
// A Cache validates a manifest (read with the bundle model of package
// bundle, as an amplifier-agent manifest that must name a default_provider),
// resolves the agents it includes and the @mentions it makes, fetches every
// module source into a module cache (git sources are cloned shallow with the
// system git; file:// and local paths are used in place), optionally runs an
// install command per module, and writes the result, prepared.json, under
// the entry's key. Ensure is the one entry point for callers that need the
// prepared bundle; DryRun validates without fetching anything; Clear removes
// every entry.
//
// It does not watch manifests or rebuild in the background (the daemon does,
// by calling Ensure), and it never prunes old entries.
//
// # Layout
//
//	<home>/cache/prepared/<version>/<hash>/prepared.json  the artifact (a Plan)
//	<home>/cache/prepared/<version>/<hash>/manifest.json  the commit marker
//	<home>/cache/modules/git/<repo>-<urlhash>/<commit>/   one shallow clone
//	<home>/cache/modules/git/<repo>-<urlhash>/.clone-<pid>-<random>/
//	                                                      a clone in progress
//	<home>/cache/locks/                                   lock files
//
// <hash> is the first 16 hex digits of the SHA-256 of the manifest's raw
// bytes. Clear removes prepared/ only: clones and lock files stay, so a build
// running during a clear keeps its locks and its modules.
//
// # Concurrency
//
// A Cache is safe for concurrent use by goroutines and by processes sharing
// one home. A cold build holds an exclusive lock (flock(2) on Unix,
// LockFileEx on Windows) on the key's lock file for its whole length, and
// re-checks the entry once it holds the lock, so N concurrent cold starts
// build once; the others wait and then read the entry. Cloning one
// repository holds a lock of its own. Readers take no lock: files are
// written to a temporary name, synced and renamed, the artifact first and
// manifest.json last, so a reader sees a whole entry or none. Writing an
// entry holds a shared lock that Clear takes exclusively.
//
// # Caveats
//
//   - The key covers the manifest's bytes and the version only: editing an
//     agent file or a local module does not change it, and two copies of one
//     manifest share an entry, whose paths are those of the copy that built
//     it.
//   - A warm hit is both files present, both regular files within their
//     size limits, both decoding, agreeing with the key and every module
//     directory of the plan still existing. Anything else is a miss: a
//     warning is logged, the entry is discarded and rebuilt. A corrupt entry
//     is never a hard error.
//   - Every file read (the manifest, its agents, the entry's files) goes
//     through syntax.ReadFile: a FIFO, a device or a link to one is never
//     opened for reading in a way that blocks, and nothing larger than
//     syntax.DefaultMaxFileSize (64 MiB for prepared.json) is read. Such a
//     manifest is an error naming it; such an agent is a bundle/agent-missing
//     error at its include. Of what git writes, 4 MiB of standard output and
//     the last 64 KiB of standard error are kept.
//   - Git sources on a branch are re-resolved (git ls-remote) on every cold
//     build, so upstream changes flow into the next entry; a commit that is
//     already in the module cache is not cloned again.
//   - A module source that fails fails the build, naming the module, and no
//     entry is written.
//   - git and the install command run in a process group of their own, with
//     every process they start (git's remote helpers). The whole group is
//     killed when the context ends (a terminal's Ctrl-C reaches this process,
//     which cancels it) and, on Linux, when the process running the build
//     dies, even by SIGKILL: a shell between them receives the parent-death
//     signal and kills the group. Elsewhere a build killed outright leaves
//     them to end by themselves; git gives up an HTTP transfer slower than
//     1000 bytes a second for a minute (GIT_HTTP_LOW_SPEED_LIMIT and
//     GIT_HTTP_LOW_SPEED_TIME, unless the environment sets them; "0" turns
//     the bound off).
//     Either way the clone directory it leaves is removed by the next build
//     that clones the same repository: holding the repository's lock, it
//     removes every .clone-* whose recorded process is gone.
package prepare
