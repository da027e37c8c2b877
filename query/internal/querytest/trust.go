package querytest

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/amplidex/amplidex/query/internal/sockos"
)

// OtherUID is a uid that is not the test's, with a user name when the
// system has one for it.
func OtherUID() (int, string) {
	uid := 0
	if os.Geteuid() == 0 {
		uid = 65534
	}
	want := fmt.Sprintf("uid %d", uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		want = fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return uid, want
}

// OwnedBy returns an owner function that says the given paths belong to
// uid, and asks the system about the others.
func OwnedBy(uid int, paths ...string) func(string, fs.FileInfo) int {
	return func(path string, fi fs.FileInfo) int {
		for _, p := range paths {
			if filepath.Clean(path) == filepath.Clean(p) {
				return uid
			}
		}
		return sockos.FileOwner(path, fi)
	}
}

// FallbackBase returns the first fallback socket directory under tmp.
func FallbackBase(tmp string) string {
	return filepath.Join(tmp, "amplidex-"+strconv.Itoa(os.Geteuid()))
}

// Mkdir makes dir with mode, whatever the umask.
func Mkdir(t testing.TB, dir string, mode fs.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// FallbackCase is a state of the fallback socket directories, and the one
// both ends must choose in it: the server's Listen puts the socket there,
// and the client's Dial looks for it there.
type FallbackCase struct {
	Name string
	// Prepare makes the fallback directories, the first at base, and
	// returns those that belong to another user.
	Prepare func(t testing.TB, base string) []string
	// Want is the suffix of the chosen directory after base.
	Want string
}

// FallbackCases are the cases the tests of both ends share, so that they
// agree.
func FallbackCases() []FallbackCase {
	return []FallbackCase{
		{"free", func(t testing.TB, base string) []string { return nil }, ""},
		{"the user's", func(t testing.TB, base string) []string {
			Mkdir(t, base, 0o700)
			return nil
		}, ""},
		{"an earlier choice of the user's wins over a free one", func(t testing.TB, base string) []string {
			Mkdir(t, base, 0o700)
			Mkdir(t, base+".2", 0o700)
			return []string{base}
		}, ".2"},
		{"the first free one after squatted ones", func(t testing.TB, base string) []string {
			Mkdir(t, base, 0o700)
			Mkdir(t, base+".1", 0o700)
			return []string{base, base + ".1"}
		}, ".2"},
		{"a link is skipped", func(t testing.TB, base string) []string {
			target := filepath.Join(filepath.Dir(base), "elsewhere")
			Mkdir(t, target, 0o700)
			if err := os.Symlink(target, base); err != nil {
				t.Fatal(err)
			}
			return nil
		}, ".1"},
		{"a file is skipped", func(t testing.TB, base string) []string {
			if err := os.WriteFile(base, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return nil
		}, ".1"},
	}
}
