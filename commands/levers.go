package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
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

// leverChange is what a lever decided about its task: the status it moves
// to (the same status for a field update), the reason its history event
// records, the verb of the one-line report and, optionally, the commit
// subject.
type leverChange struct {
	To      contracts.Status
	Reason  string
	Verb    string
	Subject string
}

// leverResult is what a lever reports, kept with the request id so that a
// replayed request reports the first result.
type leverResult struct {
	ID     string           `json:"id"`
	Status contracts.Status `json:"status"`
	Verb   string           `json:"verb"`
}

// lever runs an operation on one live task. change checks the task and
// makes every change but the status; lever then moves the status (checked
// against the state machine), appends the history event and describes the
// commit.
func (s *session) lever(ctx context.Context, op contracts.Op, id, event string, change func(tx *cas.Tx, t *contracts.Task) (leverChange, error)) error {
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
			from := t.Status
			c, err := change(tx, t)
			if err != nil {
				return nil, err
			}
			if err := contracts.CheckTransition(id, from, c.To); err != nil {
				return nil, err
			}
			t.Status = c.To
			ev := &contracts.HistoryEvent{Time: tx.NowString(), Event: event, Agent: contracts.ActorName(tx.Actor), Reason: c.Reason}
			if from != c.To {
				ev.From, ev.To = string(from), string(c.To)
			}
			t.History = append(t.History, ev)
			tx.PutTask(t)
			subject := c.Subject
			if subject == "" {
				subject = fmt.Sprintf("%s %s", op, id)
			}
			tx.Describe(subject+by(tx.Actor), id)
			return leverResult{ID: id, Status: c.To, Verb: c.Verb}, nil
		},
	})
	if err != nil {
		return err
	}
	r, err := decodeResult[leverResult](res)
	if err != nil {
		return err
	}
	return s.report(res, r.ID, r.Status, r.Verb)
}

// idleAgent puts an agent whose task was taken from it back to IDLE, when it
// has an entry that still points at that task (or at none).
func idleAgent(tx *cas.Tx, agent, task string) error {
	if agent == "" {
		return nil
	}
	a, err := tx.Agent(agent)
	if err != nil || a == nil {
		return err
	}
	if a.CurrentTask != "" && a.CurrentTask != task {
		return nil
	}
	a.Status = "IDLE"
	a.CurrentTask = ""
	a.LeaseExpires = ""
	tx.PutAgent(agent, a)
	return nil
}

// nonEmpty is the values with surrounding space trimmed, refusing empty ones.
func nonEmpty(flag string, vals []string) ([]string, error) {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, contracts.Invalidf("%s needs a non-empty value", flag)
		}
		out = append(out, v)
	}
	return out, nil
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
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, usage)
			if err != nil {
				return err
			}
			reason := strings.TrimSpace(cmd.String("reason"))
			if reason == "" {
				return contracts.Invalidf("task block needs --reason")
			}
			questions, err := nonEmpty("--question", cmd.StringSlice("question"))
			if err != nil {
				return err
			}
			if n := len(questions); n < 1 || n > 3 {
				return contracts.Invalidf("task block needs 1 to 3 --question (got %d)", n)
			}
			attempted, err := nonEmpty("--attempted", cmd.StringSlice("attempted"))
			if err != nil {
				return err
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			role, _ := contracts.ParseAgentID(s.agent)
			return s.lever(ctx, contracts.OpBlock, a[0], "blocked", func(tx *cas.Tx, t *contracts.Task) (leverChange, error) {
				if t.Status == contracts.Blocked {
					return leverChange{}, contracts.Invalidf("task %s is already BLOCKED", t.ID)
				}
				if err := contracts.CheckTransition(t.ID, t.Status, contracts.Blocked); err != nil {
					return leverChange{}, err
				}
				switch t.Status {
				case contracts.Claimed, contracts.Unclaimed, contracts.Rejected, contracts.IntegrationFailed:
				default:
					return leverChange{}, contracts.Invalidf("task %s is %s: block takes CLAIMED, UNCLAIMED, REJECTED or INTEGRATION_FAILED tasks", t.ID, t.Status)
				}
				if role == contracts.RoleCoder {
					switch {
					case t.Status != contracts.Claimed:
						return leverChange{}, contracts.Invalidf("%s may block only the CLAIMED task it holds (task %s is %s)", s.agent, t.ID, t.Status)
					case t.AssignedTo != s.agent:
						return leverChange{}, contracts.Invalidf("%s may block only the CLAIMED task it holds (task %s is assigned to %s)", s.agent, t.ID, t.AssignedTo)
					}
				}
				if t.Status == contracts.Claimed {
					if err := idleAgent(tx, t.AssignedTo, t.ID); err != nil {
						return leverChange{}, err
					}
				}
				// The worktree, base commit and assignee stay: the work is
				// kept for whoever picks the task up again. Nobody holds a
				// lease on a blocked task.
				t.BlockedReason = reason
				t.BlockedQuestions = contracts.StringList(questions)
				t.Attempted = append(t.Attempted, attempted...)
				t.LeaseExpires = ""
				return leverChange{To: contracts.Blocked, Reason: reason, Verb: "blocked"}, nil
			})
		},
	}
}

