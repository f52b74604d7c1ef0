package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) heartbeatCmd() *cli.Command {
	return &cli.Command{
		Name:  "heartbeat",
		Usage: "keep your leases alive (writes only when a lease is past half its term)",
		Action: e.action(0, 0, "heartbeat", func(ctx context.Context, s *session, _ []string) error {
			out, err := s.ops.Heartbeat(ctx, s.call())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(out)
			}
			switch {
			case out.Renewed:
				fmt.Fprintf(s.Stdout, "leases of %s renewed until %s (%s)\n", s.ops.Agent, out.LeaseExpires, strings.Join(out.Held, ", "))
			case len(out.Held) == 0:
				fmt.Fprintf(s.Stdout, "%s holds no lease\n", s.ops.Agent)
			default:
				fmt.Fprintf(s.Stdout, "leases of %s are fresh (%s); nothing written\n", s.ops.Agent, strings.Join(out.Held, ", "))
			}
			return nil
		}),
	}
}

func (e *Env) checkpointCmd() *cli.Command {
	return &cli.Command{
		Name:      "checkpoint",
		Usage:     "record the pre-execution checkpoint before working on a task",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "intent", Usage: "what you will do, specific and observable"},
			&cli.StringFlag{Name: "validation", Usage: "how you will check it: a command and its expected output"},
			&cli.StringSliceFlag{Name: "files", Usage: "files to modify (A,B)"},
			&cli.StringSliceFlag{Name: "assumption", Usage: "an assumption (repeatable)"},
			&cli.StringFlag{Name: "risks", Usage: "what could go wrong"},
		},
		Action: e.action(1, 1, "checkpoint ID --intent TEXT --validation TEXT --files A,B [--assumption TEXT ...] [--risks TEXT]", func(ctx context.Context, s *session, a []string) error {
			cmd := s.cmd
			out, err := s.ops.Checkpoint(ctx, ops.CheckpointRequest{Call: s.call(), Task: a[0], Checkpoint: contracts.Checkpoint{
				Intent: cmd.String("intent"), Validation: cmd.String("validation"),
				FilesToModify: splitList(cmd.StringSlice("files")), Assumptions: cmd.StringSlice("assumption"), Risks: cmd.String("risks"),
			}})
			return s.report(out, err)
		}),
	}
}

func (e *Env) handoffCmd() *cli.Command {
	return &cli.Command{
		Name:      "handoff",
		Usage:     "hand a task over at context exhaustion: what state it is in and what to do next",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "summary", Usage: "one phrase: the task's state"},
			&cli.StringFlag{Name: "next", Usage: "one phrase: what the replacement should do first"},
		},
		Action: e.action(1, 1, "handoff ID --summary TEXT --next TEXT", func(ctx context.Context, s *session, a []string) error {
			out, err := s.ops.Handoff(ctx, ops.HandoffRequest{Call: s.call(), Task: a[0], Summary: s.cmd.String("summary"), Next: s.cmd.String("next")})
			return s.report(out, err)
		}),
	}
}

// report prints the outcome of a one-task operation.
func (s *session) report(r *ops.TaskResult, err error) error {
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(map[string]any{"id": r.ID, "status": r.Status, "commit": r.Commit.String(), "replayed": r.Replayed})
	}
	fmt.Fprintf(s.Stdout, "%s %s (%s)%s\n", r.ID, r.Verb, r.Status, replayNote(r.Replayed))
	return nil
}

// replayNote is what a report adds when its request id had been applied.
func replayNote(replayed bool) string {
	if replayed {
		return " (already applied for this request id)"
	}
	return ""
}
