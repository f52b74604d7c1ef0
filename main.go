// Command git-liza coordinates teams of AI coding agents through a
// blackboard kept in git. Installed on PATH, it runs as `git liza`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/liza-dev/git-liza/commands"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := commands.Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
