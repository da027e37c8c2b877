package watcher

import (
	"encoding/binary"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// A walk watches each directory, then lists it, and the two cost about
// the same; but only the watch must be made on the busy goroutine, which
// owns the tree of watches. An aheadWalk lists on helper goroutines
// meanwhile, and runs the busy goroutine's part of the walk ahead of
// where the walk has got to, so that on a machine with more than one core
// the walk mostly finds each listing made when it comes to it.
//
// # Invariants
//
//   - A directory is listed only after expand added its watch: the root
//     is watched by the caller, every other directory is one that expand
//     returned, and expand returns only those it watched.
//   - deliver sees every directory listed without error, each once, in
//     the order of a depth-first walk that enters the directories expand
//     returns in the order returned: the order of a walk listing every
//     directory itself. Each directory is expanded once, before it is
//     delivered.
//   - expand and deliver run on the goroutine that called run; helpers
//     only list, and touch nothing of the Watcher.
//   - Work ahead is bounded: the walk expands ahead only while fewer than
//     maxAhead listings wait to be delivered, and every listing made is
//     one the walk needs: nothing is listed twice or in vain, unless the
//     walk stops.
//   - run returns only once its helpers have stopped.
type aheadWalk struct {
	// list reads one directory; it runs on any goroutine.
	list func(dir string) ([]fs.DirEntry, error)
	// expand is handed each directory listed, before deliver, and
	// returns the subdirectories to enter, watched, in the order to enter
	// them; stop ends the walk, returning err.
	expand func(dir string, entries []fs.DirEntry) (dirs []string, stop bool, err error)
	// deliver is handed each directory listed, in walk order; the entries
	// are its own.
	deliver func(dir string, entries []fs.DirEntry)
	// helpers is how many goroutines list beside the walk; 0 lists on the
	// walk's own.
	helpers int

	mu      sync.Mutex // guards fields below and the fields of every dirJob
	work    sync.Cond  // a job was queued, or the walk ended
	done    sync.Cond  // a helper finished a listing the walk waits for
	queue   jobHeap    // listings to make
	listed  jobHeap    // listings helpers made, to expand
	ahead   int        // directories listed and not delivered
	started int        // helpers started
	idle    int        // helpers waiting for work
	waiting bool       // the walk waits for a listing
	ended   bool
	wg      sync.WaitGroup
}

// dirJob is one directory of the walk.
type dirJob struct {
	// key orders jobs as the walk delivers them: the path of indices
	// from the top, each as four big-endian bytes, so that comparing keys
	// as strings compares their places in a depth-first walk.
	key      string
	dir      string
	state    jobState
	entries  []fs.DirEntry
	err      error
	expanded bool
	below    []*dirJob // once expanded: the subdirectories to enter, in order
}

type jobState uint8

const (
	jobQueued  jobState = iota
	jobListing          // someone lists it
	jobListed
)

// maxAhead bounds the listings made and not yet delivered that the walk
// lets pile up: past it, the walk expands nothing ahead.
const maxAhead = 256

// maxHelpers bounds the helpers of one walk: the watches, added one at a
// time on the busy goroutine, bound the walk before more would help.
const maxHelpers = 2

// walkHelpers is how many helpers a walk may start on this machine.
func walkHelpers() int {
	return min(runtime.GOMAXPROCS(0)-1, maxHelpers)
}

// run walks the tree below top, which must be watched already. It
// returns false when expand stopped the walk, with expand's error.
func (a *aheadWalk) run(top string) (complete bool, err error) {
	a.work.L, a.done.L = &a.mu, &a.mu
	defer a.end()
	stack := []*dirJob{{dir: top}} // to deliver, the next one last
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		a.mu.Lock()
		if j.state != jobListed {
			if next := a.nextListed(); next != nil {
				// Expand ahead, so that the helpers have work.
				a.mu.Unlock()
				if stop, err := a.expandJob(next); stop {
					return false, err
				}
				continue
			}
		}
		switch j.state {
		case jobQueued:
			// Nobody began it, and it is needed now.
			a.listLocked(j)
		case jobListing:
			a.waiting = true
			for j.state != jobListed {
				a.done.Wait()
			}
			a.waiting = false
		}
		a.mu.Unlock()
		if j.err == nil && !j.expanded {
			if stop, err := a.expandJob(j); stop {
				return false, err
			}
		}
		stack = stack[:len(stack)-1]
		a.mu.Lock()
		if a.ahead--; a.ahead < maxAhead && a.idle > 0 && a.queue.len() > 0 {
			a.work.Signal()
		}
		a.mu.Unlock()
		if j.err != nil {
			continue
		}
		entries := j.entries
		j.entries = nil
		a.deliver(j.dir, entries)
		for _, b := range slices.Backward(j.below) {
			stack = append(stack, b)
		}
		j.below = nil
	}
	return true, nil
}

