package commands

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

// MCPProgram is the program that serves git liza mcp. It is a program of
// its own (package git-liza-mcp, on package mcpserver) so that git-liza
// does not link the MCP SDK, whose HTTP transports would cost every short
// command at start-up (measured; see the README).
const MCPProgram = "git-liza-mcp"

func (e *Env) mcpCmd() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "an MCP server over stdio: the board's operations as typed tools for the agent whose supervisor started the session (identity from its environment), or the operator's levers (--human)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "human", Usage: "act for the human operator: notes, pause, resume, abort, unblock, task add and edit (for a chat client such as Claude Desktop)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "mcp [--human]"); err != nil {
				return err
			}
			if agent := cmd.String("agent"); agent != e.Getenv("LIZA_AGENT_ID") {
				return contracts.Invalidf("git liza mcp takes its identity from the environment its supervisor sets (LIZA_AGENT_ID), not from --agent %s", agent)
			}
			prog, err := program(MCPProgram, "git liza mcp")
			if err != nil {
				return err
			}
			var a []string
			if cmd.Bool("human") {
				a = append(a, "--human")
			}
			return e.runProgram(ctx, prog, a...)
		},
	}
}
