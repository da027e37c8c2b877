package service

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/amplidex/amplidex/query"
)

// managerCommands are the commands that enable (or disable) the service.
func managerCommands(install bool, files []File) [][]string {
	if runtime.GOOS == "darwin" {
		domain := "gui/" + strconv.Itoa(os.Getuid())
		if install {
			return [][]string{{"launchctl", "bootstrap", domain, files[0].Path}}
		}
		return [][]string{{"launchctl", "bootout", domain + "/" + LaunchdLabel}}
	}
	if install {
		return [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", SocketUnit}}
	}
	return [][]string{{"systemctl", "--user", "disable", "--now", SocketUnit, ServiceUnit}, {"systemctl", "--user", "daemon-reload"}}
}

// checkManager checks that the service manager answers, before anything
// is written or stopped: on Linux, that `systemctl --user show-environment`
// succeeds (it fails without a user bus, over ssh or in a container, say).
// A manager that is not on PATH is no error: the commands to run are
// printed instead.
func checkManager(ctx context.Context) error {
	if runtime.GOOS != "linux" {
		return nil
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		return nil
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "systemctl", "--user", "show-environment")
	cmd.Stdout, cmd.Stderr = io.Discard, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("systemctl --user does not work (%s): the user's service manager does not answer; "+
			"log in anew, or run `loginctl enable-linger $USER` as root, then try again", msg)
	}
	return nil
}

// PrintStatus prints the rows of `service status` in columns, under
// a header on a terminal.
func PrintStatus(w io.Writer, rows [][3]string, header bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header {
		fmt.Fprintln(tw, "WHAT\tNAME\tSTATE")
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r[0], query.Clean(r[1]), query.Clean(r[2]))
	}
	return tw.Flush()
}

// orUnknown is what a service manager printed, trimmed, or "unknown".
func orUnknown(b []byte) string {
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "unknown"
}

// writeFileAtomic writes data to path through a temporary file and a
// rename.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