// nextListed pops the first directory, in walk order, that a helper
// listed and nobody expanded yet, unless enough listings wait already;
// nil if there is none.
func (a *aheadWalk) nextListed() *dirJob {
	if a.ahead >= maxAhead {
		return nil
	}
	for a.listed.len() > 0 {
		if j := a.listed.pop(); !j.expanded && j.err == nil {
			return j
		}
	}
	return nil
}

// expandJob expands j, which is listed, and queues the listings of the
// directories below it.
func (a *aheadWalk) expandJob(j *dirJob) (stop bool, err error) {
	dirs, stop, err := a.expand(j.dir, j.entries)
	if stop {
		return true, err
	}
	below := make([]*dirJob, len(dirs))
	for i, dir := range dirs {
		below[i] = &dirJob{dir: dir, key: string(binary.BigEndian.AppendUint32([]byte(j.key), uint32(i)))}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	j.below, j.expanded = below, true
	if a.helpers == 0 || len(below) == 0 {
		return false, nil
	}
	for _, b := range below {
		a.queue.push(b)
	}
	if a.idle > 0 {
		a.work.Signal()
	} else if a.started < a.helpers {
		a.started++
		a.wg.Add(1)
		go a.help()
	}
	return false, nil
}

// help lists queued directories until the walk ends.
func (a *aheadWalk) help() {
	defer a.wg.Done()
	a.mu.Lock()
	defer a.mu.Unlock()
	for !a.ended {
		j := a.take()
		if j == nil || a.ahead >= maxAhead {
			a.idle++
			a.work.Wait()
			a.idle--
			continue
		}
		a.queue.pop()
		a.listLocked(j)
		a.listed.push(j)
		if a.waiting {
			a.done.Signal()
		}
	}
}

// listLocked lists j, which nobody began, with a.mu held, released while
// the directory is read.
func (a *aheadWalk) listLocked(j *dirJob) {
	j.state = jobListing
	a.mu.Unlock()
	entries, err := a.list(j.dir)
	a.mu.Lock()
	j.entries, j.err, j.state = entries, err, jobListed
	a.ahead++
}

// take returns the first queued listing, in walk order, that nobody
// began, nil if there is none.
func (a *aheadWalk) take() *dirJob {
	for a.queue.len() > 0 {
		if j := a.queue.peek(); j.state == jobQueued {
			return j
		}
		a.queue.pop()
	}
	return nil
}

// end stops the helpers and waits for them.
func (a *aheadWalk) end() {
	a.mu.Lock()
	a.ended = true
	a.queue, a.listed = jobHeap{}, jobHeap{}
	a.work.Broadcast()
	a.mu.Unlock()
	a.wg.Wait()
}

// listSorted reads dir's entries sorted by name.
func listSorted(dir string) ([]fs.DirEntry, error) {
	entries, err := readDirUnsorted(dir)
	if err == nil {
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return entries, err
}

// jobHeap is a priority queue of jobs, the first in walk order on top.
type jobHeap struct{ jobs []*dirJob }

func (h *jobHeap) len() int { return len(h.jobs) }

func (h *jobHeap) peek() *dirJob { return h.jobs[0] }

func (h *jobHeap) push(j *dirJob) {
	h.jobs = append(h.jobs, j)
	for i := len(h.jobs) - 1; i > 0; {
		up := (i - 1) / 2
		if h.jobs[up].key <= h.jobs[i].key {
			break
		}
		h.jobs[up], h.jobs[i] = h.jobs[i], h.jobs[up]
		i = up
	}
}

func (h *jobHeap) pop() *dirJob {
	top := h.jobs[0]
	last := len(h.jobs) - 1
	h.jobs[0] = h.jobs[last]
	h.jobs[last] = nil
	h.jobs = h.jobs[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < last && h.jobs[l].key < h.jobs[least].key {
			least = l
		}
		if r < last && h.jobs[r].key < h.jobs[least].key {
			least = r
		}
		if least == i {
			break
		}
		h.jobs[i], h.jobs[least] = h.jobs[least], h.jobs[i]
		i = least
	}
	return top
}