func (e *Env) taskUnblockCmd() *cli.Command {
	return &cli.Command{
		Name:      "unblock",
		Usage:     "BLOCKED -> UNCLAIMED, keeping the worktree for the next claim",
		ArgsUsage: "ID",
		Action: e.action(1, 1, "task unblock ID", func(ctx context.Context, s *session, a []string) error {
			return s.lever(ctx, contracts.OpUnblock, a[0], "unblocked", func(tx *cas.Tx, t *contracts.Task) (leverChange, error) {
				if t.Status != contracts.Blocked {
					return leverChange{}, contracts.Invalidf("task %s is %s, not BLOCKED", t.ID, t.Status)
				}
				t.BlockedReason = ""
				t.BlockedQuestions = nil
				if t.AssignedTo != "" {
					t.PreviousAssignee = t.AssignedTo
				}
				t.AssignedTo = ""
				t.LeaseExpires = ""
				return leverChange{To: contracts.Unclaimed, Verb: "unblocked"}, nil
			})
		}),
	}
}

func (e *Env) taskSupersedeCmd() *cli.Command {
	const usage = "task supersede ID --by NEW[,NEW] --reason TEXT"
	return &cli.Command{
		Name:      "supersede",
		Usage:     "SUPERSEDED by existing replacement tasks (rescoping)",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "by", Usage: "the task ids that replace it (A,B)"},
			&cli.StringFlag{Name: "reason", Usage: "one-sentence root cause of the rescope"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, usage)
			if err != nil {
				return err
			}
			id := a[0]
			var news []string
			for _, n := range splitList(cmd.StringSlice("by")) {
				if !slices.Contains(news, n) {
					news = append(news, n)
				}
			}
			if len(news) == 0 {
				return contracts.Invalidf("task supersede needs --by")
			}
			reason := strings.TrimSpace(cmd.String("reason"))
			if reason == "" {
				return contracts.Invalidf("task supersede needs --reason")
			}
			for _, n := range news {
				if err := contracts.ValidTaskID(n); err != nil {
					return err
				}
				if n == id {
					return contracts.Invalidf("task %s cannot supersede itself", id)
				}
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			return s.lever(ctx, contracts.OpSupersede, id, "superseded", func(tx *cas.Tx, t *contracts.Task) (leverChange, error) {
				if err := contracts.CheckTransition(t.ID, t.Status, contracts.Superseded); err != nil {
					return leverChange{}, err
				}
				for _, n := range news {
					nt, err := tx.MustTask(n)
					if err != nil {
						return leverChange{}, err
					}
					if nt.Status.Terminal() {
						return leverChange{}, contracts.Invalidf("task %s is %s: a task is superseded by live tasks", n, nt.Status)
					}
					if !nt.Supersedes.Contains(id) {
						nt.Supersedes = append(nt.Supersedes, id)
					}
					if nt.RescopeReason == "" {
						nt.RescopeReason = reason
					}
					tx.PutTask(nt)
				}
				t.SupersededBy = contracts.StringList(news)
				t.RescopeReason = reason
				t.LeaseExpires = ""
				if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{
					Time: tx.NowString(), Event: "superseded", Task: id, Tasks: contracts.StringList(news),
					Agent: contracts.ActorName(tx.Actor), Reason: reason,
				}); err != nil {
					return leverChange{}, err
				}
				list := strings.Join(news, ",")
				return leverChange{
					To: contracts.Superseded, Reason: reason,
					Verb:    "superseded by " + list,
					Subject: fmt.Sprintf("supersede %s by %s", id, list),
				}, nil
			})
		},
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
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, "task abandon ID --reason TEXT")
			if err != nil {
				return err
			}
			reason := strings.TrimSpace(cmd.String("reason"))
			if reason == "" {
				return contracts.Invalidf("task abandon needs --reason")
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			id := a[0]
			return s.lever(ctx, contracts.OpAbandon, id, "abandoned", func(tx *cas.Tx, t *contracts.Task) (leverChange, error) {
				if err := contracts.CheckTransition(t.ID, t.Status, contracts.Abandoned); err != nil {
					return leverChange{}, err
				}
				t.LeaseExpires = ""
				if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{
					Time: tx.NowString(), Event: "abandoned", Task: id, Agent: contracts.ActorName(tx.Actor), Reason: reason,
				}); err != nil {
					return leverChange{}, err
				}
				return leverChange{To: contracts.Abandoned, Reason: reason, Verb: "abandoned"}, nil
			})
		},
	}
}

