package ops

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

// recoverWorktrees repairs what killed processes left in this repository's
// worktrees (worktree.Recover) and tells Notice one line for each thing it
// repaired or found unsafe to touch. Claim, review, merge and the worktree
// commands run it first. The board is read only when a dead claim's
// worktree has to be judged.
func (s *Service) recoverWorktrees(ctx context.Context) ([]worktree.Repair, error) {
	rec := s.recovery()
	done, err := worktree.Recover(ctx, s.Repo, rec)
	for _, r := range done {
		s.notice(r.String())
	}
	return done, err
}

// recovery is what worktree recovery asks of the board, read once, when
// first needed.
func (s *Service) recovery() worktree.Recovery {
	var once sync.Once
	var held map[string]bool
	var integ string
	var viewErr error
	read := func() {
		held = map[string]bool{}
		viewErr = s.view(func(tx *cas.Tx) error {
			m, err := tx.Meta()
			if err != nil {
				return err
			}
			integ = "refs/heads/" + m.Config.IntegrationBranch
			idx, err := tx.Index()
			if err != nil {
				return err
			}
			for id, sum := range idx {
				switch sum.Status {
				case contracts.Unclaimed, contracts.Draft, contracts.Merged, contracts.Superseded, contracts.Abandoned:
					continue
				}
				t, err := tx.Task(id)
				if err != nil {
					return err
				}
				if t != nil && t.Worktree == worktree.Rel(id) {
					held[id] = true
				}
			}
			return nil
		})
		if errors.Is(viewErr, cas.ErrNoBoard) {
			// No board: nothing was claimed, and no branch is known to
			// hold no work.
			viewErr, integ = nil, ""
		}
	}
	return worktree.Recovery{
		Holds: func(id string) (bool, error) {
			once.Do(read)
			return held[id], viewErr
		},
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
