package commands

import (
	"context"
	"slices"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) taskCmd() *cli.Command {
	return &cli.Command{
		Name:  "task",
		Usage: "plan and steer tasks (planner and human operator)",
		Commands: slices.Concat([]*cli.Command{
			e.taskAddCmd(),
			e.taskFinalizeCmd(),
			e.taskEditCmd(),
		}, e.taskLeverCmds()),
	}
}

func (e *Env) taskAddCmd() *cli.Command {
	return &cli.Command{
		Name:  "add",
		Usage: "add a task (UNCLAIMED, or DRAFT with --draft)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "id", Usage: "task `ID` (kebab-case)"},
			&cli.StringFlag{Name: "desc", Usage: "what to build, in a sentence or two"},
			&cli.StringFlag{Name: "spec", Usage: "spec reference: a path in the repository, optionally with #anchor"},
			&cli.StringFlag{Name: "done", Usage: "falsifiable completion criteria (done_when)"},
			&cli.StringFlag{Name: "scope", Usage: "what is in and out of scope"},
			priorityFlag(3),
			&cli.StringSliceFlag{Name: "depends", Usage: "task ids that must be MERGED first (A,B)"},
			&cli.StringSliceFlag{Name: "paths", Usage: "paths or globs the task owns (A,B)"},
			&cli.IntFlag{Name: "max-files", Usage: "most files a submission may touch"},
			&cli.IntFlag{Name: "max-loc", Usage: "most lines a submission may add and remove"},
			&cli.BoolFlag{Name: "draft", Usage: "keep the task in DRAFT until `task finalize`"},
			&cli.StringSliceFlag{Name: "docs", Usage: "at most two more files of the repository its agents should read (A,B; seed 002's context diet)"},
			&cli.StringFlag{Name: "from-discovery", Usage: "the discovery `N` (disc-N) the task comes from: sets its converted_to_task"},
		},
		Action: e.action(0, 0, "task add --id ID --desc TEXT --spec REF --done TEXT --scope TEXT [--priority N] [--depends A,B] [--docs A,B] [--draft]", func(ctx context.Context, s *session, _ []string) error {
			t := contracts.Task{
				ID:          s.cmd.String("id"),
				Description: s.cmd.String("desc"),
				SpecRef:     s.cmd.String("spec"),
				DoneWhen:    s.cmd.String("done"),
				Scope:       s.cmd.String("scope"),
				Priority:    s.cmd.Int("priority"),
				DependsOn:   contracts.StringList(splitList(s.cmd.StringSlice("depends"))),
				Paths:       contracts.StringList(splitList(s.cmd.StringSlice("paths"))),
				Docs:        contracts.StringList(splitList(s.cmd.StringSlice("docs"))),
				MaxFiles:    s.cmd.Int("max-files"),
				MaxLOC:      s.cmd.Int("max-loc"),
				Status:      contracts.Unclaimed,
			}
			if s.cmd.Bool("draft") {
				t.Status = contracts.Draft
			}
			r := ops.AddTaskRequest{Call: s.call(), Task: t}
			if v := s.cmd.String("from-discovery"); v != "" {
				n, err := discoveryNumber(v)
				if err != nil {
					return err
				}
				r.FromDiscovery = n
			}
			return s.report(s.ops.AddTask(ctx, r))
		}),
	}
}

func (e *Env) taskFinalizeCmd() *cli.Command {
	return &cli.Command{
		Name:      "finalize",
		Usage:     "DRAFT -> UNCLAIMED once spec_ref and done_when are set",
		ArgsUsage: "ID",
		Action: e.action(1, 1, "task finalize ID", func(ctx context.Context, s *session, a []string) error {
			return s.report(s.ops.Finalize(ctx, ops.FinalizeRequest{Call: s.call(), Task: a[0]}))
		}),
	}
}
