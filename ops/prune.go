package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

// PruneItem is one worktree prune looked at, and what it did.
type PruneItem struct {
	ID     string `json:"id,omitempty"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// PruneReport is what prune did with each task worktree.
type PruneReport struct {
	IntegrationBranch string `json:"integration_branch"`
	// Repaired are the leftovers of killed processes repaired or removed
	// (worktree.Recover, stale locks of git's): each Reason says what was
	// done.
	Repaired []PruneItem `json:"repaired,omitempty"`
	Removed  []PruneItem `json:"removed"`
	Pruned   []PruneItem `json:"pruned"`
	// Branches are task branches deleted that no worktree had checked
	// out: those of finished tasks, whose commits are all on the
	// integration branch (a merge killed before deleting its branch).
	Branches []PruneItem `json:"branches,omitempty"`
	Kept     []PruneItem `json:"kept"`
	// Seen is the number of task worktrees looked at.
	Seen int `json:"-"`
}

// PruneWorktrees removes the worktrees nobody needs: those of finished,
// archived or unknown tasks that hold no uncommitted change and no commit
// the integration branch lacks, and git's records of worktrees whose
// directory is gone. Anything else is kept, with the reason.
func (s *Service) PruneWorktrees(ctx context.Context) (*PruneReport, error) {
	if err := s.mayClean("prune"); err != nil {
		return nil, err
	}
	var integration string
	if err := s.view(ctx, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		integration = "refs/heads/" + m.Config.IntegrationBranch
		return err
	}); err != nil {
		return nil, err
	}
	if err := s.finishTornMerge(ctx, integration); err != nil {
		return nil, err
	}
	repaired, err := worktree.Recover(ctx, s.Repo, s.recovery(ctx))
	if err != nil {
		return nil, err
	}
	infos, err := worktree.List(ctx, s.Repo)
	if err != nil {
		return nil, err
	}
	branches, err := s.taskBranches(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(infos)+len(branches))
	for _, w := range infos {
		ids = append(ids, w.ID)
	}
	ids = append(ids, branches...)
	branch, tasks, _, err := s.worktreeBoard(ids, false)
	if err != nil {
		return nil, err
	}
	integ, err := s.integrationRef(branch)
	if err != nil {
		return nil, err
	}
	rep := &PruneReport{IntegrationBranch: branch, Removed: []PruneItem{}, Pruned: []PruneItem{}, Kept: []PruneItem{}, Seen: len(infos)}
	for _, r := range repaired {
		if r.Fix != "" {
			rep.Kept = append(rep.Kept, PruneItem{ID: r.ID, Path: r.Path, Reason: r.String()})
		} else {
			rep.Repaired = append(rep.Repaired, PruneItem{ID: r.ID, Path: r.Path, Reason: r.What})
		}
	}
	keep := func(w worktree.Info, format string, a ...any) {
		rep.Kept = append(rep.Kept, PruneItem{ID: w.ID, Path: worktree.Rel(w.ID), Reason: fmt.Sprintf(format, a...)})
	}
	gone := map[string]bool{}
	present := map[string]bool{}
	for _, w := range infos {
		present[w.ID] = true
		t := tasks[w.ID]
		switch {
		case w.Locked != "":
			keep(w, "locked: %s", w.Locked)
		case contracts.ValidTaskID(w.ID) != nil:
			keep(w, "%q is not a task id", w.ID)
		case !w.Exists:
			gone[w.ID] = true
		case !t.orphan():
			keep(w, "%s", t.describe(w.ID))
		default:
			if reason, err := s.unsafeToRemove(ctx, w, integ); err != nil {
				return nil, err
			} else if reason != "" {
				keep(w, "%s, but %s", t.describe(w.ID), reason)
				continue
			}
			if err := worktree.Remove(ctx, s.Repo, w.ID, integ, w.OnlyDeleted); err != nil {
				keep(w, "%s, but %v", t.describe(w.ID), err)
				continue
			}
			reason := fmt.Sprintf("%s; branch %s deleted", t.describe(w.ID), worktree.Branch(w.ID))
			if w.Dirty {
				reason = fmt.Sprintf("%s (a removal killed halfway had deleted some of its files; all are on %s); branch %s deleted", t.describe(w.ID), branch, worktree.Branch(w.ID))
			}
			rep.Removed = append(rep.Removed, PruneItem{ID: w.ID, Path: worktree.Rel(w.ID), Reason: reason})
		}
	}
	if len(gone) > 0 {
		forgotten, err := worktree.Prune(ctx, s.Repo)
		if err != nil {
			return nil, err
		}
		for _, id := range forgotten {
			if !gone[id] {
				continue
			}
			reason := "directory gone"
			if t := tasks[id]; t.orphan() {
				// The branch of a finished task goes too, when merged.
				if ok, err := worktree.BranchMerged(ctx, s.Repo, id, integ); err != nil {
					return nil, err
				} else if ok {
					if err := worktree.Remove(ctx, s.Repo, id, integ, false); err != nil {
						return nil, err
					}
					reason += fmt.Sprintf("; %s, branch %s deleted", t.describe(id), worktree.Branch(id))
				} else {
					reason += fmt.Sprintf("; branch %s kept: it has commits not on %s", worktree.Branch(id), branch)
				}
			}
			rep.Pruned = append(rep.Pruned, PruneItem{ID: id, Path: worktree.Rel(id), Reason: reason})
		}
	}
	if err := s.pruneBranches(ctx, rep, branches, present, tasks, integ); err != nil {
		return nil, err
	}
	stray, err := worktree.Strays(s.Repo)
	if err != nil {
		return nil, err
	}
	for _, p := range stray {
		if p.Fix != "" {
			rep.Kept = append(rep.Kept, PruneItem{Path: p.Path, Reason: p.String()})
		} else {
			rep.Repaired = append(rep.Repaired, PruneItem{Path: p.Path, Reason: p.What})
		}
	}
	for _, l := range s.staleLocks() {
		if l.Fix != "" {
			rep.Kept = append(rep.Kept, PruneItem{Path: l.Path, Reason: l.String()})
		} else {
			rep.Repaired = append(rep.Repaired, PruneItem{Path: l.Path, Reason: l.What})
		}
	}
	return rep, nil
}

// taskBranches are the ids of the task/ID branches here.
func (s *Service) taskBranches(ctx context.Context) ([]string, error) {
	out, err := s.Repo.Git(ctx, "for-each-ref", "--format=%(refname)", worktree.BranchRef(""))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, ref := range strings.Fields(string(out)) {
		if id := strings.TrimPrefix(ref, worktree.BranchRef("")); contracts.ValidTaskID(id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// pruneBranches deletes the task branches no worktree has checked out
// whose task the board knows finished and whose commits are all on the
// integration branch: what a merge killed before deleting its branch
// leaves. A branch of an unknown task is someone else's.
func (s *Service) pruneBranches(ctx context.Context, rep *PruneReport, branches []string, present map[string]bool, tasks map[string]worktreeTask, integ string) error {
	for _, id := range branches {
		t := tasks[id]
		if present[id] || t.status == "" || !t.orphan() {
			continue
		}
		if _, ok, err := s.Repo.ReadRef(worktree.BranchRef(id)); err != nil || !ok {
			continue
		}
		if ok, err := worktree.BranchMerged(ctx, s.Repo, id, integ); err != nil {
			return err
		} else if !ok {
			continue
		}
		if err := worktree.Remove(ctx, s.Repo, id, integ, false); err != nil {
			rep.Kept = append(rep.Kept, PruneItem{ID: id, Path: worktree.Branch(id), Reason: err.Error()})
			continue
		}
		rep.Branches = append(rep.Branches, PruneItem{ID: id, Path: worktree.Branch(id), Reason: t.describe(id) + " and its commits are on " + strings.TrimPrefix(integ, "refs/heads/")})
	}
	return nil
}

// unsafeToRemove says why removing a worktree would lose work ("" when it
// would not): uncommitted changes, commits of task/ID the integration
// branch lacks, or a checkout (another branch, a detached HEAD) at a commit
// the integration branch lacks.
func (s *Service) unsafeToRemove(ctx context.Context, w worktree.Info, integ string) (string, error) {
	name := strings.TrimPrefix(integ, "refs/heads/")
	if w.Dirty && !w.OnlyDeleted {
		// A worktree whose only changes are deleted files (a removal
		// killed halfway) loses nothing when HEAD is on the integration
		// branch, as checked below.
		return "it has uncommitted changes", nil
	}
	if ok, err := worktree.BranchMerged(ctx, s.Repo, w.ID, integ); err != nil {
		return "", err
	} else if !ok {
		msg := fmt.Sprintf("branch %s has commits not on %s", worktree.Branch(w.ID), name)
		if r := s.Store.Remote; r != "" {
			// A merge made in another clone moved the remote's integration
			// branch; this clone's follows it on sync.
			msg += fmt.Sprintf(" here (if it was merged on %s, git liza sync brings %s here; then prune again)", r, name)
		}
		return msg, nil
	}
	if w.Head != "" {
		if ok, err := s.Repo.IsAncestor(ctx, w.Head, integ); err != nil {
			return "", err
		} else if !ok {
			return fmt.Sprintf("its checkout is at %s, which is not on %s", short(w.Head), name), nil
		}
	}
	return "", nil
}
