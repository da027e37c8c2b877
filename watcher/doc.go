// Package watcher turns file system notifications for a set of root
// directories into debounced batches of changed paths.
//
// A Watcher watches each root recursively with inotify (through fsnotify),
// follows directory symlinks that are immediate children of a root (a
// collection linked into a root) by watching their real paths, waits for
// roots that do not exist yet through their nearest existing ancestor, and
// falls back to polling a root when the kernel runs out of watches, or the
// process out of file descriptors. What it delivers is a Batch per root: the
// paths that may have changed, or a request to rescan the whole root when
// changes could not be pinned down, with the reasons why.
//
// It knows paths and events only: it does not read files, parse them, decide
// which of them matter, or keep an index. Callers lstat the paths they get.
//
// # Concurrency
//
// All methods may be called from any goroutine. A Watcher runs three
// goroutines: one only drains fsnotify into a queue (so the kernel queue is
// emptied as fast as possible and fsnotify never blocks on a busy consumer),
// one stats, walks new directories, adds and removes watches, polls and
// groups changes into batches, and one calls the handle function, serially,
// never concurrently. While it walks a tree, the busy goroutine has up to
// two helpers that only list directories ahead of it, each after the busy
// goroutine added the directory's watch (see aheadWalk); the walk ends
// only once they have stopped. Close stops all three and waits for them. Status never
// waits for the busy goroutine: it reads a copy published after each step.
// Options.OnListing and Options.BeforeWatch are called from the busy
// goroutine, which waits for them, possibly while handle runs.
//
// # Listings
//
// A Watcher lists every directory it watches, when it walks a tree: the
// root's, at AddRoot; a root that appears or is replaced; every root after
// the kernel's queue overflowed; a directory that appears. With
// Options.OnListing set it hands each listing over, so that a consumer
// that scans a root after AddRoot need not list its directories again.
// For a directory D handed over with its entries:
//
//   - D's kernel watch was added before D was opened for listing, and it
//     stays until D goes. So the entries hold every change to D's entries
//     made before the listing began; and every change to D's own entries
//     made after it ended (an entry made, removed, renamed, written to or
//     its attributes changed) is reported in a later Batch for the root,
//     as a path or as a Rescan. A change made while D was being listed may
//     be in the listing and reported as well: seen twice, never missed.
//     Each directory below D has its listing, and this guarantee, of its
//     own.
//   - The listings of AddRoot's walk are all handed over before AddRoot
//     returns; those of a later walk, before any Batch reporting what that
//     walk found is delivered.
//   - The entries hold names and types, as the directory gives them: the
//     Watcher lstats no entry (it stats only the directories it watches).
//   - Not listed are: skipped directories (below), directories that could
//     not be watched or read (each is a warning in the root's status), and
//     the whole of a polled root. The consumer lists those itself.
//   - When AddRoot runs out of watches or file descriptors part way
//     through the walk, the root is polled instead, and the watches that
//     would have reported changes to directories already handed over are
//     gone: with OnListing set, the root then gets a Batch with Rescan and
//     ReasonPolling (and ReasonWatchLimit or ReasonTooManyFiles), which it
//     does not get without.
//   - A directory may be listed again by a later walk (a Rescan follows
//     it, or a path reporting the directory): the later listing replaces
//     the earlier one.
//
// # Caveats
//
//   - Paths in a Batch are absolute and cleaned, and always spelled under the
//     root as given to AddRoot: a change below a linked collection is
//     reported as <root>/<link>/…, not under the link's real path.
//   - Only directory symlinks that are immediate children of a root are
//     followed. Deeper directory symlinks, and file symlinks, are reported
//     as paths when they change themselves; changes to what they point at
//     are not seen.
//   - Directories named .git, node_modules, __pycache__ and .venv are
//     reported when they appear or go, but never entered or watched: they can
//     hold very many files and no collection content.
//   - A directory path in a Batch means that entry changed. When a directory
//     was removed or moved away only its own path is reported, not its
//     contents; when one appears (made, moved in or linked in), it is walked
//     and everything inside is reported too.
//   - The directories above each root, and above the real path of each
//     linked collection, are watched too, so that renaming one of them
//     (which moves the tree away without an event on its own watches) is
//     seen as the root or the link's target vanishing.
//   - Event names are what fsnotify knew when it read an event, and may be
//     stale after a directory moved; so an event only says where to look:
//     what is watched, walked and reported is decided by the disk. A
//     directory that appears is always walked again, which may report a
//     path twice, never miss one.
//   - Batch.Reasons is a set (Reason), not one cause: it holds every reason
//     that arose since the root's previous batch. An overflow in the same
//     debounce window as the root appearing gives both, as
//     ReasonOverflow|ReasonRootAppeared: a consumer that takes a root
//     appearing as routine must compare Reasons with ReasonRootAppeared,
//     not test for it with Has. Reason.String lists the reasons in a fixed
//     order, for people.
//   - The kernel's event queue is shared by all roots: when it overflows the
//     Watcher cannot tell which root lost events, so every root is
//     re-watched and gets a Batch with Rescan set and ReasonOverflow.
//   - When adding a watch fails with ENOSPC (or Options.MaxWatches is
//     reached), or with EMFILE or ENFILE (out of file descriptors), that
//     root drops its watches and is polled every Options.PollInterval until
//     it is removed; polling compares size, modification time, inode and
//     mode, so it sees every change that alters one of them. The switch is
//     reported as ReasonPolling with ReasonWatchLimit or ReasonTooManyFiles,
//     and the root's status warns, naming the limit to raise (for EMFILE,
//     ulimit -n).
//   - A polled root is walked again no sooner than PollInterval after its
//     last walk, nor than 20 times what that walk took: polling a large
//     tree costs at most a twentieth of a core, not a core walking it
//     without a pause.
//   - Roots are bounded in size (Options.MaxRootDirs): a root whose own
//     tree holds more directories, when it is added, as it grows, or when
//     a poll counts them, is given up: its watches go, it is not polled,
//     its state is StateTooLarge and its warnings say why; AddRoot
//     returns ErrTooLarge for it, and a root given up later gets one last
//     Batch with Rescan and ReasonTooLarge. Nothing brings it back but
//     RemoveRoot and AddRoot. A linked collection beyond
//     Options.MaxLinkDirs, or one Options.FollowLink refuses, is not
//     followed (a warning of its root's says why); the link itself is
//     still seen to change, and judged again when it does. Polling
//     follows no link FollowLink refuses either.
//   - AddRoot does not deliver the root's current contents: the caller scans
//     it after AddRoot returns, and the Watcher reports every change from
//     then on.
//   - Flush syncs with the kernel through a cookie file in a private
//     directory (see Options.SyncDir); it guarantees that every change made
//     before Flush was called has been delivered when it returns.
//   - The Watcher keeps its watched directories as a tree of names (see
//     internal/dirtree), not as full paths: a directory's path is built when
//     an event or a Batch needs it. The one copy of each watched directory's
//     full path is the one given to fsnotify, which keeps it for as long as
//     the watch, and whose storage the tree's names share.
//   - The Watcher is built for inotify (Linux); other platforms get fsnotify's
//     behaviour, unverified. On macOS and the BSDs fsnotify uses kqueue,
//     which holds an open file for every watched directory and for every
//     file in one, against a default limit of 256 descriptors per process
//     on macOS: a root of a few hundred files can exhaust it, and is then
//     polled (see above). A root stays polled, so the limit must be raised
//     (ulimit -n) before the process starts.
package watcher
