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
	if err := contracts.Permit(s.Agent, contracts.OpReview); err != nil {
		return nil, err
	}
	// A reviewer's checkout or a merge's test worktree that a killed
	// process left is removed here too.
	if _, err := s.recoverWorktrees(ctx); err != nil {
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
	return &out, nil
}

// reviewInput is what a review claim records: the task asked for, or none
// for the best one awaiting review (a choice the state alone decides).
type reviewInput struct {
	Task string `json:"task,omitempty"`
}

var kindReview = def("review", contracts.OpReview, func(tx *cas.Tx, in *reviewInput) (any, error) {
	agent, target := tx.Actor, in.Task
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
	}
	t.History = append(t.History, ev)
	tx.PutTask(t)
	if err := setAgent(tx, agent, contracts.RoleReviewer, "REVIEWING", t.ID, lease); err != nil {
		return nil, err
	}
	tx.Describe(fmt.Sprintf("review %s (%s)", t.ID, agent), t.ID)
	return ReviewResult{ID: t.ID, Author: t.AssignedTo, Worktree: t.Worktree, BaseCommit: t.BaseCommit,
		ReviewCommit: t.ReviewCommit, DiffRange: t.BaseCommit + ".." + t.ReviewCommit,
		ReviewLeaseExpires: lease, Description: t.Description, DoneWhen: t.DoneWhen}, nil
})

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
	Written       `json:"-"`
}

// The seed's questions when a task runs out of iterations or review cycles.
var (
	maxIterationQuestions = contracts.StringList{"Is the spec clear enough?", "Should task be decomposed?"}
	deadlockQuestions     = contracts.StringList{"Is the reviewer's objection within the task's scope?", "Should the task be rescoped or split?"}
)

// Verdict approves or rejects the review the agent holds.
func (s *Service) Verdict(ctx context.Context, r VerdictRequest) (*VerdictResult, error) {
	reason := strings.TrimSpace(r.Reason)
	if !r.Approve && reason == "" {
		return nil, contracts.Invalidf("a rejection needs --reason")
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
	res, err := s.write(ctx, r.Call, kindVerdict, verdictInput{Task: id, Approve: r.Approve, Reason: reason, Commit: commit}, nil)
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
	// Commit, when set, is the commit the reviewer said it reviewed.
	Commit string `json:"commit,omitempty"`
}

var kindVerdict = def("verdict", contracts.OpVerdict, func(tx *cas.Tx, in *verdictInput) (any, error) {
	agent, id, reason := tx.Actor, in.Task, in.Reason
	if !in.Approve && reason == "" {
		return nil, contracts.Invalidf("a rejection needs --reason")
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
	if in.Approve {
		t.Status = contracts.Approved
		t.ApprovedBy = agent
		t.History = append(t.History, &contracts.HistoryEvent{Time: now, Event: "approved", Agent: agent,
			From: string(contracts.ReadyForReview), To: string(contracts.Approved), Commit: t.ReviewCommit, Reason: reason})
	} else if err := reject(tx, t, m.Config, reason); err != nil {
		return nil, err
	}
	tx.PutTask(t)
	if err := setAgent(tx, agent, contracts.RoleReviewer, "IDLE", "", ""); err != nil {
		return nil, err
	}
	verb := "approve"
	if !in.Approve {
		verb = "reject"
	}
	tx.Describe(fmt.Sprintf("%s %s (%s)", verb, id, agent), id)
	return map[string]string{"id": id, "status": string(t.Status), "blocked_reason": t.BlockedReason}, nil
})

// reject records a rejection and the seed's stop rules: too many review
// cycles or the same reason twice is a review deadlock, too many
// iterations blocks the task; both count the coder as failed on it.
func reject(tx *cas.Tx, t *contracts.Task, cfg contracts.Config, reason string) error {
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
	t.History = append(t.History, &contracts.HistoryEvent{Time: now, Event: "rejected", Agent: tx.Actor,
		From: string(contracts.ReadyForReview), To: string(contracts.Rejected), Commit: t.ReviewCommit, Reason: reason})

	var blocked string
	var questions contracts.StringList
	switch {
	case t.Iteration >= cfg.MaxCoderIterations:
		blocked = fmt.Sprintf("Max iterations (%d) reached without approval", cfg.MaxCoderIterations)
		questions = maxIterationQuestions
	case t.ReviewCyclesCurrent >= cfg.MaxReviewCycles:
		blocked = fmt.Sprintf("Review deadlock: %d review cycles without approval", t.ReviewCyclesCurrent)
		questions = deadlockQuestions
	case repeated:
		blocked = "Review deadlock: the same rejection reason was given twice"
		questions = deadlockQuestions
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
	if strings.HasPrefix(blocked, "Review deadlock") {
		if err := logSystemAnomaly(tx, "review_deadlock", t.ID, contracts.Extra{"review_cycles": t.ReviewCyclesCurrent, "reason": blocked}); err != nil {
			return err
		}
	}
	if len(t.FailedBy) >= 2 {
		return logSystemAnomaly(tx, "hypothesis_exhaustion", t.ID, contracts.Extra{"failed_by": strings.Join(t.FailedBy, ",")})
	}
	return nil
}
