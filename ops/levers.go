package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// leverChange is what a lever decided about its task: the status it moves
// to (the same status for a field update), the reason its history event
// records, the verb of the one-line report and, optionally, the commit
// subject.
type leverChange struct {
	To      contracts.Status
	Reason  string
	Verb    string
	Subject string
	// Extra goes into the history event (what an edit changed).
	Extra contracts.Extra
}

// leverResult is what a lever reports, kept with the request id so that a
// replayed request reports the first result.
type leverResult struct {
	ID     string           `json:"id"`
	Status contracts.Status `json:"status"`
	Verb   string           `json:"verb"`
}

// writeLever writes a lever of kind k on task id and reports it.
func (s *Service) writeLever(ctx context.Context, call Call, k *kind, id string, in any) (*TaskResult, error) {
	return s.writeLeverLive(ctx, call, k, id, in, nil)
}

// writeLeverLive is writeLever with a check of git that only the live
// write makes (see Service.write).
func (s *Service) writeLeverLive(ctx context.Context, call Call, k *kind, id string, in any, live func(tx *cas.Tx) error) (*TaskResult, error) {
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	res, err := s.write(ctx, call, k, in, live)
	if err != nil {
		return nil, err
	}
	r, err := decode[leverResult](res)
	if err != nil {
		return nil, err
	}
	return &TaskResult{ID: r.ID, Status: r.Status, Verb: r.Verb, Written: written(res)}, nil
}

// lever is the effect of an operation on one live task. change checks the
// task and makes every change but the status; lever then moves the status
// (checked against the state machine), appends the history event and
// describes the commit.
func lever(tx *cas.Tx, op contracts.Op, id, event string, change func(t *contracts.Task) (leverChange, error)) (any, error) {
	t, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	from := t.Status
	c, err := change(t)
	if err != nil {
		return nil, err
	}
	if err := contracts.CheckTransition(id, from, c.To); err != nil {
		return nil, err
	}
	t.Status = c.To
	ev := &contracts.HistoryEvent{Time: tx.NowString(), Event: event, Agent: contracts.ActorName(tx.Actor), Reason: c.Reason, Extra: c.Extra}
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

// BlockRequest blocks a task.
type BlockRequest struct {
	Call
	Task      string
	Reason    string   // what blocks progress
	Questions []string // 1 to 3 questions whose answers would unblock it
	Attempted []string // approaches tried before blocking
}

// Block moves a task to BLOCKED with a reason and the questions that would
// unblock it. A coder blocks only the CLAIMED task it holds. The worktree,
// base commit and assignee stay for whoever picks the task up again.
func (s *Service) Block(ctx context.Context, r BlockRequest) (*TaskResult, error) {
	reason := strings.TrimSpace(r.Reason)
	if reason == "" {
		return nil, contracts.Invalidf("task block needs --reason")
	}
	questions, err := nonEmpty("--question", r.Questions)
	if err != nil {
		return nil, err
	}
	if n := len(questions); n < 1 || n > 3 {
		return nil, contracts.Invalidf("task block needs 1 to 3 --question (got %d)", n)
	}
	attempted, err := nonEmpty("--attempted", r.Attempted)
	if err != nil {
		return nil, err
	}
	return s.writeLever(ctx, r.Call, kindBlock, r.Task, blockInput{Task: r.Task, Reason: reason, Questions: questions, Attempted: attempted})
}

type blockInput struct {
	Task      string   `json:"task"`
	Reason    string   `json:"reason"`
	Questions []string `json:"questions"`
	Attempted []string `json:"attempted,omitempty"`
}

var kindBlock = def("block", contracts.OpBlock, func(tx *cas.Tx, in *blockInput) (any, error) {
	agent := tx.Actor
	role, _ := contracts.ParseAgentID(agent)
	return lever(tx, contracts.OpBlock, in.Task, "blocked", func(t *contracts.Task) (leverChange, error) {
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
				return leverChange{}, contracts.Invalidf("%s may block only the CLAIMED task it holds (task %s is %s)", agent, t.ID, t.Status)
			case t.AssignedTo != agent:
				return leverChange{}, contracts.Invalidf("%s may block only the CLAIMED task it holds (task %s is assigned to %s)", agent, t.ID, t.AssignedTo)
			}
		}
		if t.Status == contracts.Claimed {
			if err := idleAgent(tx, t.AssignedTo, t.ID); err != nil {
				return leverChange{}, err
			}
		}
		// Nobody holds a lease on a blocked task.
		t.BlockedReason = in.Reason
		t.BlockedQuestions = contracts.StringList(in.Questions)
		t.Attempted = append(t.Attempted, in.Attempted...)
		t.LeaseExpires = ""
		return leverChange{To: contracts.Blocked, Reason: in.Reason, Verb: "blocked"}, nil
	})
})

