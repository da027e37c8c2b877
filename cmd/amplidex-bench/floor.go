package main

import (
	"fmt"
	"time"
)

// floorRuns is how many times the floor walk is timed; the median counts.
const floorRuns = 3

// floorResult is what the harness measured of the floor: a walk of the
// tree that only reads each directory, lstats every entry and adds an
// inotify watch on every directory, on one goroutine.
type floorResult struct {
	Walk    time.Duration // the median run
	Runs    timings
	Files   int // entries that are not directories
	Dirs    int // directories watched, the root included
	Watcher string
}

// measureFloor times floorRuns walks of the tree, the page cache warmed
// first as before the daemons' timed starts.
func (h *harness) measureFloor() (*floorResult, error) {
	if err := warmTree(h.tree.Root); err != nil {
		return nil, err
	}
	res := &floorResult{Watcher: floorWatcher}
	for range floorRuns {
		st, err := floorWalk(h.tree.Root)
		if err != nil {
			return nil, fmt.Errorf("floor: %w", err)
		}
		res.Runs = append(res.Runs, st.took)
		res.Files, res.Dirs = st.files, st.dirs
	}
	res.Walk = res.Runs.quantile(0.5)
	return res, nil
}

// walkStats is one floor walk.
type walkStats struct {
	took  time.Duration
	files int
	dirs  int
}
