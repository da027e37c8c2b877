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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := NewApp(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	os.Exit(app.Run(ctx, os.Args[1:]))
}
