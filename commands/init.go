package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) initCmd() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create the blackboard for GOAL in refs/liza/state",
		ArgsUsage: "GOAL",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "`PATH` of the goal's vision document"},
			&cli.StringFlag{Name: "integration-branch", Usage: "branch approved work merges into (default: git config liza.integrationBranch, else integration)"},
		},
		Action: e.action(1, 1, "init [--spec PATH] [--integration-branch NAME] GOAL", func(ctx context.Context, s *session, a []string) error {
			out, err := s.ops.Init(ctx, ops.InitRequest{Call: s.call(), Goal: a[0], Spec: s.cmd.String("spec"), IntegrationBranch: s.cmd.String("integration-branch")})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"goal": out.Goal, "description": out.Description, "integration_branch": out.IntegrationBranch, "commit": out.Commit.String()})
			}
			fmt.Fprintf(s.Stdout, "Initialized blackboard in %s: %s %q (integration branch %s)\n", refstore.StateRef, out.Goal, out.Description, out.IntegrationBranch)
			return nil
		}),
	}
}
