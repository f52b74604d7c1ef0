package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
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
	ctx = cas.WithViews(ctx) // its views read the tip it just fetched or pushed
	if r.Task != "" {
		if err := contracts.ValidTaskID(r.Task); err != nil {
			return nil, err
		}
	}
	if err := s.checkSwitchFiles("reviews"); err != nil {
		return nil, err
	}
	if err := contracts.Permit(s.Agent, contracts.OpReview); err != nil {
		return nil, err
	}
	// A reviewer's checkout or a merge's test worktree that a killed
	// process left is removed here too.
	if err := s.recoverWhenFree(ctx); err != nil {
		return nil, err
	}
	res, err := s.write(ctx, r.Call, kindReview, reviewInput{Task: r.Task}, nil)
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
	// The reviewer reads its own checkout of the commit, never the coder's
	// worktree (see ReviewCheckout); a bare repository has none.
	out.Worktree = ""
	if s.Repo.MainWorkTree() != "" {
		// The write returned the commit under review: no second read.
		commit, err := reviewCommit(out.ID, out.ReviewCommit)
		if err == nil {
			// The reviewer reads what the ids name: an object of the
			// task's whose file was rewritten is refused first.
			base, _ := refstore.ParseHash(out.BaseCommit)
			if cerr := s.Repo.CheckObjects(ctx, base, commit); cerr != nil {
				return nil, objectsErr(out.ID, cerr)
			}
			if berr := s.reviewFacts(ctx, res.Commit, out.ID, commit); berr != nil {
				return nil, berr
			}
			out.Worktree, err = s.reviewCheckout(ctx, s.Agent, out.ID, commit)
		}
		if err != nil {
			return nil, fmt.Errorf("%s is yours to review, but its checkout failed: %w", out.ID, err)
		}
	}
	return &out, nil
}

// reviewInput is what a review claim records: the task asked for, or none
// for the best one awaiting review (a choice the state alone decides).
type reviewInput struct {
	Task string `json:"task,omitempty"`
}

