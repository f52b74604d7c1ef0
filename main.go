// Command git-liza coordinates teams of AI coding agents through a
// blackboard kept in git. Installed on PATH, it runs as `git liza`.
package main

import (
	"context"
	"os"

	"github.com/liza-dev/git-liza/commands"
)

func main() {
	os.Exit(commands.Run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}
