package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) mergeCmd() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge an APPROVED task into the integration branch, without touching any checkout; --queue: every APPROVED task, in tested batches",
		ArgsUsage: "ID | --queue",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "queue", Usage: "merge every APPROVED task in the queue's order, in batches of at most config.merge_batch, each tested once and bisected when its test fails; one line per task, then exit 1 if any did not merge"},
		},
		Action: e.action(0, 1, "merge ID | merge --queue", func(ctx context.Context, s *session, a []string) error {
			if s.cmd.Bool("queue") {
				if len(a) > 0 {
					return contracts.Invalidf("usage: git liza merge ID | merge --queue (not both)")
				}
				return s.mergeQueue(ctx)
			}
			if len(a) != 1 {
				return contracts.Invalidf("usage: git liza merge ID | merge --queue")
			}
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

// mergeQueue runs the merge queue and prints one line per task it
// merged, failed or left, then a summary. It fails (exit 1) when a task
// did not merge, after saying what became of each.
func (s *session) mergeQueue(ctx context.Context) error {
	out, err := s.ops.MergeQueue(ctx, ops.MergeQueueRequest{Call: s.call()})
	if out == nil {
		return err
	}
	var missed []string
	for _, o := range out.Outcomes {
		if o.Status != ops.QueueMerged {
			missed = append(missed, o.ID)
		}
	}
	if s.json {
		outcomes := out.Outcomes
		if outcomes == nil {
			outcomes = []ops.QueueOutcome{}
		}
		if jerr := s.printJSON(map[string]any{"integration_branch": out.IntegrationBranch, "tasks": outcomes, "batches": out.Batches, "test_runs": out.Runs, "landings": out.Landings}); jerr != nil {
			return jerr
		}
	} else {
		for _, o := range out.Outcomes {
			switch o.Status {
			case ops.QueueMerged:
				fmt.Fprintf(s.Stdout, "%s merged into %s at %s\n", o.ID, out.IntegrationBranch, short(o.MergeCommit))
			default:
				fmt.Fprintf(s.Stdout, "%s %s: %s\n", o.ID, o.Status, contracts.Printable(o.Reason))
			}
		}
		fmt.Fprintf(s.Stdout, "queue: %d merged, %d not, in %d batch(es), %d test run(s), %d landing(s)\n",
			len(out.Outcomes)-len(missed), len(missed), out.Batches, out.Runs, out.Landings)
	}
	if err != nil {
		return err
	}
	if len(missed) > 0 {
		return contracts.Invalidf("%d task(s) did not merge: %s", len(missed), strings.Join(missed, ", "))
	}
	return nil
}
