//go:build !linux

package main

import (
	"errors"
	"fmt"
)

// floorWatcher names what the floor walk watches with.
const floorWatcher = "none"

// floorWalk is the floor of a crawl; it needs inotify.
func floorWalk(root string) (walkStats, error) {
	return walkStats{}, fmt.Errorf("floor walk of %s: %w", root, errors.ErrUnsupported)
}
