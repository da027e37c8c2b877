package query

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/query/internal/sockos"
	"github.com/amplidex/amplidex/query/internal/trust"
)

// ErrUnsafeDir is returned by Dial, and by the server's Listen (package
// query/server), when the socket's directory belongs to another user or
// is open to others: Listen refuses one writable by group or others, Dial
// one with any permission for them.
var ErrUnsafeDir = sockos.ErrUnsafeDir

// ErrUntrustedServer is returned by Dial (and Subscribe) when the process
// answering on the socket does not run as the client's effective uid, or
// its uid cannot be read. Nothing is sent to it.
var ErrUntrustedServer = errors.New("query: the server is not the user's")

// dialPath returns where a client finds the socket asked for as path: path
// itself, or for a socket in the fallback directory, the same name in the
// first fallback directory that is the user's, as Listen chose it. The
// directory must be the user's and private: anything else is ErrUnsafeDir,
// and a missing one ErrNoDaemon.
func dialPath(t trust.User, path string) (string, error) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	dirs := t.Candidates(dir)
	if len(dirs) > 1 {
		ours, _, skipped := t.Search(dirs)
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
	if uid := t.Owner(dir, fi); uid != t.Euid {
		return "", fmt.Errorf("dial %s: directory %s belongs to %s, not to uid %d: %w", path, dir, sockos.DescribeUID(uid), t.Euid, ErrUnsafeDir)
	}
	if err := sockos.CheckPrivate(dir, fi); err != nil {
		return "", fmt.Errorf("dial %s: %w", path, err)
	}
	return path, nil
}

// checkServer makes sure the process on the other end of nc runs as the
// user.
func checkServer(t trust.User, nc *net.UnixConn, path string) error {
	uid, err := t.PeerUID(nc)
	if err != nil {
		return fmt.Errorf("dial %s: cannot read the server's credentials: %v: %w", path, err, ErrUntrustedServer)
	}
	if uid != t.Euid {
		return fmt.Errorf("dial %s: the server runs as %s, not as uid %d: %w", path, sockos.DescribeUID(uid), t.Euid, ErrUntrustedServer)
	}
	return nil
}
