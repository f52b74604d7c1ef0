package agent

import (
	"context"
	"fmt"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// idle handles a session that ended without moving its task: the next
// session starts at once, from the worktree (and the handoff, if one is
// pending), until IdleLimit such sessions in a row give the task up. It is
// no crash: the agent ran and ended as it chose, or was stopped by the
// timebox.
func (s *sup) idle(ctx context.Context, w *work, ses *session, why string) error {
	if w.task == nil {
		return nil
	}
	if s.idles == nil {
		s.idles, s.unfinished = map[string]int{}, map[string]int{}
	}
	s.unfinished[w.task.ID]++
	u := s.unfinished[w.task.ID]
	if head := s.taskBranch(w); !head.IsZero() && head != ses.branchAt && u < UnfinishedLimit {
		// It committed: the next session carries on from its work, and
		// the count of sessions without progress starts again.
		delete(s.idles, w.task.ID)
		s.eventf(EventIdle, w.task.ID, "%s: a fresh session (it committed on %s; %d of %d unfinished)", why, worktree.Branch(w.task.ID), u, UnfinishedLimit)
		return nil
	}
	s.idles[w.task.ID]++
	n := s.idles[w.task.ID]
	if n < IdleLimit && u < UnfinishedLimit {
		s.eventf(EventIdle, w.task.ID, "%s: a fresh session (%d of %d without progress)", why, n, IdleLimit)
		return nil
	}
	s.forgetIdle(w.task.ID)
	what := fmt.Sprintf("%d agent sessions in a row ended without progress", n)
	if n < IdleLimit {
		// Commits that never come to a submit, a block or a handoff are
		// no end either: a bounded number of sessions, then the planner.
		what = fmt.Sprintf("%d agent sessions in a row ended without submitting, blocking or handing off the task, though some committed", u)
	}
	reason := withOutput(fmt.Sprintf("%s, the last: %s", what, why), ses.lastOutput())
	s.eventf(EventIdle, w.task.ID, "%s: giving %s up", what, w.task.ID)
	s.giveUp(ctx, w.task.ID, reason)
	if s.Role == contracts.RoleReviewer {
		// A released review is the best one to take again: this reviewer
		// stops, so that another one does.
		return fmt.Errorf("%w: %s", ErrGaveUp, reason)
	}
	return nil
}

// forgetIdle clears a task's counts of sessions that did not finish it.
func (s *sup) forgetIdle(task string) {
	delete(s.idles, task)
	delete(s.unfinished, task)
}

// taskBranch is the tip of a coder's task branch (zero for a reviewer or a
// planner, or when it cannot be read).
func (s *sup) taskBranch(w *work) refstore.Hash {
	if s.Role != contracts.RoleCoder || w.task == nil {
		return refstore.Hash{}
	}
	h, ok, err := s.Repo.ReadRef("refs/heads/" + worktree.Branch(w.task.ID))
	if err != nil || !ok {
		return refstore.Hash{}
	}
	return h
}

// giveUp lets go of a task the agent cannot finish: a coder's is blocked for
// the planner, a reviewer's review released for another reviewer.
func (s *sup) giveUp(ctx context.Context, task, reason string) {
	switch s.Role {
	case contracts.RoleCoder:
		if err := s.do(func() error {
			_, err := s.Board.Block(ctx, ops.BlockRequest{Task: task, Reason: reason, Questions: []string{
				"Why does the agent keep failing on this task?",
				"Should the task be rescoped or given to another coder?"}})
			return err
		}); err != nil {
			s.eventf(EventError, task, "block %s: %v", task, err)
		}
	case contracts.RoleReviewer:
		if err := s.do(func() error {
			_, err := s.Board.Release(ctx, ops.ReleaseRequest{Task: task, Side: "reviewer"})
			return err
		}); err != nil {
			s.eventf(EventError, task, "release %s: %v", task, err)
		}
	}
}
