// Package daemon is the engine behind `amplidex daemon`: it watches the
// collection roots, feeds what changed to the catalog, persists what the
// catalog read in the index, pushes changed diagnostics to subscribers,
// keeps prepared bundles warm, and answers queries over the socket.
//
// It wires the watcher, index, catalog and query packages together and
// holds no domain logic of its own. Each concern is a part with its own
// state and goroutines:
//
//   - the ingest (ingest.go) turns the watcher's batches into catalog
//     changes, registers projects, and notices edited lock files;
//   - the catalog (package discovery/catalog) publishes an immutable State
//     per change; queries read the latest through an atomic pointer;
//   - the persister (persist.go) writes the records the catalog's loads
//     made, and the deletions, to the index on a goroutine of its own, so a
//     save is visible before its fsync; its file cache is the catalog's
//     discovery.FileCache;
//   - the subscriptions (subscribe.go) follow each State's Delta and send
//     the diagnostics that changed;
//   - the bundles (bundles.go) keep each watched manifest's prepared entry
//     warm;
//   - the bundle index (bundleindex.go) serves the bundles of the places
//     clients stand in (query.BundleScope): a bundle catalog (package
//     discovery/bundle/catalog) over the roots it watches for them, fed
//     the watcher's batches on a worker of its own that makes again only
//     what read a changed path; the places are kept in the index across
//     restarts;
//   - the methods (methods.go) serve the query table over the socket;
//   - the progress (progress.go) counts what the first scan has seen, and
//     what each registration in progress has, for status;
//   - the idler (idle.go) asks the owner to stop once the socket has had
//     no connection for Options.IdleExit;
//   - the pruner (projects.go) forgets, every PruneEvery, the projects whose
//     directory is gone and those unused for ForgetAfter, and keeps the
//     projects' last use in the index across restarts;
//   - the memory policy (memory.go), the process's only one, sets the
//     memory limit and the collector's target, and gives memory back
//     once a burst of work ends.
//
// # Concurrency
//
// Start serves the socket as soon as the index is open, then runs the
// first scan; until the scan ends (the ready channel is closed) only
// status, version and shutdown answer, and every other method waits. A
// question with no_sync waits too: nothing is published before the scan.
//
// The first scan lists no directory twice: the watcher's walks of its
// roots (AddRoot, on a goroutine of their own) hand their listings over
// (listings.go), and the scan's loader, which starts once the index is
// verified and follows the walks in name order, takes each one instead of
// listing again, waiting for one the walk has yet to make. That is as
// good as a fresh listing because the watcher watched each directory
// before listing it, and no batch is handled until the scan has ended:
// every change made after a listing is applied over what the scan read.
//
// The first question about a project registers it: its roots are watched
// and read, and the question waits for that. A resolve does not
// (firstanswer.go): it is answered from the names of the project's
// collections (their pyproject.toml files and listings) and the
// collections other Views hold for its other roots, the answer the
// project's View will give, while the registration runs on an ingest
// goroutine.
//
// Batches are handled one at a time on the watcher's delivery goroutine.
// Files are read and parsed outside every lock (the catalog's loads run
// before its writer lock is taken); no lock a query needs is held while a
// file is read. A query that waits for its writes (the default) first
// flushes the watcher, so every change made before it was sent has been
// handled and published; then it reads the published State without a
// lock. Registering a new project reads its root outside every lock, too;
// two registrations of one project share the work.
//
// Every goroutine has an owner that waits for it: the watcher's, the
// persister's writer, each subscription's (owned by the socket server),
// the bundles' builds, the pruner and the memory policy's looks; the
// idler's timer is stopped by
// Close. Close stops them in order (see
// Close), and waits for each to its end: a bundle's build is cancelled,
// never abandoned.
//
// A reload (SIGHUP) runs one at a time and applies whole or not at all:
// what can fail (its checks, the watches it adds) comes first and is taken
// back on failure; then the catalog is reconfigured and the new
// configuration published in one step; last goes what only the old one
// needed. A subscription whose project is forgotten ends with not-found.
//
// # Locks
//
// Each lock guards the state of its own part, and is held for bookkeeping
// only: no file is read, and nothing is waited for, while a lock a request
// needs is held.
//
//   - ingest.mu: the registered projects and their last use, the
//     registrations in progress (and the questions waiting for each), the
//     subscriptions following each project, the lock files' stats and the
//     roots' queues; drained, its condition, says a worker applied its
//     queue.
//   - persister.mu: the deletions and versions committed and written, and
//     whether writes fail; wrote, its condition, says written moved.
//   - fileCache.mu: the records the loads made that are not in the index
//     yet, the paths to hash again, the documents settling, and the count
//     of files analyzed.
//   - subscriptions.mu: the set of open subscriptions; subscriber.mu: what
//     changed for one since it last looked, and whether its project was
//     forgotten.
//   - bundle.mu: one manifest's status and build state; bundles.mu:
//     whether the bundles are closed, so that no build is counted once
//     close waits (taken after a bundle's mu, never before).
//   - bundleIndex.mu: the batches waiting for the bundle worker, what it
//     has taken in, the roots watched for bundles and the places last
//     saved; drained, its condition, says the worker moved. bundleIndex.roots
//     lets one change of the watched roots run at a time (a root is
//     watched outside mu). The bundle catalog's own locks are its own.
//   - warnings.mu: the warnings status shows.
//   - idler.mu: the connections open, since when none is, the idle time
//     and its timer. The socket server calls the idler with its own lock
//     held (server.Server.Activity): idler.mu is taken after the server's,
//     never the other way round.
//   - progress.regMu: the writes of the list of registrations in
//     progress, which readers load without it.
//   - analyzer.mu: the language server's Workspaces, one per schema
//     options.
//   - memory.mu: the registrations reading, and the heap's allocations at
//     the last look and since the last trim; never held while memory is
//     given back.
//   - Daemon.reloadMu: one Reload at a time, and whether Close has begun.
//     No request takes it; a reload waits under it for the watcher and for
//     the old bundles' builds, and Close waits for a running reload.
//
// Published without a lock, and never written once published: the
// catalog's State, the configuration a reload changes (Daemon.cfg: the
// bundled roots, the schema options, the manifests and the bundles built
// for them) and the summary that answers early (Daemon.early). A reader
// loads each once and uses what it loaded. The counts of progress are
// atomic.
//
// # Caveats
//
//   - Only this process opens the index; a second daemon fails fast,
//     naming the pid of the first.
//   - A restart trusts a file's record when its size, modification time,
//     change time, inode and mode are unchanged; a file whose bytes match
//     its recorded hash is not analyzed again. A file a watch event named is
//     hashed again whatever its stat says.
//   - A failed index write (a full disk) loses nothing: it is retried, and
//     meanwhile `changes` answers with the full state.
//   - Lock files live beside the roots, not in them: they are stat()ed with
//     every batch and every query that waits for its writes, and read again
//     when their stat changed.
//   - The registry of projects is bounded (Options.MaxProjects): beyond it,
//     the project asked about least recently is forgotten.
//   - The sets of a client's own roots (query.Common.Roots that differ
//     from the daemon's) are bounded apart (Options.MaxRootSets): beyond
//     it, the set used least recently that no subscription follows is
//     forgotten, and when every set is followed the question is answered
//     overloaded. A set unused for Options.ForgetRootSetsAfter is
//     forgotten (the pruner looks four times per that time), and none is
//     remembered for the next run.
//   - Roots are bounded in size (roots.go): one that is / or holds a home
//     directory is never watched nor read (a client naming one is
//     answered invalid-params, the daemon's own configuration is taken
//     without it); one beyond DefaultMaxRootDirs directories is given up
//     by the watcher (a client's is refused, the daemon's own is read once
//     and shown "too large"); a collection link is followed only as
//     discovery.FollowLink allows, and not beyond DefaultMaxLinkDirs. Each
//     is a warning of status, said once.
//   - The collection a client stands in (query.Roots.Collection) is a
//     root of its own in the client's set of roots, watched and read as
//     one collection.
//   - The places whose bundles are served are bounded (the bundle
//     catalog's MaxScopes); a root watched for a place's bundles alone
//     goes to the bundle worker, not to the catalog. What a place's
//     bundles read outside its roots is stated at each question that
//     waits for its writes, at most bundlecat.MaxLoose paths.
//   - A registration is the asking client's work: when its client goes
//     away (the socket server cancels the calls of a client that hung
//     up), it stops at its next step (before each root is watched, before
//     the roots are read) and takes back the watches it added; a question
//     that waited for it runs one of its own. A root's walk and a read
//     under way are not interrupted.
//   - "shutdown" only asks the owner to stop (StopRequested); asked during
//     the first scan, the daemon stops once the scan ends, since a read of
//     the roots is not interrupted. So does the idler; its time runs
//     from the end of the first scan.
//   - With a handed listener (socket activation) the socket file is the
//     service manager's: Close closes the listener and leaves the file.
package daemon