func (e *Env) taskReleaseCmd() *cli.Command {
	const usage = "task release ID [--role coder|reviewer|both] [--force]"
	return &cli.Command{
		Name:      "release",
		Usage:     "take a task back from its coder or its reviewer once their lease has expired (--force: at once)",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "role", Value: "coder", Usage: "which lease to release: coder, reviewer or both"},
			&cli.BoolFlag{Name: "force", Usage: "release a lease that has not expired"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, usage)
			if err != nil {
				return err
			}
			side := cmd.String("role")
			if side != "coder" && side != "reviewer" && side != "both" {
				return contracts.Invalidf("--role %q: want coder, reviewer or both", side)
			}
			force := cmd.Bool("force")
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			role, _ := contracts.ParseAgentID(s.agent)
			return s.lever(ctx, contracts.OpRelease, a[0], "released", func(tx *cas.Tx, t *contracts.Task) (leverChange, error) {
				if role == contracts.RoleReviewer {
					if side != "reviewer" {
						return leverChange{}, contracts.Invalidf("%s may release only its own review (--role reviewer)", s.agent)
					}
					if force {
						return leverChange{}, contracts.Invalidf("%s may not force a release", s.agent)
					}
				}
				// unexpired refuses to take a lease from someone else before
				// it ends, unless forced.
				unexpired := func(what, holder, lease string) error {
					if force || holder == s.agent || lease == "" {
						return nil
					}
					end, err := contracts.ParseTime(lease)
					if err != nil {
						return err
					}
					if end.After(tx.Now) {
						return contracts.Invalidf("task %s: %s's %s lease runs until %s (--force releases it now)", t.ID, holder, what, lease)
					}
					return nil
				}
				to := t.Status
				var released, holders []string
				coderHeld := t.AssignedTo != "" && (t.Status == contracts.Claimed || t.Status == contracts.Rejected || t.Status == contracts.IntegrationFailed)
				reviewHeld := t.ReviewingBy != "" && t.Status == contracts.ReadyForReview
				if side != "reviewer" && coderHeld {
					if err := unexpired("coder", t.AssignedTo, t.LeaseExpires); err != nil {
						return leverChange{}, err
					}
					if err := idleAgent(tx, t.AssignedTo, t.ID); err != nil {
						return leverChange{}, err
					}
					released = append(released, "coder lease of "+t.AssignedTo)
					holders = append(holders, t.AssignedTo)
					t.PreviousAssignee = t.AssignedTo
					t.AssignedTo = ""
					t.LeaseExpires = ""
					if t.Status == contracts.Claimed {
						to = contracts.Unclaimed
					}
				}
				if side != "coder" && reviewHeld {
					if role == contracts.RoleReviewer && t.ReviewingBy != s.agent {
						return leverChange{}, contracts.Invalidf("%s may release only its own review (task %s is reviewed by %s)", s.agent, t.ID, t.ReviewingBy)
					}
					if err := unexpired("review", t.ReviewingBy, t.ReviewLeaseExpires); err != nil {
						return leverChange{}, err
					}
					if err := idleAgent(tx, t.ReviewingBy, t.ID); err != nil {
						return leverChange{}, err
					}
					released = append(released, "review lease of "+t.ReviewingBy)
					holders = append(holders, t.ReviewingBy)
					t.ReviewingBy = ""
					t.ReviewLeaseExpires = ""
				}
				if len(released) == 0 {
					what := map[string]string{"coder": "coder lease", "reviewer": "review lease", "both": "coder or review lease"}[side]
					return leverChange{}, contracts.Invalidf("task %s holds no %s", t.ID, what)
				}
				reason := strings.Join(released, ", ")
				if force {
					reason += " (forced)"
				}
				from := strings.Join(holders, ",")
				return leverChange{
					To: to, Reason: reason,
					Verb:    "released from " + from,
					Subject: fmt.Sprintf("release %s from %s", t.ID, from),
				}, nil
			})
		},
	}
}

