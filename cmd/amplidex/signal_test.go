package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
)

// signalProbe is a command that does not stop when asked: it takes the
// signals as run does, says "ready", and once its context is cancelled
// says "cancelled" and goes on reading its input until it ends.
func signalProbe() {
	ctx, stop := signalContext(context.Background(), os.Exit, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Println("ready")
	<-ctx.Done()
	fmt.Println("cancelled")
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
