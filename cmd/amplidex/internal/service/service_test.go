package service

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogFileRotates: the log never grows past its cap; the text before
// the last rotation is in FILE.1, and only one rotated file is kept.
func TestLogFileRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	l, err := OpenLogFile(path, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 29) + "\n" // 30 bytes
	for i := range 10 {
		if _, err := io.WriteString(l, line); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path + ".1")
	if err != nil {
		t.Fatal(err)
	}
	// Three lines fit under the cap: 90 bytes rotated three times, then 30.
	if len(old) != 90 || len(cur) != 30 {
		t.Errorf("sizes %d and %d (.1), want 30 and 90", len(cur), len(old))
	}
	if _, err := os.Stat(path + ".2"); err == nil {
		t.Error("a second rotated file was kept")
	}
	if got := lastLogLine(path); got != strings.TrimSpace(line) {
		t.Errorf("last line %q", got)
	}
	// Reopened, it appends.
	l, err = OpenLogFile(path, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(l, "end\n")
	l.Close()
	if got := lastLogLine(path); got != "end" {
		t.Errorf("last line after reopening %q", got)
	}
}

func TestServiceFiles(t *testing.T) {
	spec := Spec{exe: "/opt/my tools/amplidex", config: "/etc/a%b.toml", socket: "/run/user/1/amplidex/amplidex.sock",
		stateDir: "/home/u/.local/state/amplidex", env: map[string]string{"AMPLIDEX_BUNDLED": "/a:/b", "XDG_STATE_HOME": "/s&<x>"}}
	getenv := func(k string) string {
		return map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/home/u/.cfg"}[k]
	}
	files, err := Files("linux", spec, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "/home/u/.cfg/systemd/user/amplidex.socket" || files[1].Path != "/home/u/.cfg/systemd/user/amplidex.service" {
		t.Fatalf("systemd files: %+v", files)
	}
	for _, want := range []string{
		"ListenStream=/run/user/1/amplidex/amplidex.sock\n",
		"DirectoryMode=0700\n",
	} {
		if !strings.Contains(files[0].Content, want) {
			t.Errorf("socket unit lacks %q:\n%s", want, files[0].Content)
		}
	}
	for _, want := range []string{
		`ExecStart="/opt/my tools/amplidex" "daemon" "--service" "--config" "/etc/a%%b.toml"` + "\n",
		`Environment="AMPLIDEX_BUNDLED=/a:/b"` + "\n",
		"Requires=amplidex.socket\n",
	} {
		if !strings.Contains(files[1].Content, want) {
			t.Errorf("service unit lacks %q:\n%s", want, files[1].Content)
		}
	}

	// The default socket, in the user manager's runtime directory, is
	// named through systemd's specifier.
	rt := spec
	rt.runtimeSocket = "amplidex/amplidex.sock"
	files, err = Files("linux", rt, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(files[0].Content, "ListenStream=%t/amplidex/amplidex.sock\n") {
		t.Errorf("socket unit for the default socket:\n%s", files[0].Content)
	}

	files, err = Files("darwin", spec, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "/home/u/Library/LaunchAgents/com.github.amplidex.plist" {
		t.Fatalf("launchd files: %+v", files)
	}
	var plist struct {
		Dict struct {
			Keys    []string `xml:"key"`
			Strings []string `xml:"string"`
			Array   struct {
				Strings []string `xml:"string"`
			} `xml:"array"`
			Dicts []struct {
				Keys    []string `xml:"key"`
				Strings []string `xml:"string"`
			} `xml:"dict"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal([]byte(files[0].Content), &plist); err != nil {
		t.Fatalf("the plist is not XML: %v\n%s", err, files[0].Content)
	}
	args := strings.Join(plist.Dict.Array.Strings, " ")
	if args != "/opt/my tools/amplidex daemon --service --config /etc/a%b.toml --log-file /home/u/.local/state/amplidex/daemon.log" {
		t.Errorf("ProgramArguments: %q", args)
	}
	if env := plist.Dict.Dicts[0]; strings.Join(env.Strings, " ") != "/a:/b /s&<x>" {
		t.Errorf("EnvironmentVariables: %+v", env)
	}

	if _, err := Files("plan9", spec, getenv); err == nil {
		t.Error("no error for a system without a known service manager")
	}
}

func TestXMLEscape(t *testing.T) {
	for _, s := range []string{"", "/opt/my tools/amplidex", `a&b<c>d"e'f`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f",
		"\xff\xfe", "é\uFFFD\U0001F600", "\uFFFE\uFFFF", "\xed\xa0\x80", "a\xc3"} {
		checkXMLEscape(t, s)
	}
}

func FuzzXMLEscape(f *testing.F) {
	f.Add("/s&<x>\t\xff")
	f.Fuzz(checkXMLEscape)
}

func checkXMLEscape(t *testing.T, s string) {
	var want strings.Builder
	if err := xml.EscapeText(&want, []byte(s)); err != nil {
		t.Fatal(err)
	}
	if got := xmlEscape(s); got != want.String() {
		t.Errorf("xmlEscape(%q) = %q, xml.EscapeText says %q", s, got, want.String())
	}
}

func TestLogFileBoundedWhenRotationFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "daemon.log")
	if err := os.MkdirAll(filepath.Join(path+".1", "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	const max = 1000
	l, err := OpenLogFile(path, max, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		fmt.Fprintf(l, "line %04d %s\n", i, strings.Repeat("x", 19)) // 30 bytes
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > max {
		t.Errorf("the log grew to %d bytes past its cap of %d", len(b), max)
	}
	if !strings.Contains(string(b), "could not be rotated") {
		t.Errorf("the log does not say it could not be rotated:\n%s", b)
	}
	if got := lastLogLine(path); !strings.HasPrefix(got, "line 0999 ") {
		t.Errorf("the last line %q is not the last one written", got)
	}
	if fi, err := os.Stat(filepath.Join(path+".1", "blocker")); err != nil || !fi.IsDir() {
		t.Errorf("the directory in the way was touched: %v", err)
	}
}

func TestServiceStatusHeader(t *testing.T) {
	rows := [][3]string{{"file", "/u/amplidex.socket", "installed"}, {"daemon", "-", "not running"}}
	for _, header := range []bool{true, false} {
		var b bytes.Buffer
		if err := PrintStatus(&b, rows, header); err != nil {
			t.Fatal(err)
		}
		want := "file    /u/amplidex.socket  installed\ndaemon  -                   not running\n"
		if header {
			want = "WHAT    NAME                STATE\n" + want
		}
		if b.String() != want {
			t.Errorf("header %v:\n%s\nwant:\n%s", header, b.String(), want)
		}
	}
}

// TestStatusLine: off a terminal it passes writes through and shows
// nothing; on one, a log line clears the progress line, which comes back
// under it, and Clear removes it.
func TestStatusLine(t *testing.T) {
	var buf bytes.Buffer
	off := NewStatusLine(&buf, false)
	off.Set("scanning %d", 1)
	io.WriteString(off, "log\n")
	off.Clear()
	if buf.String() != "log\n" {
		t.Errorf("off a terminal: %q", buf.String())
	}
	var nilLine *StatusLine
	nilLine.Set("x")
	nilLine.Clear()

	buf.Reset()
	on := NewStatusLine(&buf, true)
	on.Set("scanning %d", 1)
	io.WriteString(on, "log\n")
	on.Clear()
	want := "\r\x1b[Kscanning 1" + "\r\x1b[Klog\n" + "\r\x1b[Kscanning 1" + "\r\x1b[K"
	if buf.String() != want {
		t.Errorf("on a terminal: %q, want %q", buf.String(), want)
	}
	if got := fit(strings.Repeat("é", 100), 10); len([]rune(got)) != 9 {
		t.Errorf("fit: %q", got)
	}
}
