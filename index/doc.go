// Package index is the persistent store of amplidex: a bbolt database that
// remembers, for every file the daemon has seen, its size, modification
// and change times, inode, mode and SHA-256, the root it was found under,
// and an opaque payload the caller encodes (its parse facts). With it a
// restarted daemon rebuilds its model without re-reading unchanged files,
// and a save that leaves the bytes unchanged does no work. A tick counts
// the batches that changed something, and a bounded change log answers
// "what changed since tick N".
//
// It does not know what the payload means, does not watch or read the
// files it describes, and does not serve queries; it is the only package
// that imports bbolt.
//
// # Concurrency
//
// A Store is safe for concurrent use. Reads run in parallel with each
// other and with one writer; Apply and SetMeta are serialised by bbolt.
// Only one Store at a time, in this process or another, can hold a
// database file: Open waits up to Options.Timeout for the lock and then
// fails with ErrLocked. A panic in a function passed to Walk is passed on
// unchanged; one raised by bbolt reading a damaged file becomes an error
// wrapping ErrCorrupt.
//
// # Caveats
//
//   - Each exported method runs exactly one bbolt transaction. Nothing a
//     method returns aliases database memory.
//   - An Apply is atomic and written in sorted key order; after a crash,
//     even a SIGKILL in the middle of a commit, the database holds every
//     batch that Apply returned for (unless Options.NoSync is set) and no
//     part of any other.
//   - Keys are absolute, clean paths ordered byte-wise, not component-wise.
//   - Ticks are only comparable within one Instance: a database moved aside
//     or rebuilt starts a new instance at tick 0.
//   - A database Open cannot use (damaged, unreadable, foreign) is renamed
//     aside and kept; only the newest such copy is: moving one aside
//     removes the regular files "<path>.corrupt-*" left by earlier moves.
//     A database of another schema version is emptied in place; version 2
//     added File.Ctime, so a version 1 database starts over once, and
//     version 3 stores each SetMeta key on its own (a write of one key
//     writes nothing of the others), so a version 2 one does too.
//   - A sound database file that cannot be written (mode 0444, a read-only
//     file system or mount) is opened read-only, never moved aside:
//     ReadOnly reports it, Warnings says why, reads answer from the file,
//     and Apply and SetMeta return ErrReadOnly. Such a file of another
//     schema version cannot be emptied, and the store reads as empty.
//   - Trust a record while its file is unchanged by comparing it with
//     File.SameStat against StatOf of a fresh stat, never size and
//     ModTime alone: cp -p, tar x and touch -r rewrite a file and restore
//     both, but not the change time. Where the platform reports no change
//     time (Windows) Ctime is 0 and such a rewrite goes unseen until the
//     file is read. A chmod, chown or new hard link moves the change time
//     too; the file is then read again and its hash found unchanged.
//   - Recovery on Open assumes no other process is recovering the same
//     path at the same moment; the daemon's pid file serialises starts.
//   - A function passed to Walk runs inside a read transaction and must not
//     write to the Store or close it: a writer that has to grow the file
//     waits for every open read transaction.
package index
