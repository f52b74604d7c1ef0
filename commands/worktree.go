package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) worktreeCmd() *cli.Command {
	return &cli.Command{
		Name:  "worktree",
		Usage: "task worktrees (.worktrees/ID on branch task/ID): list, prune orphans, delete one",
		Commands: []*cli.Command{
			{
				Name:  "list",
				Usage: "every task worktree with its task, and the tasks whose worktree is missing here",
				Action: e.action(0, 0, "worktree list", func(ctx context.Context, s *session, _ []string) error {
					return s.worktreeList(ctx)
				}),
			},
			{
				Name:  "prune",
				Usage: "remove clean, merged worktrees of finished or unknown tasks; forget worktrees whose directory is gone",
				Action: e.action(0, 0, "worktree prune", func(ctx context.Context, s *session, _ []string) error {
					return s.worktreePrune(ctx)
				}),
			},
			{
				Name:      "delete",
				Usage:     "remove the worktree and branch of a BLOCKED, ABANDONED or SUPERSEDED task (--force: even with unmerged or uncommitted work)",
				ArgsUsage: "ID",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "force", Usage: "delete uncommitted changes and commits that are not on the integration branch"},
				},
				Action: e.action(1, 1, "worktree delete ID [--force]", func(ctx context.Context, s *session, a []string) error {
					return s.worktreeDelete(ctx, a[0], s.cmd.Bool("force"))
				}),
			},
		},
	}
}

func (s *session) worktreeList(ctx context.Context) error {
	l, err := s.ops.ListWorktrees(ctx)
	if err != nil {
		return err
	}
	views := l.Worktrees
	if s.json {
		return s.printJSON(map[string]any{"integration_branch": l.IntegrationBranch, "worktrees": views})
	}
	if len(views) == 0 {
		fmt.Fprintln(s.Stdout, "no task worktrees")
		return nil
	}
	if l.IntegrationErr != nil {
		fmt.Fprintf(s.Stderr, "git-liza: %v: merged shows no\n", l.IntegrationErr)
	}
	tw := tabwriter.NewWriter(s.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tASSIGNEE\tWORKTREE\tBRANCH\tDIRTY\tMERGED\tLOCKED")
	for _, v := range views {
		status := string(v.Status)
		switch {
		case v.NoTask:
			status = "no task"
		case v.Archived:
			status += " (archived)"
		}
		dirty := yesNo(v.Dirty)
		if v.Worktree != "present" {
			dirty = "-"
		}
		merged := yesNo(v.Merged)
		if v.Worktree == "missing" && v.Branch == "" {
			merged = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, status, dash(v.AssignedTo), v.Worktree,
			dash(v.Branch), dirty, merged, dash(v.Locked))
	}
	return tw.Flush()
}

func (s *session) worktreePrune(ctx context.Context) error {
	rep, err := s.ops.PruneWorktrees(ctx)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(rep)
	}
	for _, it := range rep.Repaired {
		fmt.Fprintln(s.Stdout, it.Reason)
	}
	if rep.Seen == 0 && len(rep.Kept) == 0 && len(rep.Branches) == 0 {
		fmt.Fprintln(s.Stdout, "no task worktrees")
		return nil
	}
	for _, it := range rep.Removed {
		fmt.Fprintf(s.Stdout, "removed %s: %s\n", it.Path, it.Reason)
	}
	for _, it := range rep.Pruned {
		fmt.Fprintf(s.Stdout, "pruned %s: %s\n", it.Path, it.Reason)
	}
	for _, it := range rep.Branches {
		fmt.Fprintf(s.Stdout, "deleted branch %s: %s\n", it.Path, it.Reason)
	}
	for _, it := range rep.Kept {
		fmt.Fprintf(s.Stdout, "kept %s: %s\n", it.Path, it.Reason)
	}
	return nil
}

func (s *session) worktreeDelete(ctx context.Context, id string, force bool) error {
	out, err := s.ops.DeleteWorktree(ctx, ops.DeleteWorktreeRequest{Task: id, Force: force})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	var what []string
	if out.WorktreeRemoved {
		what = append(what, out.Worktree)
	}
	if out.BranchDeleted {
		what = append(what, "branch "+out.Branch)
	}
	fmt.Fprintf(s.Stdout, "deleted %s of %s task %s\n", strings.Join(what, " and "), out.Status, out.ID)
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
