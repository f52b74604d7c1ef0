package ops

import (
	"context"
	"fmt"
	"os"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

// TidyMerged removes this clone's worktrees of MERGED tasks that hold
// nothing the integration branch lacks (no uncommitted change, no commit
// not on it), with their branches, and says what it removed. A coder's
// supervisor calls it: in remote mode the merge happens on the reviewer's
// clone, which cannot remove the coder's worktree, and without it a
// coder's machine kept a whole checkout for every task it ever worked; in
// local mode a merge killed between its commit and its cleanup left one.
// It is prune's removal narrowed to MERGED tasks (no repair, no unknown or
// archived task, nothing locked), for the supervisor, not the agent: no
// command or tool offers it.
func (s *Service) TidyMerged(ctx context.Context) ([]PruneItem, error) {
	infos, err := worktree.List(ctx, s.Repo)
	if err != nil || len(infos) == 0 {
		return nil, err
	}
	ids := make([]string, 0, len(infos))
	for _, w := range infos {
		ids = append(ids, w.ID)
	}
	branch, tasks, _, err := s.worktreeBoard(ids, false)
	if err != nil {
		return nil, err
	}
	var done []PruneItem
	var integ string
	for _, w := range infos {
		t := tasks[w.ID]
		if t.status != contracts.Merged || t.archived || w.Locked != "" || !w.Exists || contracts.ValidTaskID(w.ID) != nil {
			continue
		}
		if integ == "" {
			if integ, err = s.integrationRef(branch); err != nil {
				return done, err
			}
		}
		reason, err := s.unsafeToRemove(ctx, w, integ)
		if err != nil {
			return done, err
		}
		if reason != "" {
			continue
		}
		if err := worktree.Remove(ctx, s.Repo, w.ID, integ, w.OnlyDeleted); err != nil {
			if _, serr := os.Stat(w.Path); os.IsNotExist(serr) {
				continue // removed meanwhile: by the merge's own cleanup
			}
			return done, fmt.Errorf("removing %s: %w", worktree.Rel(w.ID), err)
		}
		done = append(done, PruneItem{ID: w.ID, Path: worktree.Rel(w.ID), Reason: fmt.Sprintf("%s; branch %s deleted", t.describe(w.ID), worktree.Branch(w.ID))})
	}
	return done, nil
}
