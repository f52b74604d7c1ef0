package ops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// SubmitRequest submits a coder's work for review.
type SubmitRequest struct {
	Call
	Task string
	// Rev is the commit to submit; empty for the tip of task/ID.
	Rev string
}

// SubmitResult is what a submission recorded.
type SubmitResult struct {
	ID           string
	ReviewCommit string
	BaseCommit   string
	// Conflict is set when the submitted commit does not merge onto the
	// integration tip and the tasks approved ahead of it: the task went
	// back to its coder as INTEGRATION_FAILED at once, and this is why.
	Conflict string
	Written
}

// Submit checks the submission against git (on the task branch, descended
// from the base, clean worktree, within the task's paths and size limits),
// then records READY_FOR_REVIEW with the full commit id.
func (s *Service) Submit(ctx context.Context, r SubmitRequest) (*SubmitResult, error) {
	ctx = cas.WithViews(ctx) // its views read the tip it just fetched or pushed
	id := r.Task
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	if err := contracts.Permit(s.Agent, contracts.OpSubmit); err != nil {
		return nil, err
	}
	var t *contracts.Task
	var integ refstore.Hash
	if err := s.view(ctx, func(tx *cas.Tx) error {
		var err error
		t, err = tx.MustTask(id)
		if err != nil {
			return err
		}
		if err := checkSubmitter(t, s.Agent); err != nil {
			return err
		}
		// Where the board records the integration branch: the merge base
		// check below (a tip that does not read leaves it to the merge).
		integ, _, _ = s.expectedTip(tx)
		if s.rules == 0 || s.rules >= contracts.RulesCheckpointed {
			return contracts.CheckCheckpointed(t)
		}
		return nil
	}); err != nil {
		// The same request again, after a submission that landed (its
		// process was killed before it said so): the first result.
		if t != nil && r.RequestID != "" && t.ReviewCommit != "" {
			in := submitInput{Task: id, ReviewCommit: t.ReviewCommit, Base: t.BaseCommit}
			if res, done, rerr := s.requested(ctx, r.Call, kindSubmit, in); rerr == nil && done {
				out := &SubmitResult{ID: id, ReviewCommit: t.ReviewCommit, BaseCommit: t.BaseCommit, Written: written(res)}
				// Sent back already, the first time: it says so again.
				// Killed before its merge check: the check runs now.
				if reason := sentBack(t); reason != "" {
					out.Conflict = reason
				} else if reason, bounced, err := s.screen(ctx, id, contracts.CheckedSubmit); err == nil {
					out.Conflict = reason
					if bounced != nil {
						out.Written = written(bounced)
					}
				}
				return out, nil
			}
		}
		return nil, err
	}
	commit, err := s.submission(ctx, t, r.Rev, integ)
	if err != nil {
		return nil, err
	}
	if err := s.publishBranch(ctx, id); err != nil {
		return nil, err
	}
	res, err := s.write(ctx, r.Call, kindSubmit, submitInput{Task: id, ReviewCommit: commit.String(), Base: t.BaseCommit}, nil)
	if err != nil {
		return nil, err
	}
	out := &SubmitResult{ID: id, ReviewCommit: commit.String(), BaseCommit: t.BaseCommit, Written: written(res)}
	proc.CrashPoint("submit:recorded")
	// The submission is recorded first, then checked: the seeds' task
	// moves READY_FOR_REVIEW before anything else, and a process killed
	// in between leaves a task the reviewer's check sends back instead.
	reason, bounced, err := s.screen(ctx, id, contracts.CheckedSubmit)
	if err != nil {
		return nil, fmt.Errorf("%s was submitted, but checking that it merges failed: %w", id, err)
	}
	// Sent back by this check, or by a reviewer's that came first.
	out.Conflict = reason
	if bounced != nil {
		out.Written = written(bounced)
	}
	return out, nil
}

// submitInput is what a submission records: the commit under review, and
// the base the coder checked it against.
type submitInput struct {
	Task         string `json:"task"`
	ReviewCommit string `json:"review_commit"`
	Base         string `json:"base"`
}

