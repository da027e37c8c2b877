// Command amplidex indexes Amplifier collections, validates what authors
// write, answers queries from editors and scripts, and keeps the prepared
// bundle cache warm. Run `amplidex --help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

func main() { os.Exit(run()) }

// run builds the signal context, runs the command line and returns the exit
// code. The first SIGINT or SIGTERM cancels the context: commands stop
// cleanly. A second one ends the process at once (see signalContext).
func run() int {
	ctx, stop := signalContext(context.Background(), os.Exit, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return NewApp(os.Stdin, os.Stdout, os.Stderr, os.Getenv).Run(ctx, os.Args[1:])
}

// signalContext returns a context that the first of sigs to arrive
// cancels. A second one calls exit with the shell's code for death by that
// signal (128 + its number: 130 for SIGINT, 143 for SIGTERM), so that a
// command that does not stop, or stops too slowly, can always be ended
// from the keyboard. stop lets go of the signals and waits for the
// goroutine that watches them.
func signalContext(parent context.Context, exit func(int), sigs ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-ch:
			exit(signalExitCode(s))
		case <-done:
		}
	})
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			wg.Wait()
			cancel()
		})
	}
}

// signalExitCode is the exit code of a process killed by s.
func signalExitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}
