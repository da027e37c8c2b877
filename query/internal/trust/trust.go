package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/amplidex/amplidex/query/internal/sockos"
)

// FallbackDirs is how many fallback directories Listen and Dial try:
// /tmp/amplidex-<uid>, then .1 to .9 after it.
const FallbackDirs = 10

// User is the user a socket's directory and the peer of a connection must
// belong to. Servers and clients use the system's answers (System); tests
// replace the functions to play another user.
type User struct {
	Euid int
	// Tmp is where the fallback socket directories live
	// (sockos.FallbackTmp).
	Tmp string
	// Owner returns the uid that owns the file at path, described by fi.
	Owner func(path string, fi fs.FileInfo) int
	// PeerUID returns the uid of the process at the other end of a
	// connection.
	PeerUID func(*net.UnixConn) (int, error)
	// PeerPID returns the process at the other end of a connection, 0
	// when the system does not say.
	PeerPID func(*net.UnixConn) int
}

// System returns the user as the system tells it.
func System() User {
	return User{Euid: os.Geteuid(), Tmp: sockos.FallbackTmp(), Owner: sockos.FileOwner, PeerUID: sockos.PeerUID, PeerPID: sockos.PeerPID}
}

// FallbackDir is the first fallback socket directory of the user.
func (u User) FallbackDir() string {
	return filepath.Join(u.Tmp, "amplidex-"+strconv.Itoa(u.Euid))
}

// Candidates returns the directories a socket in dir may live in: dir
// alone, or when dir is the fallback directory, the fallback directories in
// the order both ends try them.
func (u User) Candidates(dir string) []string {
	if dir != u.FallbackDir() {
		return []string{dir}
	}
	dirs := []string{dir}
	for i := 1; i < FallbackDirs; i++ {
		dirs = append(dirs, dir+"."+strconv.Itoa(i))
	}
	return dirs
}

// Search looks through the fallback directories for the first that is a
// directory of the user's. Failing that, it returns those that do not
// exist, in order, and describes those it skipped.
func (u User) Search(dirs []string) (ours string, missing, skipped []string) {
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, d)
		case err != nil:
			skipped = append(skipped, fmt.Sprintf("%s: %v", d, err))
		case !fi.IsDir():
			skipped = append(skipped, fmt.Sprintf("%s is not a directory (%v)", d, fi.Mode().Type()))
		default:
			uid := u.Owner(d, fi)
			if uid == u.Euid {
				return d, nil, nil
			}
			skipped = append(skipped, fmt.Sprintf("%s belongs to %s", d, sockos.DescribeUID(uid)))
		}
	}
	return "", missing, skipped
}
