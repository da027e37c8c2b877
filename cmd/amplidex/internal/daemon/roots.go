package daemon

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/watcher"
)

// The bounds of a root's size, when the watcher's options set none. A
// collections root of 10,000 collections holds about 75,000 directories;
// one collection, a few dozen.
const (
	// DefaultMaxRootDirs bounds the directories of one root's own tree
	// (watcher.Options.MaxRootDirs).
	DefaultMaxRootDirs = 200_000
	// DefaultMaxLinkDirs bounds the directories of one collection linked
	// into a root (watcher.Options.MaxLinkDirs).
	DefaultMaxLinkDirs = 10_000
)

// rootRefusal says why a root is not watched whatever its size, or ""
// when it may be: a root that holds a home directory (the daemon's, or
// the one a client names) would take in the whole tree around the roots,
// the roots again among it; so would the file system's root.
func rootRefusal(root string, homes ...string) string {
	root = filepath.Clean(root)
	if filepath.Dir(root) == root {
		return fmt.Sprintf("%s is the file system's root", root)
	}
	for _, h := range homes {
		if h == "" {
			continue
		}
		h = filepath.Clean(h)
		if h == root || strings.HasPrefix(h, root+string(filepath.Separator)) {
			return fmt.Sprintf("%s holds the home directory %s", root, h)
		}
	}
	return ""
}

// ownBundled returns the bundled roots of the configuration that may be
// watched, and warns, in status and the log, of each that may not.
func (d *Daemon) ownBundled(bundled []string) []string {
	var out []string
	for _, b := range bundled {
		if why := rootRefusal(b, d.opts.Home); why != "" {
			msg := fmt.Sprintf("bundled root %s not watched nor read: %s (a root holds collections)", b, why)
			d.log.Warn(msg)
			d.warnings.addNew(msg)
			continue
		}
		out = append(out, b)
	}
	return out
}

// followLink is the watcher's Options.FollowLink: a collection link is
// watched where discovery reads it (see discovery.FollowLink).
func followLink(link, real string) error {
	return discovery.FollowLink(filepath.Dir(link), link, real)
}

// tooLarge turns a root's watch that failed for its size into the error
// a client is answered with, and warns of it in status.
func (in *ingest) tooLarge(root string, err error) error {
	if !errors.Is(err, watcher.ErrTooLarge) {
		return fmt.Errorf("watch %s: %w", root, err)
	}
	in.warnNew(fmt.Sprintf("%v: not watched; the question that named it was refused", err))
	return query.Errorf(query.CodeInvalidParams, "%v: not watched, nor read", err)
}
