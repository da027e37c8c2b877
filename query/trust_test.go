package query_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

func TestDialRefusesUnsafeDirectory(t *testing.T) {
	uid, name := querytest.OtherUID()
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
			_, path := querytest.StartServer(t, querytest.NewHandler())
			dir := filepath.Dir(path)
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o700) })
			hooks := query.Hooks{}
			if tc.foreign {
				hooks.Owner = querytest.OwnedBy(uid, dir)
			}
			c, err := query.DialHooked(querytest.Context(t), path, hooks)
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
	uid, name := querytest.OtherUID()
	h := querytest.NewHandler()
	_, path := querytest.StartServer(t, h)

	c, err := query.DialHooked(querytest.Context(t), path, query.Hooks{PeerUID: func(*net.UnixConn) (int, error) { return uid, nil }})
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, query.ErrUntrustedServer) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Dial = %v, want ErrUntrustedServer naming %s", err, name)
	}

	c, err = query.DialHooked(querytest.Context(t), path, query.Hooks{PeerUID: func(*net.UnixConn) (int, error) { return -1, errors.New("no credentials") }})
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, query.ErrUntrustedServer) || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("Dial = %v, want ErrUntrustedServer saying why", err)
	}

	// Each subscription has a connection of its own, checked the same way.
	var calls atomic.Int32
	c, err = query.DialHooked(querytest.Context(t), path, query.Hooks{PeerUID: func(*net.UnixConn) (int, error) {
		if calls.Add(1) == 1 {
			return os.Geteuid(), nil
		}
		return uid, nil
	}})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if _, err := c.Subscribe(querytest.Context(t), "watch", nil); !errors.Is(err, query.ErrUntrustedServer) {
		t.Fatalf("Subscribe = %v, want ErrUntrustedServer", err)
	}
	if h.Tick.Load() != 0 {
		t.Errorf("a refused server was sent requests")
	}
}

// TestFallbackDirectorySquatted: before the daemon runs, a client finds
// no fallback directory of the user's when another user took the first;
// once the server has gone to the next (query/server's test of the same
// name), the client finds it there.
func TestFallbackDirectorySquatted(t *testing.T) {
	uid, name := querytest.OtherUID()
	tmp := querytest.PrivateDir(t)
	base := querytest.FallbackBase(tmp)
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := query.Hooks{TempDir: tmp, Owner: querytest.OwnedBy(uid, base)}
	asked := filepath.Join(base, "0123456789abcdef.sock")

	_, err := query.DialHooked(querytest.Context(t), asked, hooks)
	if !errors.Is(err, query.ErrNoDaemon) || !errors.Is(err, query.ErrUnsafeDir) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Dial before Listen = %v, want ErrNoDaemon and ErrUnsafeDir naming %s", err, name)
	}

	listenAt(t, filepath.Join(base+".1", "0123456789abcdef.sock"))
	c, err := query.DialHooked(querytest.Context(t), asked, hooks)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	var got string
	if _, err := c.Call(querytest.Context(t), "echo", "hello", &got); err != nil || got != "hello" {
		t.Fatalf("Call = %q, %v", got, err)
	}
}

// TestFallbackSearchAgrees: Dial looks for the socket in the fallback
// directory querytest.FallbackCases says, where query/server's test of
// the same name has Listen put it.
func TestFallbackSearchAgrees(t *testing.T) {
	uid, _ := querytest.OtherUID()
	for _, tc := range querytest.FallbackCases() {
		t.Run(tc.Name, func(t *testing.T) {
			tmp := querytest.PrivateDir(t)
			base := querytest.FallbackBase(tmp)
			hooks := query.Hooks{TempDir: tmp, Owner: querytest.OwnedBy(uid, tc.Prepare(t, base)...)}
			listenAt(t, filepath.Join(base+tc.Want, "x.sock"))
			c, err := query.DialHooked(querytest.Context(t), filepath.Join(base, "x.sock"), hooks)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
				t.Errorf("Call: %v", err)
			}
		})
	}
}

// listenAt serves a test handler on a socket at path, as Listen puts it
// in the fallback directory it chose, until the test ends.
func listenAt(t *testing.T, path string) {
	t.Helper()
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	if err := s.Listen(path); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { s.Close() })
}
