package query_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/amplidex/amplidex/query"
)

// otherUID is a uid that is not the test's, with a user name when the
// system has one for it.
func otherUID() (int, string) {
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

// ownedBy returns an owner function that says the given paths belong to
// uid, and asks the system about the others.
func ownedBy(uid int, paths ...string) func(string, fs.FileInfo) int {
	return func(path string, fi fs.FileInfo) int {
		for _, p := range paths {
			if filepath.Clean(path) == filepath.Clean(p) {
				return uid
			}
		}
		return query.FileOwner(path, fi)
	}
}

// fallbackBase returns the first fallback socket directory under tmp.
func fallbackBase(tmp string) string {
	return filepath.Join(tmp, "amplidex-"+strconv.Itoa(os.Geteuid()))
}

// lockedBuffer is a log destination for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex // guards fields below
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestListenRefusesDirectoryOfAnotherUser(t *testing.T) {
	uid, name := otherUID()
	dir := filepath.Join(privateDir(t), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := newTestHandler()
	s := query.NewServer(h, h.clock)
	defer s.Close()
	query.SetHooks(s, query.Hooks{Owner: ownedBy(uid, dir)})
	err := s.Listen(filepath.Join(dir, "amplidex.sock"))
	if !errors.Is(err, query.ErrUnsafeDir) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Listen = %v, want ErrUnsafeDir naming %s", err, name)
	}
	if _, err := os.Lstat(filepath.Join(dir, "amplidex.sock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Listen left a socket in a directory of another user: %v", err)
	}
}

func TestDialRefusesUnsafeDirectory(t *testing.T) {
	uid, name := otherUID()
	tests := []struct {
		name    string
		mode    fs.FileMode
		foreign bool
		wantMsg string
	}{
		{"readable by others", 0o755, false, "mode 0755"},
		{"readable by the group", 0o750, false, "mode 0750"},
		{"writable by others", 0o777, false, "mode 0777"},
		{"writable by others, sticky", 0o777 | fs.ModeSticky, false, "mode 01777"},
		{"set-group-id, readable by others", 0o755 | fs.ModeSetgid, false, "mode 02755"},
		{"another user's", 0o700, true, name},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, path := startServer(t, newTestHandler())
			dir := filepath.Dir(path)
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o700) })
			hooks := query.Hooks{}
			if tc.foreign {
				hooks.Owner = ownedBy(uid, dir)
			}
			c, err := query.DialHooked(testContext(t), path, hooks)
			if err == nil {
				c.Close()
			}
			if !errors.Is(err, query.ErrUnsafeDir) || errors.Is(err, query.ErrNoDaemon) {
				t.Fatalf("Dial = %v, want ErrUnsafeDir (and not ErrNoDaemon)", err)
			}
			if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q should name %s and say %q", err, dir, tc.wantMsg)
			}
		})
	}
}

func TestDialRefusesServerOfAnotherUser(t *testing.T) {
	uid, name := otherUID()
	h := newTestHandler()
	_, path := startServer(t, h)

	c, err := query.DialHooked(testContext(t), path, query.Hooks{PeerUID: func(*net.UnixConn) (int, error) { return uid, nil }})
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, query.ErrUntrustedServer) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Dial = %v, want ErrUntrustedServer naming %s", err, name)
	}

	c, err = query.DialHooked(testContext(t), path, query.Hooks{PeerUID: func(*net.UnixConn) (int, error) { return -1, errors.New("no credentials") }})
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, query.ErrUntrustedServer) || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("Dial = %v, want ErrUntrustedServer saying why", err)
	}

	// Each subscription has a connection of its own, checked the same way.
	var calls atomic.Int32
	c, err = query.DialHooked(testContext(t), path, query.Hooks{PeerUID: func(*net.UnixConn) (int, error) {
		if calls.Add(1) == 1 {
			return os.Geteuid(), nil
		}
		return uid, nil
	}})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if _, err := c.Subscribe(testContext(t), "watch", nil); !errors.Is(err, query.ErrUntrustedServer) {
		t.Fatalf("Subscribe = %v, want ErrUntrustedServer", err)
	}
	if h.tick.Load() != 0 {
		t.Errorf("a refused server was sent requests")
	}
}

