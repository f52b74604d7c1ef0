package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
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
	Written
}

// Submit checks the submission against git (on the task branch, descended
// from the base, clean worktree, within the task's paths and size limits),
// then records READY_FOR_REVIEW with the full commit id.
func (s *Service) Submit(ctx context.Context, r SubmitRequest) (*SubmitResult, error) {
	id := r.Task
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	if err := contracts.Permit(s.Agent, contracts.OpSubmit); err != nil {
		return nil, err
	}
	var t *contracts.Task
	if err := s.view(func(tx *cas.Tx) error {
		var err error
		t, err = tx.MustTask(id)
		if err != nil {
			return err
		}
		return checkSubmitter(t, s.Agent)
	}); err != nil {
		return nil, err
	}
	commit, err := s.submission(ctx, t, r.Rev)
	if err != nil {
		return nil, err
	}
	if err := s.publishBranch(ctx, id); err != nil {
		return nil, err
	}
	res, err := s.update(ctx, r.Call, cas.Op{Name: contracts.OpSubmit, Apply: func(tx *cas.Tx) (any, error) {
		cur, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if err := checkSubmitter(cur, s.Agent); err != nil {
			return nil, err
		}
		if cur.BaseCommit != t.BaseCommit {
			return nil, contracts.Invalidf("task %s changed base while submitting; submit again", id)
		}
		if err := contracts.CheckTransition(id, cur.Status, contracts.ReadyForReview); err != nil {
			return nil, err
		}
		cur.Status = contracts.ReadyForReview
		cur.ReviewCommit = commit.String()
		cur.ReviewingBy, cur.ReviewLeaseExpires = "", ""
		cur.HandoffPending = false
		cur.History = append(cur.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "submitted", Agent: s.Agent,
			From: string(contracts.Claimed), To: string(contracts.ReadyForReview), Commit: cur.ReviewCommit})
		tx.PutTask(cur)
		if err := setAgent(tx, s.Agent, contracts.RoleCoder, "WAITING", id, cur.LeaseExpires); err != nil {
			return nil, err
		}
		tx.Describe(fmt.Sprintf("submit %s (%s)", id, s.Agent), id)
		return map[string]string{"id": id, "review_commit": cur.ReviewCommit}, nil
	}})
	if err != nil {
		return nil, err
	}
	return &SubmitResult{ID: id, ReviewCommit: commit.String(), BaseCommit: t.BaseCommit, Written: written(res)}, nil
}

// publishBranch pushes task/ID in remote mode, so that a reviewer on
// another machine can fetch the commit it reviews. The remote's branch must
// be an ancestor of ours: work on a task branch only moves forward.
func (s *Service) publishBranch(ctx context.Context, id string) error {
	r := s.remote()
	if r == "" {
		return nil
	}
	ref := worktree.BranchRef(id)
	local, ok, err := s.Repo.ReadRef(ref)
	if err != nil || !ok {
		return err
	}
	remote, _, err := s.branchTip(ctx, ref)
	if err != nil {
		return err
	}
	if remote == local {
		return nil
	}
	if !remote.IsZero() {
		if ff, err := s.Repo.IsAncestor(ctx, remote.String(), local.String()); err != nil {
			return err
		} else if !ff {
			return contracts.Invalidf("%s on %s has commits that %s lacks: merge them first", worktree.Branch(id), r, worktree.Branch(id))
		}
	}
	err = s.Repo.Push(ctx, r, refstore.RefUpdate{Name: ref, Old: remote, New: local})
	if errors.Is(err, refstore.ErrStale) {
		return contracts.Errorf(contracts.CodeContention, "%s moved on %s while submitting; submit again", worktree.Branch(id), r)
	}
	return err
}

// submission resolves and checks the commit a coder submits.
func (s *Service) submission(ctx context.Context, t *contracts.Task, rev string) (refstore.Hash, error) {
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
		dirty, err := worktree.Dirty(ctx, dir)
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
	return commit, checkScope(t, changes)
}

// checkScope enforces the task's owned paths and its scope limit (seed
// 002: at most 2 files or at most 150 lines, unless the planner set
// others) on a change.
func checkScope(t *contracts.Task, changes []refstore.FileChange) error {
	loc := 0
	for _, c := range changes {
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
	return contracts.CheckScopeSize(t, len(changes), loc)
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
