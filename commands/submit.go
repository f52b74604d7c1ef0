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
		Usage:     "submit COMMIT (default: the tip of task/ID) for review, once the checkpoint of this iteration is recorded; a commit that no longer merges onto the integration tip and the approved tasks ahead goes back at once as INTEGRATION_FAILED, the files named",
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
				v := map[string]any{"id": out.ID, "status": contracts.ReadyForReview, "review_commit": out.ReviewCommit, "base_commit": out.BaseCommit, "commit": out.Commit.String(), "replayed": out.Replayed}
				if out.Conflict != "" {
					v["status"], v["conflict"] = contracts.IntegrationFailed, out.Conflict
				}
				return s.printJSON(v)
			}
			fmt.Fprintf(s.Stdout, "%s submitted for review at %s (%s..%s)\n", out.ID, short(out.ReviewCommit), short(out.BaseCommit), short(out.ReviewCommit))
			if out.Conflict != "" {
				// The reason is escaped where it is made: file names are
				// the agent's.
				fmt.Fprintf(s.Stdout, "%s does not merge: %s; it is INTEGRATION_FAILED for %s to fix\n", out.ID, out.Conflict, s.ops.Agent)
			}
			return nil
		}),
	}
}
