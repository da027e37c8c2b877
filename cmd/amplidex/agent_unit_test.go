package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestServiceFiles: the systemd units and the launchd plist run the same
// program with the same environment, quoted for each format.
// TestXMLEscape holds xmlEscape to xml.EscapeText.
// FuzzXMLEscape holds xmlEscape to xml.EscapeText on any string.
// TestLogFileBoundedWhenRotationFails: when the log cannot be rotated
// (FILE.1 is a directory that is not empty), it still never grows past
// its cap: it starts again, with a line saying why.
// TestServiceStatusHeader: service status prints its rows in columns,
// under a header on a terminal only.
// TestServiceUnitsNameNoMachinePath: with the default socket, in the
// user manager's runtime directory, the units name it through %t and do
// not carry that directory's path.
func TestServiceUnitsNameNoMachinePath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("systemd units are written on Linux")
	}
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "XDG_RUNTIME_DIR": fmt.Sprintf("/run/user/%d", os.Getuid()),
		"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	var out, errOut bytes.Buffer
	if code := NewApp(strings.NewReader(""), &out, &errOut, func(k string) string { return env[k] }).Run(
		context.Background(), []string{"service", "install", "--print"}); code != 0 {
		t.Fatalf("service install --print: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "ListenStream=%t/amplidex/amplidex.sock\n") || strings.Contains(out.String(), "/run/user/") {
		t.Errorf("units:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "Environment=\"XDG_STATE_HOME="+env["XDG_STATE_HOME"]+"\"\n") {
		t.Errorf("the units lost the shell's other variables:\n%s", out.String())
	}
}