var kindSubmit = def("submit", contracts.OpSubmit, func(tx *cas.Tx, in *submitInput) (any, error) {
	agent, id := tx.Actor, in.Task
	if _, ok := refstore.ParseHash(in.ReviewCommit); !ok {
		return nil, contracts.Invalidf("a submission needs the full id of the commit under review")
	}
	cur, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	if err := checkSubmitter(cur, agent); err != nil {
		return nil, err
	}
	if tx.Rules >= contracts.RulesCheckpointed {
		if err := contracts.CheckCheckpointed(cur); err != nil {
			return nil, err
		}
	}
	if cur.BaseCommit != in.Base {
		return nil, contracts.Invalidf("task %s changed base while submitting; submit again", id)
	}
	if err := contracts.CheckTransition(id, cur.Status, contracts.ReadyForReview); err != nil {
		return nil, err
	}
	cur.Status = contracts.ReadyForReview
	cur.ReviewCommit = in.ReviewCommit
	cur.ReviewingBy, cur.ReviewLeaseExpires = "", ""
	cur.HandoffPending = false
	cur.History = append(cur.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "submitted", Agent: agent,
		From: string(contracts.Claimed), To: string(contracts.ReadyForReview), Commit: cur.ReviewCommit})
	tx.PutTask(cur)
	if err := setAgent(tx, agent, contracts.RoleCoder, "WAITING", id, cur.LeaseExpires); err != nil {
		return nil, err
	}
	tx.Describe(fmt.Sprintf("submit %s (%s)", id, agent), id)
	return map[string]string{"id": id, "review_commit": cur.ReviewCommit}, nil
})

func init() {
	withFacts(kindSubmit, submitFacts)
	withPrepare(kindSubmit, func(ctx context.Context, s *Service, in *submitInput) error { return s.publishBranch(ctx, in.Task) })
}

// submitFacts checks the submitted commit where the submission is verified:
// it descends from the task's base, and its change stays within the task's
// paths and size limits. A verifier that does not have the commit (a clone
// that has not fetched the task branch) leaves this to the one that does.
func submitFacts(ctx context.Context, v *Verifier, parent *cas.Tx, in *submitInput) error {
	base, _ := refstore.ParseHash(in.Base)
	commit, _ := refstore.ParseHash(in.ReviewCommit)
	if !v.has(base, commit) {
		return v.missing("the submitted commit " + short(in.ReviewCommit))
	}
	if commit == base {
		return fmt.Errorf("the submitted commit is the base commit")
	}
	if ok, err := v.Repo.IsAncestor(ctx, base.String(), commit.String()); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("the submitted commit %s does not descend from the base %s", short(in.ReviewCommit), short(in.Base))
	}
	t, err := parent.MustTask(in.Task)
	if err != nil {
		return err
	}
	changes, err := v.Repo.DiffFiles(ctx, base, commit)
	if err != nil {
		return err
	}
	return checkScope(t, changes, parent.Rules)
}

// publishBranch pushes task/ID in remote mode, so that a reviewer on
// another machine can fetch the commit it reviews. Work on a task branch
// only moves forward: a remote branch at a commit a submission of the task
// recorded must be an ancestor of ours. Only a submission puts the branch
// on the remote, so a tip no submission recorded is nobody's work (an
// agent with push access planted it, hoping the coder merges it): it is
// replaced, and Notice says so.
func (s *Service) publishBranch(ctx context.Context, id string) error {
	return s.publishBranchTo(ctx, s.remote(), id)
}

// publishBranchTo is publishBranch to remote r ("": nowhere): sync
// publishes the branches of the submits it pushes, in remote mode or not.
func (s *Service) publishBranchTo(ctx context.Context, r, id string) error {
	if r == "" {
		return nil
	}
	ref := worktree.BranchRef(id)
	local, ok, err := s.Repo.ReadRef(ref)
	if err != nil || !ok {
		return err
	}
	got, err := s.Repo.Fetch(ctx, r, ref)
	if err != nil {
		return err
	}
	remote := got[ref]
	if remote == local {
		return nil
	}
	if !remote.IsZero() {
		if ff, err := s.Repo.IsAncestor(ctx, remote.String(), local.String()); err != nil {
			return err
		} else if !ff {
			recorded, err := s.submitted(r, id)
			if err != nil {
				return err
			}
			if recorded[remote.String()] {
				return contracts.Invalidf("%s on %s has commits that %s lacks: merge them first", worktree.Branch(id), r, worktree.Branch(id))
			}
			s.notice(fmt.Sprintf("%s on %s was at %s, which no submission of %s recorded: replaced", worktree.Branch(id), r, short(remote.String()), id))
		}
	}
	err = s.Repo.Push(ctx, r, refstore.RefUpdate{Name: ref, Old: remote, New: local})
	if errors.Is(err, refstore.ErrStale) {
		return contracts.Errorf(contracts.CodeContention, "%s moved on %s while submitting; submit again", worktree.Branch(id), r)
	}
	return err
}

// submitted is every commit a submission of task id recorded, on this
// clone's board and on remote r's as last fetched.
func (s *Service) submitted(r, id string) (map[string]bool, error) {
	recorded := map[string]bool{}
	for _, ref := range []string{refstore.StateRef, refstore.TrackingRef(r, refstore.StateRef)} {
		tip, ok, err := s.Repo.ReadRef(ref)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		snap, err := cas.ReadSnapshot(s.Repo, tip)
		if err != nil {
			return nil, err
		}
		t, err := snap.Task(id)
		if err != nil {
			return nil, err
		}
		if t != nil {
			these, _ := submissions(t)
			maps.Copy(recorded, these)
		}
	}
	return recorded, nil
}