// UnblockRequest returns a BLOCKED task to UNCLAIMED.
type UnblockRequest struct {
	Call
	Task string
}

// Unblock moves a BLOCKED task to UNCLAIMED, keeping the worktree for the
// next claim.
func (s *Service) Unblock(ctx context.Context, r UnblockRequest) (*TaskResult, error) {
	return s.writeLever(ctx, r.Call, kindUnblock, r.Task, taskInput{Task: r.Task})
}

var kindUnblock = def("unblock", contracts.OpUnblock, func(tx *cas.Tx, in *taskInput) (any, error) {
	if err := checkGoalOpen(tx, "unblocked tasks"); err != nil {
		return nil, err
	}
	return lever(tx, contracts.OpUnblock, in.Task, "unblocked", func(t *contracts.Task) (leverChange, error) {
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
})

// SupersedeRequest rescopes a task into existing replacement tasks.
type SupersedeRequest struct {
	Call
	Task   string
	By     []string // the replacement tasks
	Reason string   // one-sentence root cause of the rescope
}

// Supersede marks a task SUPERSEDED by existing live tasks, recording the
// link on both sides and in goal.alignment_history.
func (s *Service) Supersede(ctx context.Context, r SupersedeRequest) (*TaskResult, error) {
	id := r.Task
	var news []string
	for _, n := range r.By {
		if !slices.Contains(news, n) {
			news = append(news, n)
		}
	}
	if len(news) == 0 {
		return nil, contracts.Invalidf("task supersede needs --by")
	}
	reason := strings.TrimSpace(r.Reason)
	if reason == "" {
		return nil, contracts.Invalidf("task supersede needs --reason")
	}
	for _, n := range news {
		if err := contracts.ValidTaskID(n); err != nil {
			return nil, err
		}
		if n == id {
			return nil, contracts.Invalidf("task %s cannot supersede itself", id)
		}
	}
	return s.writeLever(ctx, r.Call, kindSupersede, id, supersedeInput{Task: id, By: news, Reason: reason})
}

type supersedeInput struct {
	Task   string   `json:"task"`
	By     []string `json:"by"`
	Reason string   `json:"reason"`
}

var kindSupersede = def("supersede", contracts.OpSupersede, func(tx *cas.Tx, in *supersedeInput) (any, error) {
	id, news, reason := in.Task, in.By, in.Reason
	return lever(tx, contracts.OpSupersede, id, "superseded", func(t *contracts.Task) (leverChange, error) {
		if err := contracts.CheckTransition(t.ID, t.Status, contracts.Superseded); err != nil {
			return leverChange{}, err
		}
		for _, n := range news {
			if n == id {
				return leverChange{}, contracts.Invalidf("task %s cannot supersede itself", id)
			}
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
})

// AbandonRequest drops a task.
type AbandonRequest struct {
	Call
	Task   string
	Reason string
}

// Abandon moves a DRAFT, UNCLAIMED or BLOCKED task to ABANDONED.
func (s *Service) Abandon(ctx context.Context, r AbandonRequest) (*TaskResult, error) {
	reason := strings.TrimSpace(r.Reason)
	if reason == "" {
		return nil, contracts.Invalidf("task abandon needs --reason")
	}
	return s.writeLever(ctx, r.Call, kindAbandon, r.Task, abandonInput{Task: r.Task, Reason: reason})
}

type abandonInput struct {
	Task   string `json:"task"`
	Reason string `json:"reason"`
}

var kindAbandon = def("abandon", contracts.OpAbandon, func(tx *cas.Tx, in *abandonInput) (any, error) {
	return lever(tx, contracts.OpAbandon, in.Task, "abandoned", func(t *contracts.Task) (leverChange, error) {
		if err := contracts.CheckTransition(t.ID, t.Status, contracts.Abandoned); err != nil {
			return leverChange{}, err
		}
		t.LeaseExpires = ""
		if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{
			Time: tx.NowString(), Event: "abandoned", Task: in.Task, Agent: contracts.ActorName(tx.Actor), Reason: in.Reason,
		}); err != nil {
			return leverChange{}, err
		}
		return leverChange{To: contracts.Abandoned, Reason: in.Reason, Verb: "abandoned"}, nil
	})
})

// ReleaseRequest takes a task back from its coder, its reviewer or both.
type ReleaseRequest struct {
	Call
	Task string
	// Side is "coder" (the default), "reviewer" or "both".
	Side string
	// Force releases a lease that has not expired.
	Force bool
}

// Release ends a coder's claim or a reviewer's review once its lease has
// expired, or at once with Force. A reviewer releases only its own review.
func (s *Service) Release(ctx context.Context, r ReleaseRequest) (*TaskResult, error) {
	side, force := r.Side, r.Force
	if side == "" {
		side = "coder"
	}
	if side != "coder" && side != "reviewer" && side != "both" {
		return nil, contracts.Invalidf("--role %q: want coder, reviewer or both", side)
	}
	return s.writeLever(ctx, r.Call, kindRelease, r.Task, releaseInput{Task: r.Task, Side: side, Force: force})
}

type releaseInput struct {
	Task  string `json:"task"`
	Side  string `json:"side"`
	Force bool   `json:"force,omitempty"`
}

var kindRelease = def("release", contracts.OpRelease, func(tx *cas.Tx, in *releaseInput) (any, error) {
	agent, side, force := tx.Actor, in.Side, in.Force
	role, _ := contracts.ParseAgentID(agent)
	return lever(tx, contracts.OpRelease, in.Task, "released", func(t *contracts.Task) (leverChange, error) {
		// A coder gives back its own claim (its supervisor does, when its
		// agent cannot work for its environment: agent/envfail.go).
		if role == contracts.RoleCoder {
			if side != "coder" {
				return leverChange{}, contracts.Invalidf("%s may release only its own claim (--role coder)", agent)
			}
			if force {
				return leverChange{}, contracts.Invalidf("%s may not force a release", agent)
			}
			if t.AssignedTo != agent {
				return leverChange{}, contracts.Invalidf("%s may release only its own claim (task %s is held by %s)", agent, t.ID, cmp.Or(t.AssignedTo, "no coder"))
			}
		}
		if role == contracts.RoleReviewer {
			if side != "reviewer" {
				return leverChange{}, contracts.Invalidf("%s may release only its own review (--role reviewer)", agent)
			}
			if force {
				return leverChange{}, contracts.Invalidf("%s may not force a release", agent)
			}
		}
		// unexpired refuses to take a lease from someone else before it
		// ends, unless forced.
		unexpired := func(what, holder, lease string) error {
			if force || holder == agent || lease == "" {
				return nil
			}
			if _, err := contracts.ParseTime(lease); err != nil {
				return err
			}
			if !tx.LeaseEnded(lease) {
				return contracts.Invalidf("task %s: %s's %s lease runs until %s%s (--force releases it now)", t.ID, holder, what, lease, tx.Held(lease))
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
			if role == contracts.RoleReviewer && t.ReviewingBy != agent {
				return leverChange{}, contracts.Invalidf("%s may release only its own review (task %s is reviewed by %s)", agent, t.ID, t.ReviewingBy)
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
})

// ArchiveRequest moves terminal tasks off the live board.
type ArchiveRequest struct {
	Call
	// Tasks to archive; empty for every terminal task.
	Tasks []string
}

// ArchiveResult lists the tasks archived.
type ArchiveResult struct {
	Archived []string `json:"archived"`
	Written  `json:"-"`
}

// Archive moves MERGED, SUPERSEDED and ABANDONED tasks into the archive.
func (s *Service) Archive(ctx context.Context, r ArchiveRequest) (*ArchiveResult, error) {
	var ids []string
	for _, id := range r.Tasks {
		if err := contracts.ValidTaskID(id); err != nil {
			return nil, err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return writeAs[ArchiveResult](ctx, s, r.Call, kindArchive, archiveInput{Tasks: ids}, nil)
}

// archiveInput is what task archive records: the tasks asked for, or none
// for every terminal task (a choice the state alone decides).
type archiveInput struct {
	Tasks []string `json:"tasks,omitempty"`
}

var kindArchive = def("archive", contracts.OpArchive, func(tx *cas.Tx, in *archiveInput) (any, error) {
	names := in.Tasks
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
		contracts.SortIDs(names)
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
	return ArchiveResult{Archived: append([]string{}, names...)}, nil
})
