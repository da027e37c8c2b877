// Package pmap is a persistent ordered map: every change returns a new Map
// that shares all but a few small nodes with the old one, which stays
// valid and unchanged. It lets the catalog keep one resolved view per
// version of the roots, each a cheap edit of the one before, so that
// readers hold any version without locks.
//
// A Map is a B+tree whose nodes hold at most nodeMax entries; a change
// copies the nodes on the path from the root to one leaf, so it costs
// O(nodeMax · log n): well under a microsecond at ten thousand entries and
// about the same at a million.
//
// # Concurrency
//
// A Map is a value: any number of goroutines may read one, and a change
// never touches the receiver.
//
// # Caveats
//
//   - Keys are ordered by cmp.Compare; All, Values and From yield them in
//     that order.
//   - A value stored in a Map is shared by every Map derived from it: a
//     caller must not change a value it has put in or read out.
package pmap
