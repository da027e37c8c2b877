package query

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/amplidex/amplidex/query/internal/sockos"
)

// ErrUnsafeDir is returned by Listen and Dial when the socket's directory
// belongs to another user or is open to others: Listen refuses one writable
// by group or others, Dial one with any permission for them.
var ErrUnsafeDir = sockos.ErrUnsafeDir

// ErrUntrustedServer is returned by Dial (and Subscribe) when the process
// answering on the socket does not run as the client's effective uid, or
// its uid cannot be read. Nothing is sent to it.
var ErrUntrustedServer = errors.New("query: the server is not the user's")

const (
	// fallbackDirs is how many fallback directories Listen and Dial try:
	// /tmp/amplidex-<uid>, then .1 to .9 after it.
	fallbackDirs = 10
)

// trust decides whether a socket's directory and the peer of a connection
// are the user's. Servers and clients use the system's answers; tests
// replace the functions to play another user.
type trust struct {
	euid int
	// tmp is where the fallback socket directories live (sockos.FallbackTmp).
	tmp string
	// owner returns the uid that owns the file at path, described by fi.
	owner func(path string, fi fs.FileInfo) int
	// peerUID returns the uid of the process at the other end of a
	// connection.
	peerUID func(*net.UnixConn) (int, error)
	// peerPID returns the process at the other end of a connection, 0
	// when the system does not say.
	peerPID func(*net.UnixConn) int
}

func systemTrust() trust {
	return trust{euid: os.Geteuid(), tmp: sockos.FallbackTmp(), owner: sockos.FileOwner, peerUID: sockos.PeerUID, peerPID: sockos.PeerPID}
}

// fallbackDir is the first fallback socket directory of the user.
func (t trust) fallbackDir() string {
	return filepath.Join(t.tmp, "amplidex-"+strconv.Itoa(t.euid))
}

// candidates returns the directories a socket in dir may live in: dir
// alone, or when dir is the fallback directory, the fallback directories in
// the order both ends try them.
func (t trust) candidates(dir string) []string {
	if dir != t.fallbackDir() {
		return []string{dir}
	}
	dirs := []string{dir}
	for i := 1; i < fallbackDirs; i++ {
		dirs = append(dirs, dir+"."+strconv.Itoa(i))
	}
	return dirs
}

// search looks through the fallback directories for the first that is a
// directory of the user's. Failing that, it returns those that do not
// exist, in order, and describes those it skipped.
func (t trust) search(dirs []string) (ours string, missing, skipped []string) {
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
			uid := t.owner(d, fi)
			if uid == t.euid {
				return d, nil, nil
			}
			skipped = append(skipped, fmt.Sprintf("%s belongs to %s", d, sockos.DescribeUID(uid)))
		}
	}
	return "", missing, skipped
}

// listenPath returns where a server should bind the socket asked for as
// path: path itself, or for a socket in the fallback directory, the same
// name in the first fallback directory that is the user's or that Listen
// can create (see the package Caveats). It makes the directory private or
// refuses it with ErrUnsafeDir.
func (t trust) listenPath(path string, log *slog.Logger) (string, error) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	dirs := t.candidates(dir)
	if len(dirs) == 1 {
		return path, t.secureDir(dir, log)
	}
	ours, missing, skipped := t.search(dirs)
	for _, d := range missing {
		if ours != "" {
			break
		}
		err := sockos.MkdirPrivate(d)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		// Made now, or by someone else in the meantime: look again.
		if o, _, s := t.search([]string{d}); o != "" {
			ours = o
		} else {
			skipped = append(skipped, s...)
		}
	}
	if ours == "" {
		return "", fmt.Errorf("no usable socket directory: %s: %w", strings.Join(skipped, "; "), ErrUnsafeDir)
	}
	for _, s := range skipped {
		log.Warn("socket directory skipped: it is not the user's", "reason", s, "using", ours)
	}
	return filepath.Join(ours, name), t.secureDir(ours, log)
}

// dialPath returns where a client finds the socket asked for as path: path
// itself, or for a socket in the fallback directory, the same name in the
// first fallback directory that is the user's, as Listen chose it. The
// directory must be the user's and private: anything else is ErrUnsafeDir,
// and a missing one ErrNoDaemon.
func (t trust) dialPath(path string) (string, error) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	dirs := t.candidates(dir)
	if len(dirs) > 1 {
		ours, _, skipped := t.search(dirs)
		if ours == "" {
			if len(skipped) > 0 {
				return "", fmt.Errorf("dial %s: no socket directory of the user's: %s: %w: %w", path, strings.Join(skipped, "; "), ErrNoDaemon, ErrUnsafeDir)
			}
			return "", fmt.Errorf("dial %s: %w: %w", path, ErrNoDaemon, fs.ErrNotExist)
		}
		dir, path = ours, filepath.Join(ours, name)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("dial %s: %w: %w", path, ErrNoDaemon, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("dial %s: %s is not a directory: %w", path, dir, ErrNoDaemon)
	}
	if uid := t.owner(dir, fi); uid != t.euid {
		return "", fmt.Errorf("dial %s: directory %s belongs to %s, not to uid %d: %w", path, dir, sockos.DescribeUID(uid), t.euid, ErrUnsafeDir)
	}
	if err := sockos.CheckPrivate(dir, fi); err != nil {
		return "", fmt.Errorf("dial %s: %w", path, err)
	}
	return path, nil
}

// secureDir makes dir private to the user (sockos.MkdirPrivate), with the parents
// it lacks, or checks that an existing dir belongs to the user and makes it
// private (sockos.MakePrivate), or refuses it with ErrUnsafeDir.
func (t trust) secureDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := sockos.MkdirPrivate(dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if uid := t.owner(dir, fi); uid != t.euid {
		return fmt.Errorf("directory %s belongs to %s, not to uid %d: %w", dir, sockos.DescribeUID(uid), t.euid, ErrUnsafeDir)
	}
	return sockos.MakePrivate(dir, fi, log)
}

// checkServer makes sure the process on the other end of nc runs as the
// user.
func (t trust) checkServer(nc *net.UnixConn, path string) error {
	uid, err := t.peerUID(nc)
	if err != nil {
		return fmt.Errorf("dial %s: cannot read the server's credentials: %v: %w", path, err, ErrUntrustedServer)
	}
	if uid != t.euid {
		return fmt.Errorf("dial %s: the server runs as %s, not as uid %d: %w", path, sockos.DescribeUID(uid), t.euid, ErrUntrustedServer)
	}
	return nil
}
