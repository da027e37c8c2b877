package server_test

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/internal/trust"
	"github.com/amplidex/amplidex/query/server"
)

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
	uid, name := querytest.OtherUID()
	dir := filepath.Join(querytest.PrivateDir(t), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	defer s.Close()
	server.SetHooks(s, server.Hooks{Owner: querytest.OwnedBy(uid, dir)})
	err := s.Listen(filepath.Join(dir, "amplidex.sock"))
	if !errors.Is(err, query.ErrUnsafeDir) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Listen = %v, want ErrUnsafeDir naming %s", err, name)
	}
	if _, err := os.Lstat(filepath.Join(dir, "amplidex.sock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Listen left a socket in a directory of another user: %v", err)
	}
}

// TestFallbackDirectorySquatted: a first fallback directory of another
// user is left as it is, with a warning, and the socket goes to the next;
// query's test of the same name finds it there.
func TestFallbackDirectorySquatted(t *testing.T) {
	uid, name := querytest.OtherUID()
	tmp := querytest.PrivateDir(t)
	base := querytest.FallbackBase(tmp)
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	asked := filepath.Join(base, "0123456789abcdef.sock")

	var log lockedBuffer
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	s.Logger = slog.New(slog.NewTextHandler(&log, nil))
	server.SetHooks(s, server.Hooks{TempDir: tmp, Owner: querytest.OwnedBy(uid, base)})
	if err := s.Listen(asked); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer s.Close()
	if want := filepath.Join(base+".1", "0123456789abcdef.sock"); s.Path() != want {
		t.Errorf("Path = %s, want %s", s.Path(), want)
	}
	querytest.AssertMode(t, base+".1", 0o700|fs.ModeDir)
	querytest.AssertMode(t, base, 0o755|fs.ModeDir) // not touched
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("Listen wrote into the squatted directory: %v", entries)
	}
	if !strings.Contains(log.String(), "socket directory skipped") || !strings.Contains(log.String(), name) {
		t.Errorf("log should warn about %s, owned by %s:\n%s", base, name, log.String())
	}

	c := querytest.DialClient(t, s.Path())
	var got string
	if _, err := c.Call(querytest.Context(t), "echo", "hello", &got); err != nil || got != "hello" {
		t.Fatalf("Call = %q, %v", got, err)
	}
}

// TestFallbackSearchAgrees: Listen puts the socket in the fallback
// directory querytest.FallbackCases says, where query's test of the same
// name has Dial look for it.
func TestFallbackSearchAgrees(t *testing.T) {
	uid, _ := querytest.OtherUID()
	for _, tc := range querytest.FallbackCases() {
		t.Run(tc.Name, func(t *testing.T) {
			tmp := querytest.PrivateDir(t)
			base := querytest.FallbackBase(tmp)
			asked := filepath.Join(base, "x.sock")
			h := querytest.NewHandler()
			s := server.New(h, h.Clock)
			server.SetHooks(s, server.Hooks{TempDir: tmp, Owner: querytest.OwnedBy(uid, tc.Prepare(t, base)...)})
			if err := s.Listen(asked); err != nil {
				t.Fatalf("Listen: %v", err)
			}
			defer s.Close()
			if want := filepath.Join(base+tc.Want, "x.sock"); s.Path() != want {
				t.Errorf("Path = %s, want %s", s.Path(), want)
			}
			c := querytest.DialClient(t, s.Path())
			if _, err := c.Call(querytest.Context(t), "echo", 1, nil); err != nil {
				t.Errorf("Call: %v", err)
			}
		})
	}
}

func TestFallbackDirectoriesAllSquatted(t *testing.T) {
	uid, name := querytest.OtherUID()
	tmp := querytest.PrivateDir(t)
	base := querytest.FallbackBase(tmp)
	squatted := []string{base}
	querytest.Mkdir(t, base, 0o700)
	for i := 1; i < trust.FallbackDirs; i++ {
		d := base + "." + strconv.Itoa(i)
		querytest.Mkdir(t, d, 0o700)
		squatted = append(squatted, d)
	}
	hooks := server.Hooks{TempDir: tmp, Owner: querytest.OwnedBy(uid, squatted...)}
	h := querytest.NewHandler()
	s := server.New(h, h.Clock)
	defer s.Close()
	server.SetHooks(s, hooks)
	err := s.Listen(filepath.Join(base, "x.sock"))
	if !errors.Is(err, query.ErrUnsafeDir) || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Listen = %v, want ErrUnsafeDir naming %s and %s", err, base, name)
	}
	if _, err := os.Lstat(base + "." + strconv.Itoa(trust.FallbackDirs)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Listen went past the last fallback directory: %v", err)
	}
}
