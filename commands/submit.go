package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) submitCmd() *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "submit COMMIT (default: the tip of task/ID) for review, once the checkpoint of this iteration is recorded",
		ArgsUsage: "ID [COMMIT]",
		Action: e.action(1, 2, "submit ID [COMMIT]", func(ctx context.Context, s *session, a []string) error {
			r := ops.SubmitRequest{Call: s.call(), Task: a[0]}
			if len(a) == 2 {
				r.Rev = a[1]
			}
			out, err := s.ops.Submit(ctx, r)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"id": out.ID, "status": contracts.ReadyForReview, "review_commit": out.ReviewCommit, "base_commit": out.BaseCommit, "commit": out.Commit.String(), "replayed": out.Replayed})
			}
			fmt.Fprintf(s.Stdout, "%s submitted for review at %s (%s..%s)\n", out.ID, short(out.ReviewCommit), short(out.BaseCommit), short(out.ReviewCommit))
			return nil
		}),
	}
}