// archiveResult is what task archive reports.
type archiveResult struct {
	Archived []string `json:"archived"`
}

func (e *Env) taskArchiveCmd() *cli.Command {
	return &cli.Command{
		Name:      "archive",
		Usage:     "move terminal tasks (MERGED, SUPERSEDED, ABANDONED) off the live board; all of them with no ID",
		ArgsUsage: "[ID ...]",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 0, -1, "task archive [ID ...]")
			if err != nil {
				return err
			}
			var ids []string
			for _, id := range a {
				if err := contracts.ValidTaskID(id); err != nil {
					return err
				}
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			res, err := s.update(ctx, cas.Op{
				Name: contracts.OpArchive,
				Apply: func(tx *cas.Tx) (any, error) {
					names := ids
					if len(names) == 0 {
						idx, err := tx.Index()
						if err != nil {
							return nil, err
						}
						for id, sum := range idx {
							if sum.Status.Terminal() {
								names = append(names, id)
							}
						}
						slices.SortFunc(names, func(x, y string) int {
							switch {
							case contracts.NaturalLess(x, y):
								return -1
							case contracts.NaturalLess(y, x):
								return 1
							}
							return 0
						})
					}
					tasks := make([]*contracts.Task, 0, len(names))
					for _, id := range names {
						t, err := tx.MustTask(id)
						if err != nil {
							return nil, err
						}
						if !t.Status.Terminal() {
							return nil, contracts.Invalidf("task %s is %s: only MERGED, SUPERSEDED or ABANDONED tasks are archived", id, t.Status)
						}
						tasks = append(tasks, t)
					}
					for _, t := range tasks {
						tx.ArchiveTask(t)
					}
					switch len(names) {
					case 0:
					case 1:
						tx.Describe(fmt.Sprintf("archive %s%s", names[0], by(tx.Actor)), names[0])
					default:
						tx.Describe(fmt.Sprintf("archive %d tasks%s", len(names), by(tx.Actor)), "")
					}
					return archiveResult{Archived: append([]string{}, names...)}, nil
				},
			})
			if err != nil {
				return err
			}
			r, err := decodeResult[archiveResult](res)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"archived": r.Archived, "count": len(r.Archived), "commit": res.Commit.String(), "replayed": res.Replayed})
			}
			note := ""
			if res.Replayed {
				note = " (already applied for this request id)"
			}
			switch len(r.Archived) {
			case 0:
				fmt.Fprintf(s.Stdout, "nothing to archive%s\n", note)
			case 1:
				fmt.Fprintf(s.Stdout, "archived 1 task: %s%s\n", r.Archived[0], note)
			default:
				fmt.Fprintf(s.Stdout, "archived %d tasks: %s%s\n", len(r.Archived), strings.Join(r.Archived, ", "), note)
			}
			return nil
		},
	}
}
