package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) taskEditCmd() *cli.Command {
	const usage = "task edit ID [--desc T] [--spec R] [--done T] [--scope T] [--priority N] [--depends A,B] [--paths P,...] [--docs A,B]"
	return &cli.Command{
		Name:      "edit",
		Usage:     "change the fields of a DRAFT or UNCLAIMED task; its history keeps what changed",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "desc", Usage: "what to build, in a sentence or two"},
			&cli.StringFlag{Name: "spec", Usage: "spec reference: a path in the repository, optionally with #anchor"},
			&cli.StringFlag{Name: "done", Usage: "falsifiable completion criteria (done_when)"},
			&cli.StringFlag{Name: "scope", Usage: "what is in and out of scope"},
			priorityFlag(0),
			&cli.StringSliceFlag{Name: "depends", Usage: "task ids that must be MERGED first (A,B; empty for none)"},
			&cli.StringSliceFlag{Name: "paths", Usage: "paths or globs the task owns (A,B; empty for none)"},
			&cli.IntFlag{Name: "max-files", Usage: "most files a submission may touch"},
			&cli.IntFlag{Name: "max-loc", Usage: "most lines a submission may add and remove"},
			&cli.StringSliceFlag{Name: "docs", Usage: "at most two more files of the repository its agents should read (A,B; empty for none)"},
		},
		Action: e.action(1, 1, usage, func(ctx context.Context, s *session, a []string) error {
			c := s.cmd
			r := ops.EditTaskRequest{Call: s.call(), Task: a[0]}
			str := func(name string) *string {
				if !c.IsSet(name) {
					return nil
				}
				v := c.String(name)
				return &v
			}
			num := func(name string) *int {
				if !c.IsSet(name) {
					return nil
				}
				v := int(c.Int(name))
				return &v
			}
			list := func(name string) *[]string {
				if !c.IsSet(name) {
					return nil
				}
				v := splitList(c.StringSlice(name))
				if v == nil {
					v = []string{}
				}
				return &v
			}
			r.Description, r.SpecRef, r.DoneWhen, r.Scope = str("desc"), str("spec"), str("done"), str("scope")
			r.Priority, r.MaxFiles, r.MaxLOC = num("priority"), num("max-files"), num("max-loc")
			r.DependsOn, r.Paths, r.Docs = list("depends"), list("paths"), list("docs")
			return s.report(s.ops.EditTask(ctx, r))
		}),
	}
}

// discoverConvertCmd is `git liza discover convert N --task ID`.
func (e *Env) discoverConvertCmd() *cli.Command {
	const usage = "discover convert N --task ID"
	return &cli.Command{
		Name:      "convert",
		Usage:     "record that discovery N (disc-N) became task ID: sets converted_to_task, so it wakes no planner again",
		ArgsUsage: "N",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "the task `ID` the discovery became"},
		},
		Action: e.action(1, 1, usage, func(ctx context.Context, s *session, a []string) error {
			n, err := discoveryNumber(a[0])
			if err != nil {
				return err
			}
			task := s.cmd.String("task")
			if task == "" {
				return contracts.Invalidf("usage: git liza %s", usage)
			}
			out, err := s.ops.ConvertDiscovery(ctx, ops.ConvertRequest{Call: s.call(), Discovery: n, Task: task})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"discovery": out.Discovery, "task": out.Task, "commit": out.Commit.String(), "replayed": out.Replayed})
			}
			fmt.Fprintf(s.Stdout, "%s converted to task %s%s\n", out.Discovery, out.Task, replayNote(out.Replayed))
			return nil
		}),
	}
}

// discoveryNumber reads a discovery's number: N or disc-N.
func discoveryNumber(arg string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(arg, "disc-"))
	if err != nil || n < 1 {
		return 0, contracts.Invalidf("discovery %q: want its number (1 for disc-1)", arg)
	}
	return n, nil
}

// goalCmd is `git liza goal new [--spec PATH] GOAL` and `git liza goal
// complete`.
func (e *Env) goalCmd() *cli.Command {
	const usage = "goal new [--spec PATH] GOAL | goal complete"
	return &cli.Command{
		Name:  "goal",
		Usage: "goals on the board: complete closes the goal once every task is terminal, new starts the next one",
		Commands: []*cli.Command{{
			Name:      "new",
			Usage:     "start the next goal and its sprint on the same board (the completed goal's tasks are archived)",
			ArgsUsage: "GOAL",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "spec", Usage: "the goal's vision document, a path in the repository"},
			},
			Action: e.action(1, 1, "goal new [--spec PATH] GOAL", func(ctx context.Context, s *session, a []string) error {
				out, err := s.ops.GoalNew(ctx, ops.GoalNewRequest{Call: s.call(), Goal: a[0], Spec: s.cmd.String("spec")})
				if err != nil {
					return err
				}
				if s.json {
					return s.printJSON(map[string]any{"goal": out.Goal, "previous": out.Previous, "sprint": out.Sprint,
						"archived": out.Archived, "commit": out.Commit.String(), "replayed": out.Replayed})
				}
				fmt.Fprintf(s.Stdout, "%s started (sprint %s) after %s; %s archived%s\n", out.Goal, out.Sprint, out.Previous,
					contracts.Plural(len(out.Archived), "task"), replayNote(out.Replayed))
				return nil
			}),
		}, {
			Name:  "complete",
			Usage: "mark the goal and its sprint COMPLETED once every task is MERGED, SUPERSEDED or ABANDONED",
			Action: e.action(0, 0, "goal complete", func(ctx context.Context, s *session, _ []string) error {
				out, err := s.ops.GoalComplete(ctx, s.call())
				if err != nil {
					return err
				}
				if s.json {
					return s.printJSON(map[string]any{"goal": out.Goal, "sprint": out.Sprint, "already": out.Already,
						"commit": out.Commit.String(), "replayed": out.Replayed})
				}
				if out.Already {
					fmt.Fprintf(s.Stdout, "%s is already COMPLETED; git liza goal new GOAL starts the next goal\n", out.Goal)
					return nil
				}
				fmt.Fprintf(s.Stdout, "%s completed; sprint %s closed%s\n", out.Goal, out.Sprint, replayNote(out.Replayed))
				return nil
			}),
		}},
		Action: func(context.Context, *cli.Command) error { return contracts.Invalidf("usage: git liza %s", usage) },
	}
}
