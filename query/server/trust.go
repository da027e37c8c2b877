package server

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/sockos"
	"github.com/amplidex/amplidex/query/internal/trust"
)

// listenPath returns where a server should bind the socket asked for as
// path: path itself, or for a socket in the fallback directory, the same
// name in the first fallback directory that is the user's or that Listen
// can create (see the package Caveats). It makes the directory private or
// refuses it with query.ErrUnsafeDir.
func listenPath(t trust.User, path string, log *slog.Logger) (string, error) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	dirs := t.Candidates(dir)
	if len(dirs) == 1 {
		return path, secureDir(t, dir, log)
	}
	ours, missing, skipped := t.Search(dirs)
	for _, d := range missing {
		if ours != "" {
			break
		}
		err := sockos.MkdirPrivate(d)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		// Made now, or by someone else in the meantime: look again.
		if o, _, s := t.Search([]string{d}); o != "" {
			ours = o
		} else {
			skipped = append(skipped, s...)
		}
	}
	if ours == "" {
		return "", fmt.Errorf("no usable socket directory: %s: %w", strings.Join(skipped, "; "), query.ErrUnsafeDir)
	}
	for _, s := range skipped {
		log.Warn("socket directory skipped: it is not the user's", "reason", s, "using", ours)
	}
	return filepath.Join(ours, name), secureDir(t, ours, log)
}

// secureDir makes dir private to the user (sockos.MkdirPrivate), with the parents
// it lacks, or checks that an existing dir belongs to the user and makes it
// private (sockos.MakePrivate), or refuses it with query.ErrUnsafeDir.
func secureDir(t trust.User, dir string, log *slog.Logger) error {
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
	if uid := t.Owner(dir, fi); uid != t.Euid {
		return fmt.Errorf("directory %s belongs to %s, not to uid %d: %w", dir, sockos.DescribeUID(uid), t.Euid, query.ErrUnsafeDir)
	}
	return sockos.MakePrivate(dir, fi, log)
}
