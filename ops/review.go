package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

// ReviewRequest takes the review of a task.
type ReviewRequest struct {
	Call
	// Task is the task to review; empty for the best one awaiting review.
	Task string
}

// ReviewResult is what a reviewer needs to start.
type ReviewResult struct {
	ID                 string `json:"id"`
	Author             string `json:"author"`
	Worktree           string `json:"worktree"`
	BaseCommit         string `json:"base_commit"`
	ReviewCommit       string `json:"review_commit"`
	DiffRange          string `json:"diff_range"`
	ReviewLeaseExpires string `json:"review_lease_expires"`
	Description        string `json:"description"`
	DoneWhen           string `json:"done_when"`
	Commit             string `json:"commit,omitempty"`
}

// Review takes the review lease of a task awaiting review. In remote mode
// the reviewed commits are fetched: the reviewer reads them from
// refs/liza/remotes/<remote>/heads/task/<id>.
func (s *Service) Review(ctx context.Context, r ReviewRequest) (*ReviewResult, error) {
	if r.Task != "" {
		if err := contracts.ValidTaskID(r.Task); err != nil {
			return nil, err
		}
	}
	if err := s.checkSwitchFiles("reviews"); err != nil {
		return nil, err
	}
	res, err := s.update(ctx, r.Call, cas.Op{Name: contracts.OpReview, Apply: func(tx *cas.Tx) (any, error) {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		if err := checkHalted(m.Control, "reviews"); err != nil {
			return nil, err
		}
		target := r.Task
		if target == "" {
			best, err := bestReview(tx, s.Agent)
			if err != nil {
				return nil, err
			}
			if best == "" {
				return nil, contracts.Invalidf("no task awaits review")
			}
			target = best
		}
		t, err := tx.MustTask(target)
		if err != nil {
			return nil, err
		}
		if err := checkReviewClaim(tx, t.Summary(), s.Agent); err != nil {
			return nil, err
		}
		_, lease, err := tx.Lease()
		if err != nil {
			return nil, err
		}
		prev := t.ReviewingBy
		t.ReviewingBy, t.ReviewLeaseExpires = s.Agent, lease
		ev := &contracts.HistoryEvent{Time: tx.NowString(), Event: "review_claimed", Agent: s.Agent}
		if prev != "" && prev != s.Agent {
			ev.Reason = "review lease of " + prev + " expired"
			// The reviewer displaced no longer reviews the task.
			if err := idleAgent(tx, prev, t.ID); err != nil {
				return nil, err
			}
		}
		t.History = append(t.History, ev)
		tx.PutTask(t)
		if err := setAgent(tx, s.Agent, contracts.RoleReviewer, "REVIEWING", t.ID, lease); err != nil {
			return nil, err
		}
		tx.Describe(fmt.Sprintf("review %s (%s)", t.ID, s.Agent), t.ID)
		return ReviewResult{ID: t.ID, Author: t.AssignedTo, Worktree: t.Worktree, BaseCommit: t.BaseCommit,
			ReviewCommit: t.ReviewCommit, DiffRange: t.BaseCommit + ".." + t.ReviewCommit,
			ReviewLeaseExpires: lease, Description: t.Description, DoneWhen: t.DoneWhen}, nil
	}})
	if err != nil {
		return nil, err
	}
	out, err := decode[ReviewResult](res)
	if err != nil {
		return nil, err
	}
	out.Commit = res.Commit.String()
	if s.remote() != "" {
		if _, _, err := s.branchTip(ctx, worktree.BranchRef(out.ID)); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// checkReviewClaim decides whether agent may take the review of t.
func checkReviewClaim(tx *cas.Tx, t *contracts.TaskSummary, agent string) error {
	if t.Status != contracts.ReadyForReview {
		return contracts.Invalidf("task %s is %s, not READY_FOR_REVIEW", t.ID, t.Status)
	}
	if t.AssignedTo == agent {
		return contracts.Invalidf("%s wrote task %s and cannot review it", agent, t.ID)
	}
	if t.ReviewingBy == agent {
		return contracts.Invalidf("%s already reviews task %s", agent, t.ID)
	}
	if t.ReviewingBy != "" && !contracts.LeaseOver(t.ReviewLeaseExpires, tx.Now) {
		return contracts.Invalidf("task %s is under review by %s until %s", t.ID, t.ReviewingBy, t.ReviewLeaseExpires)
	}
	idx, err := tx.Index()
	if err != nil {
		return err
	}
	for _, o := range idx {
		if o.ID != t.ID && o.Status == contracts.ReadyForReview && o.ReviewingBy == agent {
			return contracts.Invalidf("%s already reviews task %s: give a verdict or release it first", agent, o.ID)
		}
	}
	return nil
}

// bestReview is the best task awaiting a review agent may take.
func bestReview(tx *cas.Tx, agent string) (string, error) {
	idx, err := tx.Index()
	if err != nil {
		return "", err
	}
	var best *contracts.TaskSummary
	for _, t := range idx {
		if checkReviewClaim(tx, t, agent) != nil {
			continue
		}
		if best == nil || contracts.Less(t, best) {
			best = t
		}
	}
	if best == nil {
		return "", nil
	}
	return best.ID, nil
}

// VerdictRequest is a reviewer's verdict on the review it holds.
type VerdictRequest struct {
	Call
	Task    string
	Approve bool
	// Reason is why; a rejection needs one.
	Reason string
	// Feedback is a rejection's specific changes needed (seed 000's
	// rejection_feedback), beside the reason.
	Feedback string
	// Commit, when set, is the revision the reviewer reviewed: it must
	// resolve to the task's review_commit.
	Commit string
}

// VerdictResult is the task's status after a verdict, and why it was
// blocked when the verdict blocked it.
type VerdictResult struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	BlockedReason string `json:"blocked_reason"`
	// Paused says the verdict paused the team: the task's fifth
	// rejection in a row (seed 002).
	Paused  bool `json:"paused,omitempty"`
	Written `json:"-"`
}

// The seed's questions when a task runs out of iterations or review cycles.
var (
	maxIterationQuestions = contracts.StringList{"Is the spec clear enough?", "Should task be decomposed?"}
	deadlockQuestions     = contracts.StringList{"Is the reviewer's objection within the task's scope?", "Should the task be rescoped or split?"}
)

// Verdict approves or rejects the review the agent holds.
func (s *Service) Verdict(ctx context.Context, r VerdictRequest) (*VerdictResult, error) {
	reason, feedback := strings.TrimSpace(r.Reason), strings.TrimSpace(r.Feedback)
	if !r.Approve && reason == "" {
		return nil, contracts.Invalidf("a rejection needs --reason")
	}
	if r.Approve && feedback != "" {
		return nil, contracts.Invalidf("--feedback goes with a rejection: say what to change")
	}
	id := r.Task
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	commit := r.Commit
	if commit != "" {
		h, err := s.Repo.ResolveCommit(ctx, commit)
		if err != nil {
			return nil, err
		}
		commit = h.String()
	}
	res, err := s.update(ctx, r.Call, cas.Op{Name: contracts.OpVerdict, Apply: func(tx *cas.Tx) (any, error) {
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if t.Status != contracts.ReadyForReview {
			return nil, contracts.Invalidf("task %s is %s, not READY_FOR_REVIEW", id, t.Status)
		}
		if t.ReviewingBy != s.Agent {
			holder := t.ReviewingBy
			if holder == "" {
				holder = "nobody"
			}
			return nil, contracts.Invalidf("%s does not hold the review of task %s (%s does): run git liza review %s first", s.Agent, id, holder, id)
		}
		if t.AssignedTo == s.Agent {
			return nil, contracts.Invalidf("%s wrote task %s and cannot judge it", s.Agent, id)
		}
		if commit != "" && commit != t.ReviewCommit {
			return nil, contracts.Invalidf("commit %s is not the commit under review (%s)", short(commit), short(t.ReviewCommit))
		}
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		now := tx.NowString()
		t.ReviewingBy, t.ReviewLeaseExpires = "", ""
		paused := false
		if r.Approve {
			t.Status = contracts.Approved
			t.ApprovedBy = s.Agent
			t.History = append(t.History, &contracts.HistoryEvent{Time: now, Event: "approved", Agent: s.Agent,
				From: string(contracts.ReadyForReview), To: string(contracts.Approved), Commit: t.ReviewCommit, Reason: reason})
		} else {
			if err := reject(tx, t, m, reason, feedback); err != nil {
				return nil, err
			}
			if paused, err = pauseOnRejections(tx, t, m); err != nil {
				return nil, err
			}
		}
		tx.PutTask(t)
		if err := setAgent(tx, s.Agent, contracts.RoleReviewer, "IDLE", "", ""); err != nil {
			return nil, err
		}
		verb := "approve"
		if !r.Approve {
			verb = "reject"
		}
		subject := fmt.Sprintf("%s %s (%s)", verb, id, s.Agent)
		if paused {
			subject += "; team paused"
		}
		tx.Describe(subject, id)
		return VerdictResult{ID: id, Status: string(t.Status), BlockedReason: t.BlockedReason, Paused: paused}, nil
	}})
	if err != nil {
		return nil, err
	}
	out, err := decode[VerdictResult](res)
	if err != nil {
		return nil, err
	}
	out.ID, out.Written = id, written(res)
	return &out, nil
}

// reject records a rejection and the seed's stop rules: too many review
// cycles or the same reason twice is a review deadlock, the third
// rejection of the task in the sprint blocks it at once (seed 000's
// circuit breaker: "Same task rejected 3x | BLOCKED, escalate"), and too
// many iterations blocks it; each counts the coder as failed on it.
func reject(tx *cas.Tx, t *contracts.Task, m *cas.Meta, reason, feedback string) error {
	cfg := m.Config
	now := tx.NowString()
	repeated := false
	for _, ev := range t.History {
		if ev.Event == "rejected" && strings.TrimSpace(ev.Reason) == reason {
			repeated = true
		}
	}
	t.ReviewCyclesCurrent++
	t.ReviewCyclesTotal++
	t.RejectionReason, t.RejectionFeedback = reason, feedback
	t.Status = contracts.Rejected
	ev := &contracts.HistoryEvent{Time: now, Event: "rejected", Agent: tx.Actor,
		From: string(contracts.ReadyForReview), To: string(contracts.Rejected), Commit: t.ReviewCommit, Reason: reason}
	if feedback != "" {
		ev.Extra = contracts.Extra{"feedback": feedback}
	}
	t.History = append(t.History, ev)
	rejections := contracts.SprintRejections(t, m.Sprint.Timeline.Started)

	var blocked string
	var questions contracts.StringList
	deadlock := false
	switch {
	case t.Iteration >= cfg.MaxCoderIterations:
		blocked = fmt.Sprintf("Max iterations (%d) reached without approval", cfg.MaxCoderIterations)
		questions = maxIterationQuestions
	case t.ReviewCyclesCurrent >= cfg.MaxReviewCycles:
		blocked = fmt.Sprintf("Review deadlock: %d review cycles without approval", t.ReviewCyclesCurrent)
		questions, deadlock = deadlockQuestions, true
	case repeated:
		blocked = "Review deadlock: the same rejection reason was given twice"
		questions, deadlock = deadlockQuestions, true
	case rejections >= contracts.RejectionThreshold:
		blocked = fmt.Sprintf("Rejected %d times in this sprint: escalated to the planner", rejections)
		questions, deadlock = deadlockQuestions, true
	}
	if blocked == "" {
		return nil
	}
	t.Status = contracts.Blocked
	t.BlockedReason, t.BlockedQuestions = blocked, questions
	if t.AssignedTo != "" && !t.FailedBy.Contains(t.AssignedTo) {
		t.FailedBy = append(t.FailedBy, t.AssignedTo)
	}
	t.History = append(t.History, &contracts.HistoryEvent{Time: now, Event: "blocked", Agent: tx.Actor,
		From: string(contracts.Rejected), To: string(contracts.Blocked), Reason: blocked})
	if deadlock {
		if err := logSystemAnomaly(tx, "review_deadlock", t.ID, contracts.Extra{"review_cycles": t.ReviewCyclesCurrent, "reason": blocked}); err != nil {
			return err
		}
	}
	if len(t.FailedBy) >= contracts.FailedCodersThreshold {
		return logSystemAnomaly(tx, "hypothesis_exhaustion", t.ID, contracts.Extra{"failed_by": strings.Join(t.FailedBy, ",")})
	}
	return nil
}

// pauseOnRejections pauses a running team for the human when t has just
// been rejected PauseRejections times in a row (seed 002: "If 5th
// consecutive INSUFFICIENT: pause loop, summarize all blockers for Human").
// The summary of the blockers is the commit's body; a pause, abort or
// checkpoint already in force stays as it is.
func pauseOnRejections(tx *cas.Tx, t *contracts.Task, m *cas.Meta) (bool, error) {
	n := contracts.ConsecutiveRejections(t)
	if n < contracts.PauseRejections || modeOf(m.Control) != contracts.ModeRunning {
		return false, nil
	}
	m.Control = &contracts.Control{Mode: contracts.ModePaused, Since: tx.NowString(), By: contracts.ActorName(tx.Actor),
		Reason: fmt.Sprintf("task %s rejected %d times in a row: paused for the human", t.ID, n)}
	tx.PutMeta(m)
	tx.Body(contracts.RejectionSummary(t))
	return true, nil
}
