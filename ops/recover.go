package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// recoverWorktrees repairs what killed processes left in this repository's
// worktrees (worktree.Recover) and tells Notice one line for each thing it
// repaired or found unsafe to touch. Claim, review, merge and the worktree
// commands run it first. The board is read only when a dead claim's
// worktree has to be judged.
func (s *Service) recoverWorktrees(ctx context.Context) ([]worktree.Repair, error) {
	rec := s.recovery(ctx)
	done, err := worktree.Recover(ctx, s.Repo, rec)
	for _, r := range done {
		s.notice(r.String())
	}
	return done, err
}

// recoverWhenFree is recoverWorktrees when no other worktree command of
// this machine holds the worktrees' lock: what claims, reviews and merges
// do first. In a busy team another command nearly always holds it, and
// the recovery is left to one that finds it free (a command that needs a
// leftover gone, a claim of a dead claim's task, waits for the lock and
// recovers). They do not wait for it at all: waiting even 20 ms slowed a
// team of eight coders by a sixth, since the reviewer every task waits on
// spent it at each review and merge.
func (s *Service) recoverWhenFree(ctx context.Context) error {
	done, _, err := worktree.RecoverWhenFree(ctx, s.Repo, s.recovery(ctx))
	for _, r := range done {
		s.notice(r.String())
	}
	return err
}

// recovery is what worktree recovery asks of the board: the index, read
// once when first needed, and the task whose worktree a dead claim left,
// read when asked. Reading every task in play to know which hold their
// worktrees cost each merge a decode per task in review, to judge the
// reviewer's checkout, which the index judges alone. The board is read
// in ctx's scope of views (cas.WithViews), and whatever becomes of ctx.
func (s *Service) recovery(ctx context.Context) worktree.Recovery {
	var once sync.Once
	var idx map[string]*contracts.TaskSummary
	var integ string
	var viewErr error
	read := func() {
		viewErr = s.view(context.WithoutCancel(ctx), func(tx *cas.Tx) error {
			m, err := tx.Meta()
			if err != nil {
				return err
			}
			integ = "refs/heads/" + m.Config.IntegrationBranch
			idx, err = tx.Index()
			return err
		})
		if errors.Is(viewErr, cas.ErrNoBoard) {
			// No board: nothing was claimed, and no branch is known to
			// hold no work.
			viewErr, integ = nil, ""
		}
	}
	holds := func(id string) (bool, error) {
		once.Do(read)
		sum := idx[id]
		if viewErr != nil || sum == nil {
			return false, viewErr
		}
		switch sum.Status {
		case contracts.Unclaimed, contracts.Draft, contracts.Merged, contracts.Superseded, contracts.Abandoned:
			return false, nil
		}
		held := false
		err := s.view(context.WithoutCancel(ctx), func(tx *cas.Tx) error {
			t, err := tx.Task(id)
			held = err == nil && t != nil && t.Worktree == worktree.Rel(id)
			return err
		})
		return held, err
	}
	return worktree.Recovery{
		Holds: holds,
		Reviewing: func(agent, task string) (bool, error) {
			once.Do(read)
			sum := idx[task]
			return sum != nil && sum.Status == contracts.ReadyForReview && sum.ReviewingBy == agent, viewErr
		},
		Routine: s.routineReviewEnd,
		Integration: func() (string, error) {
			once.Do(read)
			if viewErr != nil || integ == "" {
				return "", viewErr
			}
			if _, ok, err := s.Repo.ReadRef(integ); err != nil || !ok {
				return "", err
			}
			return integ, nil
		},
	}
}

// routineReviewEnd reports whether the end of agent's review of task, whose
// checkout recovery removes, is routine rather than a repair: the acting
// agent removes its own checkout (a reviewer's verdict or merge), or the
// review ended with agent's own verdict (the checkout waits for the next
// command, whoever runs it, since the reviewer's session may still be
// working in it when it records the verdict). A review its reviewer
// abandoned (killed, its lease over, taken over by another) ends in no
// verdict of its own: that checkout is a leftover, and its removal news.
func (s *Service) routineReviewEnd(agent, task string) bool {
	if agent == s.Agent {
		return true
	}
	routine := false
	s.view(context.Background(), func(tx *cas.Tx) error {
		t, err := tx.Task(task)
		if err != nil || t == nil {
			return err
		}
		routine = contracts.ReviewEndedByVerdict(t, agent)
		return nil
	})
	return routine
}

// notice tells Notice, when the front end listens.
func (s *Service) notice(msg string) {
	if s.Notice != nil {
		s.Notice(msg)
	}
}

