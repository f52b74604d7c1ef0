// Command git-liza-mcp is the MCP server that git liza mcp runs: an agent
// session's typed tools on the board (see package mcpserver).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/liza-dev/git-liza/mcpserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := mcpserver.Main(ctx, nil, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