func TestFallbackDirectorySquatted(t *testing.T) {
	uid, name := otherUID()
	tmp := privateDir(t)
	base := fallbackBase(tmp)
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := query.Hooks{TempDir: tmp, Owner: ownedBy(uid, base)}
	asked := filepath.Join(base, "0123456789abcdef.sock")

	// Before the daemon runs, the client finds no directory of the user's.
	_, err := query.DialHooked(testContext(t), asked, hooks)
	if !errors.Is(err, query.ErrNoDaemon) || !errors.Is(err, query.ErrUnsafeDir) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Dial before Listen = %v, want ErrNoDaemon and ErrUnsafeDir naming %s", err, name)
	}

	var log lockedBuffer
	h := newTestHandler()
	s := query.NewServer(h, h.clock)
	s.Logger = slog.New(slog.NewTextHandler(&log, nil))
	query.SetHooks(s, hooks)
	if err := s.Listen(asked); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer s.Close()
	if want := filepath.Join(base+".1", "0123456789abcdef.sock"); s.Path() != want {
		t.Errorf("Path = %s, want %s", s.Path(), want)
	}
	assertMode(t, base+".1", 0o700|fs.ModeDir)
	assertMode(t, base, 0o755|fs.ModeDir) // not touched
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("Listen wrote into the squatted directory: %v", entries)
	}
	if !strings.Contains(log.String(), "socket directory skipped") || !strings.Contains(log.String(), name) {
		t.Errorf("log should warn about %s, owned by %s:\n%s", base, name, log.String())
	}

	c, err := query.DialHooked(testContext(t), asked, hooks)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	var got string
	if _, err := c.Call(testContext(t), "echo", "hello", &got); err != nil || got != "hello" {
		t.Fatalf("Call = %q, %v", got, err)
	}
}

func TestFallbackSearchAgrees(t *testing.T) {
	uid, _ := otherUID()
	tests := []struct {
		name string
		// prepare makes the fallback directories and returns those that
		// belong to another user.
		prepare func(t *testing.T, base string) []string
		want    string // suffix of the chosen directory
	}{
		{"free", func(t *testing.T, base string) []string { return nil }, ""},
		{"the user's", func(t *testing.T, base string) []string {
			mkdir(t, base, 0o700)
			return nil
		}, ""},
		{"an earlier choice of the user's wins over a free one", func(t *testing.T, base string) []string {
			mkdir(t, base, 0o700)
			mkdir(t, base+".2", 0o700)
			return []string{base}
		}, ".2"},
		{"the first free one after squatted ones", func(t *testing.T, base string) []string {
			mkdir(t, base, 0o700)
			mkdir(t, base+".1", 0o700)
			return []string{base, base + ".1"}
		}, ".2"},
		{"a link is skipped", func(t *testing.T, base string) []string {
			target := filepath.Join(filepath.Dir(base), "elsewhere")
			mkdir(t, target, 0o700)
			if err := os.Symlink(target, base); err != nil {
				t.Fatal(err)
			}
			return nil
		}, ".1"},
		{"a file is skipped", func(t *testing.T, base string) []string {
			if err := os.WriteFile(base, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return nil
		}, ".1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := privateDir(t)
			base := fallbackBase(tmp)
			hooks := query.Hooks{TempDir: tmp, Owner: ownedBy(uid, tc.prepare(t, base)...)}
			asked := filepath.Join(base, "x.sock")
			h := newTestHandler()
			s := query.NewServer(h, h.clock)
			query.SetHooks(s, hooks)
			if err := s.Listen(asked); err != nil {
				t.Fatalf("Listen: %v", err)
			}
			defer s.Close()
			if want := filepath.Join(base+tc.want, "x.sock"); s.Path() != want {
				t.Errorf("Path = %s, want %s", s.Path(), want)
			}
			c, err := query.DialHooked(testContext(t), asked, hooks)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			if _, err := c.Call(testContext(t), "echo", 1, nil); err != nil {
				t.Errorf("Call: %v", err)
			}
		})
	}
}

func TestFallbackDirectoriesAllSquatted(t *testing.T) {
	uid, name := otherUID()
	tmp := privateDir(t)
	base := fallbackBase(tmp)
	squatted := []string{base}
	mkdir(t, base, 0o700)
	for i := 1; i < query.FallbackDirs; i++ {
		d := base + "." + strconv.Itoa(i)
		mkdir(t, d, 0o700)
		squatted = append(squatted, d)
	}
	hooks := query.Hooks{TempDir: tmp, Owner: ownedBy(uid, squatted...)}
	h := newTestHandler()
	s := query.NewServer(h, h.clock)
	defer s.Close()
	query.SetHooks(s, hooks)
	err := s.Listen(filepath.Join(base, "x.sock"))
	if !errors.Is(err, query.ErrUnsafeDir) || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Listen = %v, want ErrUnsafeDir naming %s and %s", err, base, name)
	}
	if _, err := os.Lstat(base + "." + strconv.Itoa(query.FallbackDirs)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Listen went past the last fallback directory: %v", err)
	}
}

func mkdir(t *testing.T, dir string, mode fs.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}
