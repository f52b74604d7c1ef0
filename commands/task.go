package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

func (e *Env) taskCmd() *cli.Command {
	return &cli.Command{
		Name:  "task",
		Usage: "plan and steer tasks (planner and human operator)",
		Commands: slices.Concat([]*cli.Command{
			e.taskAddCmd(),
			e.taskFinalizeCmd(),
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
			&cli.IntFlag{Name: "priority", Value: 3, Usage: "1 (highest) to 5 (lowest)"},
			&cli.StringSliceFlag{Name: "depends", Usage: "task ids that must be MERGED first (A,B)"},
			&cli.StringSliceFlag{Name: "paths", Usage: "paths or globs the task owns (A,B)"},
			&cli.IntFlag{Name: "max-files", Usage: "most files a submission may touch"},
			&cli.IntFlag{Name: "max-loc", Usage: "most lines a submission may add and remove"},
			&cli.BoolFlag{Name: "draft", Usage: "keep the task in DRAFT until `task finalize`"},
		},
		Action: e.action(0, 0, "task add --id ID --desc TEXT --spec REF --done TEXT --scope TEXT [--priority N] [--depends A,B] [--draft]", func(ctx context.Context, s *session, _ []string) error {
			t := &contracts.Task{
				ID:          s.cmd.String("id"),
				Description: s.cmd.String("desc"),
				SpecRef:     s.cmd.String("spec"),
				DoneWhen:    s.cmd.String("done"),
				Scope:       s.cmd.String("scope"),
				Priority:    s.cmd.Int("priority"),
				DependsOn:   contracts.StringList(splitList(s.cmd.StringSlice("depends"))),
				Paths:       contracts.StringList(splitList(s.cmd.StringSlice("paths"))),
				MaxFiles:    s.cmd.Int("max-files"),
				MaxLOC:      s.cmd.Int("max-loc"),
				Status:      contracts.Unclaimed,
			}
			if s.cmd.Bool("draft") {
				t.Status = contracts.Draft
			}
			return s.addTask(ctx, t)
		}),
	}
}

func (s *session) addTask(ctx context.Context, t *contracts.Task) error {
	if t.ID == "" {
		return contracts.Invalidf("task add needs --id")
	}
	if err := contracts.ValidTaskID(t.ID); err != nil {
		return err
	}
	if t.Description == "" {
		return contracts.Invalidf("task add needs --desc")
	}
	if t.Status != contracts.Draft {
		for _, req := range []struct{ flag, val string }{{"--spec", t.SpecRef}, {"--done", t.DoneWhen}, {"--scope", t.Scope}} {
			if req.val == "" {
				return contracts.Invalidf("task %s needs %s (or --draft to finish it later)", t.ID, req.flag)
			}
		}
	}
	if t.Priority < 1 || t.Priority > 5 {
		return contracts.Invalidf("priority %d is out of range: 1 (highest) to 5 (lowest)", t.Priority)
	}
	if t.MaxFiles < 0 || t.MaxLOC < 0 {
		return contracts.Invalidf("--max-files and --max-loc take positive numbers")
	}
	for _, p := range t.Paths {
		if err := contracts.ValidPath(p); err != nil {
			return err
		}
	}
	for _, d := range t.DependsOn {
		if err := contracts.ValidTaskID(d); err != nil {
			return err
		}
		if d == t.ID {
			return contracts.Invalidf("task %s cannot depend on itself", t.ID)
		}
	}
	if t.DependsOn == nil {
		t.DependsOn = contracts.StringList{}
	}
	res, err := s.update(ctx, cas.Op{
		Name: contracts.OpAdd,
		Apply: func(tx *cas.Tx) (any, error) {
			live, archived, err := tx.HasTask(t.ID)
			if err != nil {
				return nil, err
			}
			if live || archived {
				return nil, contracts.Invalidf("task %s already exists", t.ID)
			}
			for _, d := range t.DependsOn {
				if live, archived, err := tx.HasTask(d); err != nil {
					return nil, err
				} else if !live && !archived {
					return nil, contracts.Invalidf("task %s depends on unknown task %s", t.ID, d)
				}
			}
			m, err := tx.Meta()
			if err != nil {
				return nil, err
			}
			if t.SpecRef != "" {
				if err := s.checkSpecAt(t.SpecRef, m.Config.IntegrationBranch); err != nil {
					return nil, err
				}
			}
			now := tx.NowString()
			nt := *t
			nt.Created = now
			nt.History = []*contracts.HistoryEvent{{Time: now, Event: "created", Agent: contracts.ActorName(tx.Actor)}}
			tx.PutTask(&nt)
			m.Sprint.Scope.Planned = append(m.Sprint.Scope.Planned, t.ID)
			tx.PutMeta(m)
			if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{Time: now, Event: "task_added", Task: t.ID, Agent: contracts.ActorName(tx.Actor)}); err != nil {
				return nil, err
			}
			tx.Describe(fmt.Sprintf("add %s%s", t.ID, by(tx.Actor)), t.ID)
			return map[string]string{"id": t.ID, "status": string(t.Status)}, nil
		},
	})
	if err != nil {
		return err
	}
	return s.report(res, t.ID, t.Status, "added")
}

