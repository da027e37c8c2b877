package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrLinkRefused is wrapped by the error FollowLink returns for a
// collection link that is not followed.
var ErrLinkRefused = errors.New("collection link not followed")

// FollowLink decides whether a collection directory that is a symbolic
// link, link, directly in the root directory root, is followed to real,
// the directory it resolves to. Authors link their working copy into a
// root, and that is followed. Not followed, with an error wrapping
// ErrLinkRefused that says why:
//
//   - a link to a directory that holds the root itself (/, the home
//     directory, the project): it would take in the whole tree around
//     the root, the root again among it;
//   - a link to a directory of another user than the one amplidex runs
//     as, unless the root is that user's too: what another user
//     controls is not trusted (the rule the upward search for
//     .amplifier/ follows), but a root another user installed (a
//     system-wide bundled root) may link within what it owns.
//
// Loader follows it for every collection of a project, user or bundled
// root, and the daemon's watcher for every link it watches, so that what
// is read and what is watched agree.
func FollowLink(root, link, real string) error {
	return linkJudge{uid: os.Geteuid(), owner: fileOwner}.follow(root, link, real)
}

// linkJudge is FollowLink with the user and the way to tell owners given,
// so that tests can pretend a directory belongs to someone else.
type linkJudge struct {
	uid   int
	owner func(path string, fi fs.FileInfo) (int, bool)
}

func (j linkJudge) follow(root, link, real string) error {
	rootReal := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		rootReal = r
	}
	if holds(real, rootReal) {
		return fmt.Errorf("%w: %s leads to %s, which holds the collections root %s itself", ErrLinkRefused, link, real, root)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil // gone meanwhile: nothing to follow, nothing to refuse
	}
	uid, known := j.owner(real, fi)
	if !known || uid == j.uid {
		return nil
	}
	if ri, err := os.Stat(rootReal); err == nil {
		if ruid, ok := j.owner(rootReal, ri); ok && ruid == uid {
			return nil
		}
	}
	return fmt.Errorf("%w: %s leads to %s, which belongs to another user (uid %d); amplidex does not trust it", ErrLinkRefused, link, real, uid)
}

// holds reports whether dir is p or a directory above it; both are clean
// and absolute.
func holds(dir, p string) bool {
	if dir == p {
		return true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}
