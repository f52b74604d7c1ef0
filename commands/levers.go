package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
)

// taskLeverCmds are the planner's and the human's levers on one task.
func (e *Env) taskLeverCmds() []*cli.Command {
	return []*cli.Command{
		e.taskBlockCmd(),
		e.taskUnblockCmd(),
		e.taskSupersedeCmd(),
		e.taskAbandonCmd(),
		e.taskReleaseCmd(),
		e.taskArchiveCmd(),
	}
}

// leverCmds are the commands every role uses to speak on the blackboard.
func (e *Env) leverCmds() []*cli.Command {
	return []*cli.Command{
		e.anomalyCmd(),
		e.discoverCmd(),
		e.noteCmd(),
	}
}

func (e *Env) taskBlockCmd() *cli.Command {
	const usage = "task block ID --reason TEXT --question Q [--question Q ...] [--attempted TEXT ...]"
	return &cli.Command{
		Name:      "block",
		Usage:     "BLOCKED, with a reason and 1 to 3 questions that would unblock it",
		ArgsUsage: "ID",
		// Questions and attempts are prose: commas do not separate them.
		DisableSliceFlagSeparator: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "what blocks progress (specific, not vague)"},
			&cli.StringSliceFlag{Name: "question", Usage: "a question whose answer would unblock the task (1 to 3)"},
			&cli.StringSliceFlag{Name: "attempted", Usage: "an approach tried before blocking (repeatable)"},
		},
		Action: e.action(1, 1, usage, func(ctx context.Context, s *session, a []string) error {
			return s.report(s.ops.Block(ctx, ops.BlockRequest{Call: s.call(), Task: a[0], Reason: s.cmd.String("reason"),
				Questions: s.cmd.StringSlice("question"), Attempted: s.cmd.StringSlice("attempted")}))
		}),
	}
}

func (e *Env) taskUnblockCmd() *cli.Command {
	return &cli.Command{
		Name:      "unblock",
		Usage:     "BLOCKED -> UNCLAIMED, keeping the worktree for the next claim",
		ArgsUsage: "ID",
		Action: e.action(1, 1, "task unblock ID", func(ctx context.Context, s *session, a []string) error {
			return s.report(s.ops.Unblock(ctx, ops.UnblockRequest{Call: s.call(), Task: a[0]}))
		}),
	}
}

func (e *Env) taskSupersedeCmd() *cli.Command {
	return &cli.Command{
		Name:      "supersede",
		Usage:     "SUPERSEDED by existing replacement tasks (rescoping)",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "by", Usage: "the task ids that replace it (A,B)"},
			&cli.StringFlag{Name: "reason", Usage: "one-sentence root cause of the rescope"},
		},
		Action: e.action(1, 1, "task supersede ID --by NEW[,NEW] --reason TEXT", func(ctx context.Context, s *session, a []string) error {
			return s.report(s.ops.Supersede(ctx, ops.SupersedeRequest{Call: s.call(), Task: a[0],
				By: splitList(s.cmd.StringSlice("by")), Reason: s.cmd.String("reason")}))
		}),
	}
}

func (e *Env) taskAbandonCmd() *cli.Command {
	return &cli.Command{
		Name:      "abandon",
		Usage:     "ABANDONED: the work is dropped (from DRAFT, UNCLAIMED or BLOCKED)",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why the task is dropped"},
		},
		Action: e.action(1, 1, "task abandon ID --reason TEXT", func(ctx context.Context, s *session, a []string) error {
			return s.report(s.ops.Abandon(ctx, ops.AbandonRequest{Call: s.call(), Task: a[0], Reason: s.cmd.String("reason")}))
		}),
	}
}

func (e *Env) taskReleaseCmd() *cli.Command {
	return &cli.Command{
		Name:      "release",
		Usage:     "take a task back from its coder or its reviewer once their lease has expired (--force: at once)",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "role", Value: "coder", Usage: "which lease to release: coder, reviewer or both"},
			&cli.BoolFlag{Name: "force", Usage: "release a lease that has not expired"},
		},
		Action: e.action(1, 1, "task release ID [--role coder|reviewer|both] [--force]", func(ctx context.Context, s *session, a []string) error {
			return s.report(s.ops.Release(ctx, ops.ReleaseRequest{Call: s.call(), Task: a[0], Side: s.cmd.String("role"), Force: s.cmd.Bool("force")}))
		}),
	}
}

func (e *Env) taskArchiveCmd() *cli.Command {
	return &cli.Command{
		Name:      "archive",
		Usage:     "move terminal tasks (MERGED, SUPERSEDED, ABANDONED) off the live board; all of them with no ID",
		ArgsUsage: "[ID ...]",
		Action: e.action(0, -1, "task archive [ID ...]", func(ctx context.Context, s *session, a []string) error {
			r, err := s.ops.Archive(ctx, ops.ArchiveRequest{Call: s.call(), Tasks: a})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"archived": r.Archived, "count": len(r.Archived), "commit": r.Commit.String(), "replayed": r.Replayed})
			}
			note := replayNote(r.Replayed)
			switch len(r.Archived) {
			case 0:
				fmt.Fprintf(s.Stdout, "nothing to archive%s\n", note)
			case 1:
				fmt.Fprintf(s.Stdout, "archived 1 task: %s%s\n", r.Archived[0], note)
			default:
				fmt.Fprintf(s.Stdout, "archived %d tasks: %s%s\n", len(r.Archived), strings.Join(r.Archived, ", "), note)
			}
			return nil
		}),
	}
}