func (e *Env) taskFinalizeCmd() *cli.Command {
	return &cli.Command{
		Name:      "finalize",
		Usage:     "DRAFT -> UNCLAIMED once spec_ref and done_when are set",
		ArgsUsage: "ID",
		Action: e.action(1, 1, "task finalize ID", func(ctx context.Context, s *session, a []string) error {
			return s.transition(ctx, contracts.OpFinalize, a[0], contracts.Unclaimed, "finalized", func(tx *cas.Tx, t *contracts.Task) error {
				if t.Status != contracts.Draft {
					return contracts.Invalidf("task %s is %s, not DRAFT", t.ID, t.Status)
				}
				for _, req := range []struct{ field, val string }{{"spec_ref", t.SpecRef}, {"done_when", t.DoneWhen}} {
					if req.val == "" {
						return contracts.Invalidf("task %s cannot be finalized: it has no %s", t.ID, req.field)
					}
				}
				return nil
			})
		}),
	}
}

// transition runs an operation that moves one task to status `to` after
// check accepted it, recording event in the task's history.
func (s *session) transition(ctx context.Context, op contracts.Op, id string, to contracts.Status, event string, check func(tx *cas.Tx, t *contracts.Task) error) error {
	if err := contracts.ValidTaskID(id); err != nil {
		return err
	}
	res, err := s.update(ctx, cas.Op{
		Name: op,
		Apply: func(tx *cas.Tx) (any, error) {
			t, err := tx.MustTask(id)
			if err != nil {
				return nil, err
			}
			if err := check(tx, t); err != nil {
				return nil, err
			}
			if err := contracts.CheckTransition(t.ID, t.Status, to); err != nil {
				return nil, err
			}
			from := t.Status
			t.Status = to
			t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: event, Agent: contracts.ActorName(tx.Actor), From: string(from), To: string(to)})
			tx.PutTask(t)
			tx.Describe(fmt.Sprintf("%s %s%s", op, id, by(tx.Actor)), id)
			return map[string]string{"id": id, "status": string(to)}, nil
		},
	})
	if err != nil {
		return err
	}
	return s.report(res, id, to, event)
}

// report prints the outcome of a one-task operation.
func (s *session) report(res *cas.Result, id string, status contracts.Status, verb string) error {
	if s.json {
		return s.printJSON(map[string]any{"id": id, "status": status, "commit": res.Commit.String(), "replayed": res.Replayed})
	}
	note := ""
	if res.Replayed {
		note = " (already applied for this request id)"
	}
	fmt.Fprintf(s.Stdout, "%s %s (%s)%s\n", id, verb, status, note)
	return nil
}

// checkSpecAt checks a spec reference against HEAD and the integration
// branch.
func (s *session) checkSpecAt(ref, branch string) error {
	_, head, err := s.repo.Head()
	if err != nil {
		return err
	}
	integ, _, err := s.repo.ReadRef("refs/heads/" + branch)
	if err != nil {
		return err
	}
	return s.checkSpec(ref, head, integ)
}

// by is the " (agent)" suffix of commit subjects.
func by(agent string) string {
	if agent == "" {
		return ""
	}
	return " (" + agent + ")"
}
