//go:build unix

package sockos

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
)

// FallbackTmp holds the socket directories query.DefaultPaths falls back to.
func FallbackTmp() string { return "/tmp" }

// FileOwner returns the uid in fi's stat, or -1 when it has none.
func FileOwner(_ string, fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// MkdirPrivate creates the directory dir with mode 0700; its parent must
// exist. An existing dir is an error wrapping fs.ErrExist.
func MkdirPrivate(dir string) error { return os.Mkdir(dir, 0o700) }

// MakePrivate makes the user's directory dir, described by fi, mode 0700,
// or refuses it with ErrUnsafeDir when it is writable by others: what they
// may have put in it cannot be told.
func MakePrivate(dir string, fi fs.FileInfo, _ *slog.Logger) error {
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 {
		return fmt.Errorf("directory %s has mode %s, writable by others (chmod 700 it, or use another directory): %w", dir, modeText(fi.Mode()), ErrUnsafeDir)
	}
	if perm != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// CheckPrivate returns an error wrapping ErrUnsafeDir when the user's
// directory dir, described by fi, gives others any permission.
func CheckPrivate(dir string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("directory %s has mode %s, open to other users (chmod 700 it): %w", dir, modeText(fi.Mode()), ErrUnsafeDir)
	}
	return nil
}

// modeText is a file mode as chmod and ls -l's numbers spell it: the
// permission bits, with the set-user-id, set-group-id and sticky bits
// ahead of them (01777 for /tmp, not 0777).
func modeText(m fs.FileMode) string {
	n := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		n |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		n |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		n |= 0o1000
	}
	return fmt.Sprintf("%#o", n)
}
