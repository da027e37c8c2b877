// Command amplidex indexes Amplifier collections, validates what authors
// write, answers queries from editors and scripts, and keeps the prepared
// bundle cache warm. Run `amplidex --help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(run()) }

// run builds the signal context, runs the command line and returns the exit
// code. SIGINT and SIGTERM cancel the context: commands stop cleanly.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return NewApp(os.Stdin, os.Stdout, os.Stderr, os.Getenv).Run(ctx, os.Args[1:])
}
