// Command git-liza-board is the live board that git liza board runs.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/liza-dev/git-liza/tui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := tui.Main(ctx, nil, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
