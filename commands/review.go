package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

func (e *Env) reviewCmd() *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "claim the review of task ID, or of the best task awaiting review, and print its diff range",
		ArgsUsage: "[ID]",
		Action: e.action(0, 1, "review [ID]", func(ctx context.Context, s *session, a []string) error {
			id := ""
			if len(a) == 1 {
				if id = a[0]; contracts.ValidTaskID(id) != nil {
					return contracts.ValidTaskID(id)
				}
			}
			return s.review(ctx, id)
		}),
	}
}

// reviewResult is what a reviewer needs to start.
type reviewResult struct {
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

func (s *session) review(ctx context.Context, id string) error {
	res, err := s.update(ctx, cas.Op{Name: contracts.OpReview, Apply: func(tx *cas.Tx) (any, error) {
		target := id
		if target == "" {
			best, err := bestReview(tx, s.agent)
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
		if err := checkReviewClaim(tx, t.Summary(), s.agent); err != nil {
			return nil, err
		}
		_, lease, err := tx.Lease()
		if err != nil {
			return nil, err
		}
		prev := t.ReviewingBy
		t.ReviewingBy, t.ReviewLeaseExpires = s.agent, lease
		ev := &contracts.HistoryEvent{Time: tx.NowString(), Event: "review_claimed", Agent: s.agent}
		if prev != "" && prev != s.agent {
			ev.Reason = "review lease of " + prev + " expired"
		}
		t.History = append(t.History, ev)
		tx.PutTask(t)
		if err := setAgent(tx, s.agent, contracts.RoleReviewer, "REVIEWING", t.ID, lease); err != nil {
			return nil, err
		}
		tx.Describe(fmt.Sprintf("review %s (%s)", t.ID, s.agent), t.ID)
		return reviewResult{ID: t.ID, Author: t.AssignedTo, Worktree: t.Worktree, BaseCommit: t.BaseCommit,
			ReviewCommit: t.ReviewCommit, DiffRange: t.BaseCommit + ".." + t.ReviewCommit,
			ReviewLeaseExpires: lease, Description: t.Description, DoneWhen: t.DoneWhen}, nil
	}})
	if err != nil {
		return err
	}
	out, err := decodeResult[reviewResult](res)
	if err != nil {
		return err
	}
	out.Commit = res.Commit.String()
	if s.remote() != "" {
		// Bring the reviewed commits here; the reviewer reads them from
		// refs/liza/remotes/<remote>/heads/task/<id>.
		if _, _, err := s.branchTip(ctx, worktree.BranchRef(out.ID)); err != nil {
			return err
		}
	}
	if s.json {
		return s.printJSON(out)
	}
	fmt.Fprintf(s.Stdout, "%s review claimed by %s until %s\n", out.ID, s.agent, out.ReviewLeaseExpires)
	fmt.Fprintf(s.Stdout, "author:    %s\nworktree:  %s\nreview:    git diff %s\n", out.Author, out.Worktree, out.DiffRange)
	return nil
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

func (e *Env) verdictCmd() *cli.Command {
	return &cli.Command{
		Name:      "verdict",
		Usage:     "approve or reject the review you hold",
		ArgsUsage: "ID approve|reject",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why (required to reject): blockers with file:line, why they matter, a suggestion"},
			&cli.StringFlag{Name: "commit", Usage: "the commit you reviewed; must equal the task's review_commit"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 2, 2, "verdict ID approve|reject [--reason TEXT] [--commit SHA]")
			if err != nil {
				return err
			}
			if a[1] != "approve" && a[1] != "reject" {
				return contracts.Invalidf("verdict is approve or reject, not %q", a[1])
			}
			reason := strings.TrimSpace(cmd.String("reason"))
			if a[1] == "reject" && reason == "" {
				return contracts.Invalidf("a rejection needs --reason")
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			if err := contracts.ValidTaskID(a[0]); err != nil {
				return err
			}
			commit := cmd.String("commit")
			if commit != "" {
				h, err := s.repo.ResolveCommit(ctx, commit)
				if err != nil {
					return err
				}
				commit = h.String()
			}
			return s.verdict(ctx, a[0], a[1] == "approve", reason, commit)
		},
	}
}

// The seed's questions when a task runs out of iterations or review cycles.
var (
	maxIterationQuestions = contracts.StringList{"Is the spec clear enough?", "Should task be decomposed?"}
	deadlockQuestions     = contracts.StringList{"Is the reviewer's objection within the task's scope?", "Should the task be rescoped or split?"}
)

func (s *session) verdict(ctx context.Context, id string, approve bool, reason, commit string) error {
	res, err := s.update(ctx, cas.Op{Name: contracts.OpVerdict, Apply: func(tx *cas.Tx) (any, error) {
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if t.Status != contracts.ReadyForReview {
			return nil, contracts.Invalidf("task %s is %s, not READY_FOR_REVIEW", id, t.Status)
		}
		if t.ReviewingBy != s.agent {
			holder := t.ReviewingBy
			if holder == "" {
				holder = "nobody"
			}
			return nil, contracts.Invalidf("%s does not hold the review of task %s (%s does): run git liza review %s first", s.agent, id, holder, id)
		}
		if t.AssignedTo == s.agent {
			return nil, contracts.Invalidf("%s wrote task %s and cannot judge it", s.agent, id)
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
		if approve {
			t.Status = contracts.Approved
			t.ApprovedBy = s.agent
			t.History = append(t.History, &contracts.HistoryEvent{Time: now, Event: "approved", Agent: s.agent,
				From: string(contracts.ReadyForReview), To: string(contracts.Approved), Commit: t.ReviewCommit, Reason: reason})
		} else if err := reject(tx, t, m.Config, reason); err != nil {
			return nil, err
		}
		tx.PutTask(t)
		if err := setAgent(tx, s.agent, contracts.RoleReviewer, "IDLE", "", ""); err != nil {
			return nil, err
		}
		verb := "approve"
		if !approve {
			verb = "reject"
		}
		tx.Describe(fmt.Sprintf("%s %s (%s)", verb, id, s.agent), id)
		return map[string]string{"id": id, "status": string(t.Status), "blocked_reason": t.BlockedReason}, nil
	}})
	if err != nil {
		return err
	}
	out, err := decodeResult[map[string]string](res)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(map[string]any{"id": id, "status": out["status"], "blocked_reason": out["blocked_reason"], "commit": res.Commit.String(), "replayed": res.Replayed})
	}
	fmt.Fprintf(s.Stdout, "%s %s\n", id, out["status"])
	if out["blocked_reason"] != "" {
		fmt.Fprintf(s.Stderr, "git-liza: task %s blocked: %s\n", id, out["blocked_reason"])
	}
	return nil
}

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
