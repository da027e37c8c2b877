package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// floorWatcher names what the floor walk watches with.
const floorWatcher = "inotify through golang.org/x/sys/unix"

// floorMask is what fsnotify asks inotify for when it adds a watch for
// every operation: the events a daemon needs.
const floorMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_MOVE_SELF | unix.IN_ATTRIB

// floorWalk walks root on the calling goroutine: it reads each directory,
// lstats every entry, and adds an inotify watch on every directory, as the
// crawl of any watching daemon must at least. The timing ends before the
// inotify instance, and its watches, are closed.
func floorWalk(root string) (walkStats, error) {
	var st walkStats
	start := time.Now()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return st, fmt.Errorf("inotify_init1: %w", err)
	}
	defer unix.Close(fd)
	var stat unix.Stat_t
	if err := unix.Lstat(root, &stat); err != nil {
		return st, fmt.Errorf("lstat %s: %w", root, err)
	}
	stack := []string{root}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, err := unix.InotifyAddWatch(fd, dir, floorMask); err != nil {
			return st, fmt.Errorf("watch %s: %w", dir, err)
		}
		st.dirs++
		entries, err := os.ReadDir(dir)
		if err != nil {
			return st, err
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if err := unix.Lstat(path, &stat); err != nil {
				return st, fmt.Errorf("lstat %s: %w", path, err)
			}
			if stat.Mode&unix.S_IFMT == unix.S_IFDIR {
				stack = append(stack, path)
			} else {
				st.files++
			}
		}
	}
	st.took = time.Since(start)
	return st, nil
}