// staleLocks removes the stale locks of git's in this repository that
// git-liza's git commands may leave (refstore.Repo.ClearStaleLocks), and
// names the others.
func (s *Service) staleLocks() []worktree.Repair {
	removed, kept, err := s.Repo.ClearStaleLocks()
	var out []worktree.Repair
	for _, r := range removed {
		out = append(out, worktree.Repair{Path: r.Path, What: r.Why})
	}
	for _, k := range kept {
		out = append(out, worktree.Repair{Path: k.Path, What: fmt.Sprintf("kept %s (%s)", k.Path, k.Why),
			Fix: "if no git command is running in this repository, rm " + k.Path})
	}
	if err != nil {
		out = append(out, worktree.Repair{What: err.Error()})
	}
	return out
}

// tornMergeDepth bounds how many state commits finishTornMerge reads back
// to find the last merge.
const tornMergeDepth = 1000

// finishTornMerge completes a merge whose ref transaction a kill tore in
// two. git moves the refs of one update-ref transaction one by one, each by
// renaming its lock into place, and a merge moves refs/liza/state first,
// then the integration branch (ref, a full name): killed in between, the
// state records the merge while the branch is where it was, and the
// branch's lock, which holds the merge's commit, stays behind. The state is
// the commit point, so the branch follows it: once that lock is stale (it
// is waited for until then), if it holds the commit the last merge
// recorded and the branch is still where that merge found it, the branch
// moves on; any other stale lock of the branch is removed. Merge (before
// each attempt) and worktree prune run it before anything else could
// remove that lock as any stale one.
func (s *Service) finishTornMerge(ctx context.Context, ref string) error {
	if s.remote() != "" {
		return nil
	}
	lock := filepath.Join(s.Repo.CommonDir, filepath.FromSlash(ref)+".lock")
	for began := time.Now(); ; {
		if _, err := os.Stat(lock); err != nil {
			return nil
		}
		if refstore.LockStale(lock) {
			break
		}
		if time.Since(began) > refstore.StaleLockAge+2*time.Second {
			return contracts.Errorf(contracts.CodeContention, "%s exists and stays: if no git command is running in this repository, remove it: rm %s", lock, lock)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	b, _ := os.ReadFile(lock)
	want, _ := refstore.ParseHash(strings.TrimSpace(string(b)))
	var tip refstore.Hash
	if err := s.view(ctx, func(tx *cas.Tx) error { tip = tx.Snap.Commit; return nil }); err != nil {
		return err
	}
	in, err := s.lastMerge(tip)
	if err != nil {
		return err
	}
	torn := false
	if in != nil {
		old, _ := refstore.ParseHash(in.IntegrationOld)
		result, _ := refstore.ParseHash(in.MergeCommit)
		cur, ok, err := s.Repo.ReadRef(ref)
		if err != nil {
			return err
		}
		torn = ok && cur == old && result == want && !want.IsZero()
	}
	if gone, why, err := s.Repo.ClearStaleLock(lock); err != nil {
		return err
	} else if !gone {
		return contracts.Errorf(contracts.CodeContention, "%s exists (%s): if no git command is running in this repository, remove it: rm %s", lock, why, lock)
	}
	if !torn {
		return nil
	}
	old, _ := refstore.ParseHash(in.IntegrationOld)
	if err := s.Repo.UpdateRefs(ctx, "liza: finish the merge of "+in.Task, refstore.RefUpdate{Name: ref, Old: old, New: want}); err != nil {
		return err
	}
	name := strings.TrimPrefix(ref, "refs/heads/")
	s.notice(fmt.Sprintf("moved %s to %s: the merge of %s had moved refs/liza/state when a kill stopped git before it moved %s", name, short(want.String()), in.Task, name))
	return nil
}

// lastMerge is the input of the last merge in the state's history (a
// batch as one merge of its tasks to its last merge commit), or nil
// when none is in its last tornMergeDepth commits.
func (s *Service) lastMerge(tip refstore.Hash) (*mergeInput, error) {
	for c, n := tip, 0; !c.IsZero() && n < tornMergeDepth; n++ {
		commit, err := s.Repo.ReadCommit(c)
		if err != nil {
			return nil, err
		}
		if rec, err := ReadRecorded(commit.Message); err == nil && rec.Kind == kindMerge.name {
			var in mergeInput
			if err := json.Unmarshal(rec.Input, &in); err != nil {
				return nil, err
			}
			return &in, nil
		} else if err == nil && rec.Kind == kindMergeBatch.name {
			// A batch moved the branch once, from its old tip to its
			// last merge commit.
			var in batchInput
			if err := json.Unmarshal(rec.Input, &in); err != nil {
				return nil, err
			}
			if len(in.Merges) == 0 {
				return nil, nil
			}
			return &mergeInput{Task: strings.Join(in.ids(), ", "), IntegrationOld: in.IntegrationOld, MergeCommit: in.Merges[len(in.Merges)-1].MergeCommit}, nil
		}
		if len(commit.Parents) == 0 {
			break
		}
		c = commit.Parents[0]
	}
	return nil, nil
}
