package ops

import (
	"context"
	"errors"
	"time"

	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// taskBranch finds task/ID here, or in remote mode on the remote, where
// another machine's coder published it; a branch found only on the remote
// is created here so the worktree can check it out.
func (s *Service) taskBranch(ctx context.Context, id string) (refstore.Hash, bool, error) {
	tip, ok, err := s.Repo.ReadRef(worktree.BranchRef(id))
	if err != nil || ok || s.remote() == "" {
		return tip, ok, err
	}
	if tip, ok, err = s.branchTip(ctx, worktree.BranchRef(id)); err != nil || !ok {
		return tip, ok, err
	}
	err = s.Repo.UpdateRefs(ctx, "liza: "+worktree.Branch(id)+" from "+s.remote(), refstore.RefUpdate{Name: worktree.BranchRef(id), New: tip})
	return tip, err == nil, err
}

// madeWorktree is a worktree a claim made, which it removes if the claim
// does not commit, with the branch when the claim made that too.
type madeWorktree struct {
	branch bool
	setup  *worktree.SetupResult // what its setup step did, if one ran
}

// prepareWorktree is phase two: the worktree exists when it returns, and
// made is what this call made (nil when it took on an existing worktree).
func (s *Service) prepareWorktree(ctx context.Context, plan *claimPlan) (*madeWorktree, error) {
	info, err := worktree.Inspect(ctx, s.Repo, plan.id)
	if err != nil {
		return nil, err
	}
	if info.Exists && info.Locked == "" {
		// Work kept from an earlier claim of this task: the claim takes it on.
		return nil, nil
	}
	branch, err := worktree.Create(ctx, s.Repo, plan.id, plan.base, s.Agent, s.notice)
	// A claim killed a moment ago may have left its git still checking out:
	// once that is done, recovery takes its worktree away (or unlocks it).
	for began := time.Now(); errors.Is(err, worktree.ErrSettling) && time.Since(began) < 5*time.Second; {
		time.Sleep(50 * time.Millisecond)
		if _, err = s.recoverWorktrees(ctx); err != nil {
			return nil, err
		}
		if info, ierr := worktree.Inspect(ctx, s.Repo, plan.id); ierr == nil && info.Exists && info.Locked == "" {
			return nil, nil
		}
		branch, err = worktree.Create(ctx, s.Repo, plan.id, plan.base, s.Agent, s.notice)
	}
	if errors.Is(err, worktree.ErrSettling) {
		err = worktree.ErrBusy
	}
	if err != nil {
		return nil, err
	}
	made := &madeWorktree{branch: branch}
	prepared, err := s.prepareNew(ctx, worktree.KindTask, plan.id, plan.integ, s.Agent, s.notice)
	if prepared != nil {
		made.setup = prepared.Setup
	}
	if err != nil {
		// A failed setup takes the worktree (and a branch the claim made)
		// away again: the claim does not happen, and the task, still
		// UNCLAIMED, is charged nothing (worktree.SetupFailed).
		if derr := worktree.Undo(context.WithoutCancel(ctx), s.Repo, plan.id, branch); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	return made, nil
}
