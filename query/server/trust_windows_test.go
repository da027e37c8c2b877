package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

// wantPrivate fails the test unless dir is the user's, with a protected
// DACL that lets in the user and SYSTEM alone.
func wantPrivate(t *testing.T, dir string) {
	t.Helper()
	user, err := querytest.UserSID()
	if err != nil {
		t.Fatal(err)
	}
	sids, protected, owned, err := querytest.DirEntries(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(sids)
	want := []string{user, "S-1-5-18"}
	slices.Sort(want)
	if !protected || !owned || !slices.Equal(sids, want) {
		t.Errorf("%s: entries for %q, protected %v, the user's %v; want %q, protected, the user's", dir, sids, protected, owned, want)
	}
}

func TestListenCreatesPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	defer s.Close()
	if err := s.Listen(filepath.Join(dir, "amplidex.sock")); err != nil {
		t.Fatal(err)
	}
	wantPrivate(t, dir)
}

func TestListenMakesDirectoryPrivate(t *testing.T) {
	for _, sddl := range []string{
		"D:(A;OICI;FA;;;<user>)",                        // inheriting the parent's entries
		"D:P(A;OICI;FA;;;<user>)(A;OICI;0x1301bf;;;AU)", // others may modify it
	} {
		t.Run(sddl, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := querytest.SetDACL(dir, sddl); err != nil {
				t.Fatal(err)
			}
			h := querytest.NewHandler()
			s := server.New(h, h.Clock)
			defer s.Close()
			if err := s.Listen(filepath.Join(dir, "amplidex.sock")); err != nil {
				t.Fatal(err)
			}
			wantPrivate(t, dir)
		})
	}
}
