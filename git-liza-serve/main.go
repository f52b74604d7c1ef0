// Command git-liza-serve is the web board that git liza serve runs (see
// package web).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/liza-dev/git-liza/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := web.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
