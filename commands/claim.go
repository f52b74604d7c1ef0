package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) claimCmd() *cli.Command {
	return &cli.Command{
		Name:      "claim",
		Usage:     "claim task ID, or the best claimable task (one whose paths hold no file a branch in flight changes, when there is a choice), with its worktree .worktrees/ID on branch task/ID",
		ArgsUsage: "[ID]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "no-worktree", Usage: "record the claim only; the agent works in its own checkout"},
		},
		Action: e.action(0, 1, "claim [ID] [--no-worktree]", func(ctx context.Context, s *session, a []string) error {
			r := ops.ClaimRequest{Call: s.call(), NoWorktree: s.cmd.Bool("no-worktree")}
			if len(a) == 1 {
				r.Task = a[0]
			}
			out, err := s.ops.Claim(ctx, r)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(out)
			}
			where := out.Worktree
			if out.Branch != "" {
				where += " on " + out.Branch
			}
			fmt.Fprintf(s.Stdout, "%s %s by %s: %s from %s, lease until %s\n", out.ID, out.Kind, out.AssignedTo, where, short(out.BaseCommit), out.LeaseExpires)
			if out.Pick != "" {
				fmt.Fprintln(s.Stdout, out.Pick)
			}
			return nil
		}),
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
