package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// taskBranch finds task t's branch here, or in remote mode on the remote,
// where another machine's coder published it; a branch found only on the
// remote is created here so the worktree can check it out. Only a
// submission publishes the branch, so the remote's is taken only at a
// commit a submission of t recorded (remoteWork).
func (s *Service) taskBranch(ctx context.Context, t *contracts.Task) (refstore.Hash, bool, error) {
	tip, ok, err := s.Repo.ReadRef(worktree.BranchRef(t.ID))
	if err != nil || ok || s.remote() == "" {
		return tip, ok, err
	}
	if tip, ok, err = s.branchTip(ctx, worktree.BranchRef(t.ID)); err != nil || !ok {
		return tip, ok, err
	}
	if tip, ok, err = s.remoteWork(ctx, t, tip); err != nil || !ok {
		return tip, ok, err
	}
	err = s.Repo.UpdateRefs(ctx, "liza: "+worktree.Branch(t.ID)+" from "+s.remote(), refstore.RefUpdate{Name: worktree.BranchRef(t.ID), New: tip})
	return tip, err == nil, err
}

// remoteWork is where a claim starts task t's work from the remote's
// branch at tip: tip itself when a submission of t recorded it; the last
// submission when tip is past it (an agent with push access planted
// commits on top, which the guard lets through while the task is being
// worked on); else nothing: a branch no submission put there is nobody's
// work. Notice says what was not taken.
func (s *Service) remoteWork(ctx context.Context, t *contracts.Task, tip refstore.Hash) (refstore.Hash, bool, error) {
	recorded, last := submissions(t)
	if recorded[tip.String()] {
		return tip, true, nil
	}
	at := fmt.Sprintf("%s on %s is at %s", worktree.Branch(t.ID), s.remote(), short(tip.String()))
	if last.IsZero() {
		s.notice(fmt.Sprintf("%s, which no submission of %s recorded: not taken", at, t.ID))
		return refstore.Hash{}, false, nil
	}
	past, err := s.Repo.IsAncestor(ctx, last.String(), tip.String())
	if err != nil {
		return refstore.Hash{}, false, err
	}
	if past {
		s.notice(fmt.Sprintf("%s, past the last submission of %s (%s): starting from it", at, t.ID, short(last.String())))
		return last, true, nil
	}
	// A remote that rewrote the branch (an unguarded one): the last
	// submission, if this clone has it.
	lost := fmt.Sprintf("%s, which does not hold the last submission of %s (%s)", at, t.ID, short(last.String()))
	if !s.Repo.HasObject(last) {
		s.notice(lost + ": not taken")
		return refstore.Hash{}, false, nil
	}
	s.notice(lost + ": starting from it")
	return last, true, nil
}

// submissions is every commit a submission of t recorded, and the last
// one (zero when t was never submitted).
func submissions(t *contracts.Task) (map[string]bool, refstore.Hash) {
	recorded := map[string]bool{}
	var last refstore.Hash
	for _, ev := range t.History {
		if ev != nil && ev.Event == "submitted" && ev.Commit != "" {
			recorded[ev.Commit] = true
			if h, ok := refstore.ParseHash(ev.Commit); ok {
				last = h
			}
		}
	}
	if h, ok := refstore.ParseHash(t.ReviewCommit); ok {
		recorded[t.ReviewCommit] = true
		last = h
	}
	return recorded, last
}

// branchBase is where a task's branch, at tip, starts: the base the task
// records, unless the branch holds no work of its own (its tip is in the
// integration branch, at integ): then the tip itself. A branch with no work
// is not always the one the task records a base for: a claim without a
// worktree records a base and makes no branch, and a branch left by a claim
// killed before it committed, made from a later integration tip, is taken
// up by the next claim. Taking the recorded base there would count the
// merges between the two as the task's own change.
func (s *Service) branchBase(ctx context.Context, recorded, tip, integ refstore.Hash) (refstore.Hash, error) {
	if empty, err := s.Repo.IsAncestor(ctx, tip.String(), integ.String()); err != nil || !empty {
		return recorded, err
	}
	return tip, nil
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
