package service

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateUnits = flag.Bool("update-units", false, "rewrite packaging/systemd from PackagedUnits")

// unitsDir holds the systemd user units the packages install.
var unitsDir = filepath.Join("..", "..", "packaging", "systemd")

// TestPackagedUnits: the unit files the packages install are what
// PackagedUnits writes (go test -run TestPackagedUnits -update-units
// rewrites them), and they name the socket through %t, not a path.
func TestPackagedUnits(t *testing.T) {
	units, err := PackagedUnits()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		p := filepath.Join(unitsDir, u.Path)
		if *updateUnits {
			if err := os.MkdirAll(unitsDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(u.Content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != u.Content {
			t.Errorf("%s is not what PackagedUnits writes (go test -run TestPackagedUnits -update-units rewrites it):\n%s\nwant:\n%s", p, got, u.Content)
		}
	}
	want := map[string][]string{
		SocketUnit:  {"ListenStream=%t/amplidex/amplidex.sock\n", "WantedBy=sockets.target\n"},
		ServiceUnit: {`ExecStart="/usr/bin/amplidex" "daemon" "--service"` + "\n", "Requires=amplidex.socket\n"},
	}
	for _, u := range units {
		for _, w := range want[u.Path] {
			if !strings.Contains(u.Content, w) {
				t.Errorf("%s lacks %q:\n%s", u.Path, w, u.Content)
			}
		}
		if strings.Contains(u.Content, "/run/user") || strings.Contains(u.Content, "/home/") || strings.Contains(u.Content, "Environment=") {
			t.Errorf("%s names a user's paths or environment:\n%s", u.Path, u.Content)
		}
	}
}

func TestRuntimeSocketOf(t *testing.T) {
	for _, tc := range []struct {
		socket, runtimeDir string
		want               string
	}{
		{"/run/user/1000/amplidex/amplidex.sock", "/run/user/1000", "amplidex/amplidex.sock"},
		{"/run/user/1000/amplidex/amplidex.sock", "/run/user/1000/", "amplidex/amplidex.sock"},
		{"/run/user/1000/amplidex/amplidex.sock", "/run/user/1001", ""}, // another uid's
		{"/tmp/rt/amplidex/amplidex.sock", "/tmp/rt", ""},               // not systemd's
		{"/home/u/.amplidex/amplidex.sock", "/run/user/1000", ""},       // AMPLIDEX_HOME
		{"/run/user/10000/amplidex.sock", "/run/user/1000", ""},
		{"/run/user/1000/a%b/amplidex.sock", "/run/user/1000", "a%b/amplidex.sock"},
	} {
		getenv := func(k string) string { return map[string]string{"XDG_RUNTIME_DIR": tc.runtimeDir}[k] }
		if got := runtimeSocket(tc.socket, getenv, 1000); got != tc.want {
			t.Errorf("runtimeSocket(%s) with XDG_RUNTIME_DIR=%s: %q, want %q", tc.socket, tc.runtimeDir, got, tc.want)
		}
	}
}
