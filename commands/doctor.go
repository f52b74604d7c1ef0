package commands

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/companion"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/doctor"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) doctorCmd() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "can a team run here? one line per check; exit 0 only when it can",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "Checks git, the agent CLI (--cli, default claude; or a command after --) and its version, that\n" +
			"it can authenticate (its key variable, its login, its settings; one request to its endpoint), the\n" +
			"user and the sandbox (--sandboxed as git liza agent and run take it), git-liza's hooks in task\n" +
			"worktrees, the remote in remote mode (reachable, writable, its server hook), and\n" +
			"scripts/integration-test.sh, and that the CLI lists git liza's MCP server (git-liza-mcp) as a session\n" +
			"gives it, and no other. git liza agent and run make the same checks of git and the agent CLI\n" +
			"before they start, its authentication offline (no request).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cli", Usage: "agent CLI preset: " + strings.Join(agent.PresetNames(), ", ") + " (default claude)"},
			&cli.BoolFlag{Name: "sandboxed", Usage: "check as for a team run with --sandboxed"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			l, err := agent.Resolve(cmd.String("cli"), cmd.Args().Slice(), cmd.Bool("sandboxed"))
			if err != nil {
				return contracts.Invalidf("%v", err)
			}
			if p, ok := companion.Find(MCPProgram); ok {
				l.MCP = p
			}
			repo, _ := refstore.Open(e.Dir)
			rep := doctor.Run(ctx, doctor.Request{Repo: repo, Launch: l, EUID: os.Geteuid()})
			rep.Checks = append(rep.Checks, notifyCheck(repo, e.Getenv))
			if cmd.Bool("json") {
				if err := e.promptJSON(rep); err != nil {
					return err
				}
			} else {
				width := 0
				for _, c := range rep.Checks {
					width = max(width, len(c.Name))
				}
				for _, c := range rep.Checks {
					line := fmt.Sprintf("%-4s %-*s  %s", c.Level, width, c.Name, c.Detail)
					if c.Fix != "" {
						line += " (fix: " + c.Fix + ")"
					}
					fmt.Fprintln(e.Stdout, contracts.Printable(line))
				}
			}
			for _, c := range rep.Checks {
				if err := c.Err(); err != nil {
					return &contracts.Error{Code: ops.Class(err), Msg: "a team cannot run here: " + c.Name + ": " + c.Detail}
				}
			}
			return nil
		},
	}
}