// submission resolves and checks the commit a coder submits; integ is the
// integration tip the board records (zero where it records none).
func (s *Service) submission(ctx context.Context, t *contracts.Task, rev string, integ refstore.Hash) (refstore.Hash, error) {
	branchTip, hasBranch, err := s.Repo.ReadRef(worktree.BranchRef(t.ID))
	if err != nil {
		return refstore.Hash{}, err
	}
	var commit refstore.Hash
	if rev == "" {
		if !hasBranch {
			return commit, contracts.Invalidf("there is no branch %s: name the commit to submit", worktree.Branch(t.ID))
		}
		commit = branchTip
	} else if commit, err = s.Repo.ResolveCommit(ctx, rev); err != nil {
		return commit, err
	}
	if hasBranch {
		on, err := s.Repo.IsAncestor(ctx, commit.String(), branchTip.String())
		if err != nil {
			return commit, err
		}
		if !on {
			return commit, contracts.Invalidf("commit %s is not on %s", short(commit.String()), worktree.Branch(t.ID))
		}
	}
	base, ok := refstore.ParseHash(t.BaseCommit)
	if !ok {
		return commit, contracts.Invalidf("task %s has no base commit", t.ID)
	}
	if commit == base {
		return commit, contracts.Invalidf("commit %s is the base commit: there is nothing to review", short(commit.String()))
	}
	if desc, err := s.Repo.IsAncestor(ctx, base.String(), commit.String()); err != nil {
		return commit, err
	} else if !desc {
		return commit, contracts.Invalidf("commit %s does not descend from the base commit %s: merge the integration branch into %s first", short(commit.String()), short(t.BaseCommit), worktree.Branch(t.ID))
	}
	if dir := s.taskCheckout(t); dir != "" {
		dirty, err := worktree.Dirty(ctx, s.Repo, dir)
		if err != nil {
			return commit, err
		}
		if dirty {
			return commit, contracts.Invalidf("worktree %s has uncommitted changes: commit or remove them before submitting", t.Worktree)
		}
	}
	changes, err := s.Repo.DiffFiles(ctx, base, commit)
	if err != nil {
		return commit, err
	}
	if err := checkScope(t, changes, contracts.Rules); err != nil {
		return commit, err
	}
	// The integration tip may not be here (a clone that has not fetched
	// it): the review and the merge check again where it is.
	if !integ.IsZero() && s.Repo.HasObject(integ) {
		if on, err := s.Repo.IsAncestor(ctx, base.String(), integ.String()); err == nil && on {
			return commit, s.checkMergeBase(ctx, t.ID, base, integ, commit)
		}
	}
	return commit, nil
}

// checkScope enforces the task's owned paths and its scope limit on a
// change: under the whole contract seed 002's (at most 2 files or at most
// 150 lines, unless the planner set others; a change meeting either bound
// passes), under the first rules each bound the task set.
func checkScope(t *contracts.Task, changes []refstore.FileChange, rules int) error {
	loc := 0
	for _, c := range changes {
		if rules >= contracts.RulesContained {
			if err := contracts.CheckChangedPath(c.Path); err != nil {
				return err
			}
		}
		if len(t.Paths) > 0 {
			owned := false
			for _, p := range t.Paths {
				if contracts.PathMatches(p, c.Path) {
					owned = true
					break
				}
			}
			if !owned {
				return contracts.Invalidf("the change touches %s, outside task %s's paths (%s)", c.Path, t.ID, strings.Join(t.Paths, ", "))
			}
		}
		if c.Added > 0 {
			loc += c.Added
		}
		if c.Removed > 0 {
			loc += c.Removed
		}
	}
	if rules >= contracts.RulesWhole {
		return contracts.CheckScopeSize(t, len(changes), loc)
	}
	if t.MaxFiles > 0 && len(changes) > t.MaxFiles {
		return contracts.Invalidf("the change touches %d files; task %s allows %d", len(changes), t.ID, t.MaxFiles)
	}
	if t.MaxLOC > 0 && loc > t.MaxLOC {
		return contracts.Invalidf("the change adds and removes %d lines; task %s allows %d", loc, t.ID, t.MaxLOC)
	}
	return nil
}

// taskCheckout is the absolute path of a task's recorded worktree when it
// exists on this machine.
func (s *Service) taskCheckout(t *contracts.Task) string {
	if t.Worktree == "" {
		return ""
	}
	dir := t.Worktree
	if !filepath.IsAbs(dir) {
		root := s.Repo.MainWorkTree()
		if root == "" {
			return ""
		}
		dir = filepath.Join(root, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}
