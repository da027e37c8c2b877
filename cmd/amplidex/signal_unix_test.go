//go:build unix

package main

import (
	"bufio"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSecondSignal: the first SIGINT or SIGTERM cancels a command's
// context; a command that goes on regardless ends at the second, at once,
// with the shell's code for that signal.
func TestSecondSignal(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGTERM", syscall.SIGTERM, 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("amplidex-signal-probe")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			lines := make(chan string, 2)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
				exited <- cmd.Wait()
			}()
			defer cmd.Process.Kill()
			deadline := time.After(30 * time.Second)
			expect := func(want string) {
				t.Helper()
				select {
				case got, ok := <-lines:
					if !ok || got != want {
						t.Fatalf("the probe said %q (open %v), want %q", got, ok, want)
					}
				case <-deadline:
					t.Fatalf("the probe did not say %q", want)
				}
			}
			expect("ready")
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			expect("cancelled")
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
					t.Fatalf("after the second %s the probe ended with %v, want exit code %d", tc.name, err, tc.code)
				}
			case <-deadline:
				t.Fatalf("the probe still runs after a second %s", tc.name)
			}
		})
	}
}