var kindReview = def("review", contracts.OpReview, func(tx *cas.Tx, in *reviewInput) (any, error) {
	agent, target := tx.Actor, in.Task
	whole := tx.Rules >= contracts.RulesWhole
	if whole {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		if err := checkHalted(m.Control, "reviews"); err != nil {
			return nil, err
		}
	}
	if target == "" {
		best, err := bestReview(tx, agent)
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
	if err := checkReviewClaim(tx, t.Summary(), agent); err != nil {
		return nil, err
	}
	_, lease, err := tx.Lease()
	if err != nil {
		return nil, err
	}
	prev := t.ReviewingBy
	t.ReviewingBy, t.ReviewLeaseExpires = agent, lease
	ev := &contracts.HistoryEvent{Time: tx.NowString(), Event: "review_claimed", Agent: agent}
	if prev != "" && prev != agent {
		ev.Reason = "review lease of " + prev + " expired"
		// The reviewer displaced no longer reviews the task.
		if whole {
			if err := idleAgent(tx, prev, t.ID); err != nil {
				return nil, err
			}
		}
	}
	t.History = append(t.History, ev)
	tx.PutTask(t)
	if err := setAgent(tx, agent, contracts.RoleReviewer, "REVIEWING", t.ID, lease); err != nil {
		return nil, err
	}
	tx.Describe(fmt.Sprintf("review %s (%s)", t.ID, agent), t.ID)
	return ReviewResult{ID: t.ID, Author: t.AssignedTo, BaseCommit: t.BaseCommit,
		ReviewCommit: t.ReviewCommit, DiffRange: t.BaseCommit + ".." + t.ReviewCommit,
		ReviewLeaseExpires: lease, Description: t.Description, DoneWhen: t.DoneWhen}, nil
})

// checkReviewClaim decides whether agent may take the review of t.
func checkReviewClaim(tx *cas.Tx, t *contracts.TaskSummary, agent string) error {
	if err := reviewable(tx, t, agent); err != nil {
		return err
	}
	return reviewsNoOther(tx, t.ID, agent)
}

// reviewable is what checkReviewClaim decides from t alone.
func reviewable(tx *cas.Tx, t *contracts.TaskSummary, agent string) error {
	if t.Status != contracts.ReadyForReview {
		return contracts.Invalidf("task %s is %s, not READY_FOR_REVIEW", t.ID, t.Status)
	}
	if t.AssignedTo == agent {
		return contracts.Invalidf("%s wrote task %s and cannot review it", agent, t.ID)
	}
	if t.ReviewingBy == agent {
		return contracts.Invalidf("%s already reviews task %s", agent, t.ID)
	}
	if underReview(tx, t.ReviewingBy, t.ReviewLeaseExpires) {
		return contracts.Invalidf("task %s is under review by %s until %s%s", t.ID, t.ReviewingBy, t.ReviewLeaseExpires, tx.Held(t.ReviewLeaseExpires))
	}
	return nil
}

// reviewsNoOther refuses a review claim by an agent that holds the review
// of a task other than id.
func reviewsNoOther(tx *cas.Tx, id, agent string) error {
	idx, err := tx.InFlight() // a task awaiting review is in flight
	if err != nil {
		return err
	}
	for _, o := range idx {
		if o.ID != id && o.Status == contracts.ReadyForReview && o.ReviewingBy == agent {
			return contracts.Invalidf("%s already reviews task %s: give a verdict or release it first", agent, o.ID)
		}
	}
	return nil
}

// bestReview is the best task awaiting a review agent may take, "" when
// none does; an agent that holds another review is refused (the board
// index is scanned for that once, not once per task).
func bestReview(tx *cas.Tx, agent string) (string, error) {
	idx, err := tx.InFlight() // a task awaiting review is in flight
	if err != nil {
		return "", err
	}
	var best *contracts.TaskSummary
	for _, t := range idx {
		// Only tasks awaiting review are checked: on a board of thousands
		// of finished tasks, a refusal worded for each would cost more
		// than the review.
		if t.Status != contracts.ReadyForReview || reviewable(tx, t, agent) != nil {
			continue
		}
		if best == nil || contracts.Less(t, best) {
			best = t
		}
	}
	if best == nil {
		return "", nil
	}
	if err := reviewsNoOther(tx, best.ID, agent); err != nil {
		return "", err
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
	res, err := s.write(ctx, r.Call, kindVerdict, verdictInput{Task: id, Approve: r.Approve, Reason: reason, Feedback: feedback, Commit: commit}, nil)
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

// verdictInput is what a verdict records.
type verdictInput struct {
	Task    string `json:"task"`
	Approve bool   `json:"approve"`
	Reason  string `json:"reason,omitempty"`
	// Feedback is a rejection's rejection_feedback.
	Feedback string `json:"feedback,omitempty"`
	// Commit, when set, is the commit the reviewer said it reviewed.
	Commit string `json:"commit,omitempty"`
}

var kindVerdict = def("verdict", contracts.OpVerdict, func(tx *cas.Tx, in *verdictInput) (any, error) {
	agent, id, reason := tx.Actor, in.Task, in.Reason
	if !in.Approve && reason == "" {
		return nil, contracts.Invalidf("a rejection needs --reason")
	}
	if in.Approve && in.Feedback != "" {
		return nil, contracts.Invalidf("--feedback goes with a rejection: say what to change")
	}
	t, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	if t.Status != contracts.ReadyForReview {
		return nil, contracts.Invalidf("task %s is %s, not READY_FOR_REVIEW", id, t.Status)
	}
	if t.ReviewingBy != agent {
		holder := t.ReviewingBy
		if holder == "" {
			holder = "nobody"
		}
		return nil, contracts.Invalidf("%s does not hold the review of task %s (%s does): run git liza review %s first", agent, id, holder, id)
	}
	if t.AssignedTo == agent {
		return nil, contracts.Invalidf("%s wrote task %s and cannot judge it", agent, id)
	}
	if in.Commit != "" && in.Commit != t.ReviewCommit {
		return nil, contracts.Invalidf("commit %s is not the commit under review (%s)", short(in.Commit), short(t.ReviewCommit))
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	now := tx.NowString()
	t.ReviewingBy, t.ReviewLeaseExpires = "", ""
	paused := false
	if in.Approve {
		t.Status = contracts.Approved
		t.ApprovedBy = agent
		t.History = append(t.History, &contracts.HistoryEvent{Time: now, Event: "approved", Agent: agent,
			From: string(contracts.ReadyForReview), To: string(contracts.Approved), Commit: t.ReviewCommit, Reason: reason})
	} else {
		if err := reject(tx, t, m, reason, in.Feedback); err != nil {
			return nil, err
		}
		if tx.Rules >= contracts.RulesWhole {
			if paused, err = pauseOnRejections(tx, t, m); err != nil {
				return nil, err
			}
		}
	}
	tx.PutTask(t)
	if err := setAgent(tx, agent, contracts.RoleReviewer, "IDLE", "", ""); err != nil {
		return nil, err
	}
	verb := "approve"
	if !in.Approve {
		verb = "reject"
	}
	subject := fmt.Sprintf("%s %s (%s)", verb, id, agent)
	out := map[string]any{"id": id, "status": string(t.Status), "blocked_reason": t.BlockedReason}
	if paused {
		subject += "; team paused"
		out["paused"] = true
	}
	tx.Describe(subject, id)
	return out, nil
})

// reject records a rejection and the seed's stop rules: too many review
// cycles or the same reason twice is a review deadlock, too many
// iterations blocks the task; each counts the coder as failed on it. Under
// the whole contract the third rejection of the task in the sprint blocks
// it at once too (seed 000's circuit breaker: "Same task rejected 3x |
// BLOCKED, escalate"), as a review deadlock, and the rejection keeps its
// feedback.
func reject(tx *cas.Tx, t *contracts.Task, m *cas.Meta, reason, feedback string) error {
	cfg := m.Config
	whole := tx.Rules >= contracts.RulesWhole
	now := tx.NowString()
	repeated := false
	for _, ev := range t.History {
		if ev.Event == "rejected" && strings.TrimSpace(ev.Reason) == reason {
			repeated = true
		}
	}
	t.ReviewCyclesCurrent++
	t.ReviewCyclesTotal++
	t.RejectionReason = reason
	t.Status = contracts.Rejected
	ev := &contracts.HistoryEvent{Time: now, Event: "rejected", Agent: tx.Actor,
		From: string(contracts.ReadyForReview), To: string(contracts.Rejected), Commit: t.ReviewCommit, Reason: reason}
	if whole {
		t.RejectionFeedback = feedback
		if feedback != "" {
			ev.Extra = contracts.Extra{"feedback": feedback}
		}
	}
	t.History = append(t.History, ev)

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
	case whole:
		if n := contracts.SprintRejections(t, m.Sprint.Timeline.Started); n >= contracts.RejectionThreshold {
			blocked = fmt.Sprintf("Rejected %d times in this sprint: escalated to the planner", n)
			questions, deadlock = deadlockQuestions, true
		}
	}
	if blocked == "" {
		return nil
	}
	t.Status = contracts.Blocked
	t.BlockedReason, t.BlockedQuestions = blocked, questions
	// A block at the limits escalates the task to the planner, whose
	// questions are about the task ("Is the spec clear enough?", seed
	// 000): from rule set 4 its coder does not join failed_by for it. A
	// coder fails a task when it loses it to another coder after its
	// lease ran out (claim); two such are hypothesis exhaustion.
	if t.AssignedTo != "" && !t.FailedBy.Contains(t.AssignedTo) && tx.Rules < contracts.RulesMetered {
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
