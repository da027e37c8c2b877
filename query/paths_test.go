package query_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/sockos"
)

func TestDefaultPaths(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want query.Paths
	}{
		{
			name: "AMPLIDEX_HOME wins",
			env:  map[string]string{"AMPLIDEX_HOME": "/work/home/", "HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1"},
			want: query.Paths{
				Config:   "/work/home/config.toml",
				Index:    "/work/home/index.db",
				Socket:   "/work/home/amplidex.sock",
				PidFile:  "/work/home/amplidex.pid",
				StateDir: "/work/home",
			},
		},
		{
			name: "XDG defaults",
			env:  map[string]string{"HOME": "/home/u"},
			want: query.Paths{
				Config:   "/home/u/.config/amplidex/config.toml",
				Index:    "/home/u/.local/state/amplidex/index.db",
				Socket:   "/home/u/.local/state/amplidex/amplidex.sock",
				PidFile:  "/home/u/.local/state/amplidex/amplidex.pid",
				StateDir: "/home/u/.local/state/amplidex",
			},
		},
		{
			name: "XDG variables",
			env: map[string]string{
				"HOME":            "/home/u",
				"XDG_CONFIG_HOME": "/cfg",
				"XDG_STATE_HOME":  "/state",
				"XDG_RUNTIME_DIR": "/run/user/1000",
			},
			want: query.Paths{
				Config:   "/cfg/amplidex/config.toml",
				Index:    "/state/amplidex/index.db",
				Socket:   "/run/user/1000/amplidex/amplidex.sock",
				PidFile:  "/run/user/1000/amplidex/amplidex.pid",
				StateDir: "/state/amplidex",
			},
		},
		{
			name: "relative XDG values are ignored",
			env: map[string]string{
				"HOME":            "/home/u",
				"XDG_CONFIG_HOME": "cfg",
				"XDG_STATE_HOME":  "./state",
				"XDG_RUNTIME_DIR": "run",
			},
			want: query.Paths{
				Config:   "/home/u/.config/amplidex/config.toml",
				Index:    "/home/u/.local/state/amplidex/index.db",
				Socket:   "/home/u/.local/state/amplidex/amplidex.sock",
				PidFile:  "/home/u/.local/state/amplidex/amplidex.pid",
				StateDir: "/home/u/.local/state/amplidex",
			},
		},
		{
			name: "no HOME needed when XDG is set",
			env:  map[string]string{"XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s"},
			want: query.Paths{
				Config:   "/c/amplidex/config.toml",
				Index:    "/s/amplidex/index.db",
				Socket:   "/s/amplidex/amplidex.sock",
				PidFile:  "/s/amplidex/amplidex.pid",
				StateDir: "/s/amplidex",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := query.DefaultPaths(mapEnv(tc.env))
			if err != nil {
				t.Fatalf("DefaultPaths: %v", err)
			}
			if got != tc.want {
				t.Errorf("DefaultPaths =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestDefaultPathsErrors(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantMsg string
	}{
		{"relative AMPLIDEX_HOME", map[string]string{"AMPLIDEX_HOME": "rel/home"}, `AMPLIDEX_HOME "rel/home" is not an absolute path`},
		{"no HOME", map[string]string{}, "$XDG_CONFIG_HOME is unset"},
		{"relative HOME", map[string]string{"HOME": "home", "XDG_CONFIG_HOME": "/c"}, "$XDG_STATE_HOME is unset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := query.DefaultPaths(mapEnv(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("DefaultPaths = %v, want an error with %q", err, tc.wantMsg)
			}
		})
	}
}

func TestDefaultPathsLongSocket(t *testing.T) {
	home := "/" + strings.Repeat("long-directory-name/", 6)
	got, err := query.DefaultPaths(mapEnv(map[string]string{"AMPLIDEX_HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.TrimSuffix(home, "/") + "/amplidex.sock"
	sum := sha256.Sum256([]byte(long))
	want := fmt.Sprintf("/tmp/amplidex-%d/%s.sock", os.Geteuid(), hex.EncodeToString(sum[:8]))
	if got.Socket != want {
		t.Errorf("Socket = %q, want %q", got.Socket, want)
	}
	if len(got.Socket) > sockos.MaxPath {
		t.Errorf("the short socket path is still %d bytes", len(got.Socket))
	}
	if got.PidFile != strings.TrimSuffix(home, "/")+"/amplidex.pid" || got.Index != strings.TrimSuffix(home, "/")+"/index.db" {
		t.Errorf("only the socket moves: %+v", got)
	}

	other, err := query.DefaultPaths(mapEnv(map[string]string{"AMPLIDEX_HOME": home + "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if other.Socket == got.Socket {
		t.Errorf("two homes share the socket %s", got.Socket)
	}
}

func mapEnv(env map[string]string) func(string) string {
	return func(key string) string { return env[key] }
}
