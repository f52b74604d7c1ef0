package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) reviewCmd() *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "claim the review of task ID, or of the best task awaiting review, and print its diff range",
		ArgsUsage: "[ID]",
		Action: e.action(0, 1, "review [ID]", func(ctx context.Context, s *session, a []string) error {
			r := ops.ReviewRequest{Call: s.call()}
			if len(a) == 1 {
				r.Task = a[0]
			}
			out, err := s.ops.Review(ctx, r)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(out)
			}
			fmt.Fprintf(s.Stdout, "%s review claimed by %s until %s\n", out.ID, s.ops.Agent, out.ReviewLeaseExpires)
			fmt.Fprintf(s.Stdout, "author:    %s\nworktree:  %s\nreview:    git diff %s\n", contracts.Printable(out.Author), contracts.Printable(out.Worktree), out.DiffRange)
			return nil
		}),
	}
}

func (e *Env) verdictCmd() *cli.Command {
	return &cli.Command{
		Name:      "verdict",
		Usage:     "approve or reject the review you hold",
		ArgsUsage: "ID approve|reject",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why (required to reject): blockers with file:line, why they matter, a suggestion"},
			&cli.StringFlag{Name: "feedback", Usage: "with reject: the specific changes needed (rejection_feedback)"},
			&cli.StringFlag{Name: "commit", Usage: "the commit you reviewed; must equal the task's review_commit"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 2, 2, "verdict ID approve|reject [--reason TEXT] [--feedback TEXT] [--commit SHA]")
			if err != nil {
				return err
			}
			if a[1] != "approve" && a[1] != "reject" {
				return contracts.Invalidf("verdict is approve or reject, not %q", a[1])
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			out, err := s.ops.Verdict(ctx, ops.VerdictRequest{Call: s.call(), Task: a[0], Approve: a[1] == "approve",
				Reason: cmd.String("reason"), Feedback: cmd.String("feedback"), Commit: cmd.String("commit")})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"id": out.ID, "status": out.Status, "blocked_reason": out.BlockedReason, "paused": out.Paused, "commit": out.Commit.String(), "replayed": out.Replayed})
			}
			fmt.Fprintf(s.Stdout, "%s %s\n", out.ID, out.Status)
			if out.BlockedReason != "" {
				fmt.Fprintf(s.Stderr, "git-liza: task %s blocked: %s\n", out.ID, contracts.Printable(out.BlockedReason))
			}
			if out.Paused {
				fmt.Fprintf(s.Stderr, "git-liza: the team is PAUSED for the human: %s rejected %d times in a row (git log -1 refs/liza/state has the blockers)\n", out.ID, contracts.PauseRejections)
			}
			return nil
		},
	}
}
