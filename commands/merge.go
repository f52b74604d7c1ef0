package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) mergeCmd() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge an APPROVED task into the integration branch, without touching any checkout",
		ArgsUsage: "ID",
		Action: e.action(1, 1, "merge ID", func(ctx context.Context, s *session, a []string) error {
			out, err := s.ops.Merge(ctx, ops.MergeRequest{Call: s.call(), Task: a[0]})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"id": out.ID, "status": contracts.Merged, "merge_commit": out.MergeCommit, "integration_branch": out.IntegrationBranch, "commit": out.Commit.String(), "replayed": out.Replayed})
			}
			cleanup := ""
			if out.Cleanup != "" {
				cleanup = " (" + out.Cleanup + ")"
			}
			fmt.Fprintf(s.Stdout, "%s merged into %s at %s%s\n", out.ID, out.IntegrationBranch, short(out.MergeCommit), cleanup)
			return nil
		}),
	}
}
