package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

// WorktreeView is one task worktree, or one task whose worktree is missing
// here.
type WorktreeView struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	// Worktree is "present"; "gone" when git still records a worktree whose
	// directory was deleted (prune forgets it); "missing" when the state
	// records .worktrees/ID for a task but there is no worktree here.
	Worktree   string           `json:"worktree"`
	Status     contracts.Status `json:"status,omitempty"`
	NoTask     bool             `json:"no_task,omitempty"`
	Archived   bool             `json:"archived,omitempty"`
	AssignedTo string           `json:"assigned_to,omitempty"`
	Branch     string           `json:"branch,omitempty"`
	Head       string           `json:"head,omitempty"`
	Dirty      bool             `json:"dirty"`
	// Merged says that task/ID has no commit the integration branch lacks
	// (true when there is no such branch).
	Merged bool   `json:"merged"`
	Locked string `json:"locked,omitempty"`
}

// WorktreeList is every task worktree on this machine.
type WorktreeList struct {
	IntegrationBranch string
	// IntegrationErr says why Merged could not be worked out (the
	// integration branch is missing here); nil when it could.
	IntegrationErr error
	Worktrees      []WorktreeView
}

// worktreeTask is what the state says about a worktree's task.
type worktreeTask struct {
	status     contracts.Status // "" when there is no such task
	archived   bool
	assignedTo string
}

// orphan reports whether the task's worktree holds nothing the board still
// needs: the task is finished, archived or unknown.
func (t worktreeTask) orphan() bool {
	switch {
	case t.status == "", t.archived:
		return true
	}
	switch t.status {
	case contracts.Merged, contracts.Superseded, contracts.Abandoned:
		return true
	}
	return false
}

func (t worktreeTask) describe(id string) string {
	switch {
	case t.status == "":
		return "no task " + id
	case t.archived:
		return fmt.Sprintf("task %s is archived (%s)", id, t.status)
	}
	return fmt.Sprintf("task %s is %s", id, t.status)
}

// worktreeBoard reads, at the tip, the integration branch, the task of each
// id and the live tasks whose worktree field names a task worktree.
func (s *Service) worktreeBoard(ids []string, withRecorded bool) (integration string, tasks map[string]worktreeTask, recorded map[string]worktreeTask, err error) {
	tasks = map[string]worktreeTask{}
	if withRecorded {
		recorded = map[string]worktreeTask{}
	}
	err = s.view(context.Background(), func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		integration = m.Config.IntegrationBranch
		idx, err := tx.Index()
		if err != nil {
			return err
		}
		for _, id := range ids {
			if t, ok := idx[id]; ok {
				tasks[id] = worktreeTask{status: t.Status, assignedTo: t.AssignedTo}
				continue
			}
			if contracts.ValidTaskID(id) != nil {
				tasks[id] = worktreeTask{}
				continue
			}
			a, err := tx.ArchivedTask(id)
			if err != nil {
				return err
			}
			if a != nil {
				tasks[id] = worktreeTask{status: a.Status, archived: true, assignedTo: a.AssignedTo}
			} else {
				tasks[id] = worktreeTask{}
			}
		}
		if recorded == nil {
			return nil
		}
		for id, sum := range idx {
			// Only a claim records a worktree, and every claim counts an
			// iteration: a task never claimed (most of a large board) has
			// none, and its file is not read.
			if sum.Status.Terminal() || sum.Status == contracts.Draft || sum.Status == contracts.Unclaimed && sum.Iteration == 0 {
				continue
			}
			t, err := tx.Task(id)
			if err != nil {
				return err
			}
			if t != nil && t.Worktree == worktree.Rel(id) {
				recorded[id] = worktreeTask{status: t.Status, assignedTo: t.AssignedTo}
			}
		}
		return nil
	})
	return
}

// integrationRef is the integration branch as a full ref, checked to exist.
func (s *Service) integrationRef(branch string) (string, error) {
	ref := "refs/heads/" + branch
	if _, ok, err := s.Repo.ReadRef(ref); err != nil {
		return "", err
	} else if !ok {
		return "", contracts.Invalidf("integration branch %s does not exist", branch)
	}
	return ref, nil
}

// ListWorktrees lists every task worktree with its task, and the tasks
// whose worktree is missing here.
func (s *Service) ListWorktrees(ctx context.Context) (*WorktreeList, error) {
	if _, err := s.recoverWorktrees(ctx); err != nil {
		return nil, err
	}
	// Worktrees first, then the state: a worktree listed unlocked was
	// claimed by a commit the state read then sees.
	infos, err := worktree.List(ctx, s.Repo)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(infos))
	for i, w := range infos {
		ids[i] = w.ID
	}
	branch, tasks, recorded, err := s.worktreeBoard(ids, true)
	if err != nil {
		return nil, err
	}
	integ, integErr := s.integrationRef(branch)
	merged := func(id string) (bool, error) {
		if integErr != nil || contracts.ValidTaskID(id) != nil {
			return false, nil
		}
		return worktree.BranchMerged(ctx, s.Repo, id, integ)
	}
	views := []WorktreeView{}
	for _, w := range infos {
		t := tasks[w.ID]
		v := WorktreeView{ID: w.ID, Path: worktree.Rel(w.ID), Worktree: "present", Status: t.status, NoTask: t.status == "",
			Archived: t.archived, AssignedTo: t.assignedTo, Branch: w.Branch, Head: w.Head, Dirty: w.Dirty, Locked: w.Locked}
		if !w.Exists {
			v.Worktree = "gone"
		}
		if v.Merged, err = merged(w.ID); err != nil {
			return nil, err
		}
		views = append(views, v)
		delete(recorded, w.ID)
	}
	for id, t := range recorded {
		v := WorktreeView{ID: id, Path: worktree.Rel(id), Worktree: "missing", Status: t.status, AssignedTo: t.assignedTo}
		if _, ok, err := s.Repo.ReadRef(worktree.BranchRef(id)); err != nil {
			return nil, err
		} else if ok {
			v.Branch = worktree.Branch(id)
		}
		if v.Merged, err = merged(id); err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	slices.SortFunc(views, func(a, b WorktreeView) int { return strings.Compare(a.ID, b.ID) })
	return &WorktreeList{IntegrationBranch: branch, IntegrationErr: integErr, Worktrees: views}, nil
}

// mayClean lets the planner and the human operator remove worktrees: the
// roles that may release a task (contracts.OpRelease), less the code
// reviewer, whose release is of its own review only.
func (s *Service) mayClean(verb string) error {
	if role, _ := contracts.ParseAgentID(s.Agent); role != contracts.RoleHuman && role != contracts.RolePlanner {
		return contracts.Invalidf("%s (%s) may not %s task worktrees (allowed: human, planner)", s.Agent, role.IDPrefix(), verb)
	}
	return contracts.Permit(s.Agent, contracts.OpRelease)
}

// DeleteWorktreeRequest removes a task's worktree and branch.
type DeleteWorktreeRequest struct {
	Task string
	// Force deletes uncommitted changes and commits that are not on the
	// integration branch.
	Force bool
}

// DeletedWorktree is what a delete removed.
type DeletedWorktree struct {
	ID              string           `json:"id"`
	Status          contracts.Status `json:"status"`
	Worktree        string           `json:"worktree"`
	WorktreeRemoved bool             `json:"worktree_removed"`
	Branch          string           `json:"branch"`
	BranchDeleted   bool             `json:"branch_deleted"`
}

// DeleteWorktree removes the worktree and branch of a BLOCKED, ABANDONED or
// SUPERSEDED task, a task that will not be worked on as it stands. The
// state is not written: a finished task's record does not change, and a
// BLOCKED task keeps its fields.
func (s *Service) DeleteWorktree(ctx context.Context, r DeleteWorktreeRequest) (*DeletedWorktree, error) {
	id, force := r.Task, r.Force
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	if err := s.mayClean("delete"); err != nil {
		return nil, err
	}
	if _, err := s.recoverWorktrees(ctx); err != nil {
		return nil, err
	}
	var status contracts.Status
	var branch string
	if err := s.view(ctx, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		branch = m.Config.IntegrationBranch
		t, err := tx.AnyTask(id)
		if err != nil {
			return err
		}
		if t == nil {
			return contracts.Invalidf("no task %s (git liza worktree prune removes worktrees of unknown tasks)", id)
		}
		status = t.Status
		return nil
	}); err != nil {
		return nil, err
	}
	switch status {
	case contracts.Blocked, contracts.Abandoned, contracts.Superseded:
	default:
		return nil, contracts.Invalidf("task %s is %s: worktree delete takes BLOCKED, ABANDONED or SUPERSEDED tasks", id, status)
	}
	integ, err := s.integrationRef(branch)
	if err != nil && !force {
		return nil, err
	}
	info, err := worktree.Inspect(ctx, s.Repo, id)
	if err != nil {
		return nil, err
	}
	_, hasBranch, err := s.Repo.ReadRef(worktree.BranchRef(id))
	if err != nil {
		return nil, err
	}
	if !info.Exists && !info.Prunable && !hasBranch {
		return nil, contracts.Invalidf("task %s has no worktree and no branch %s here", id, worktree.Branch(id))
	}
	if info.Locked != "" && !force {
		return nil, contracts.Invalidf("worktree %s is locked (%s): pass --force to delete it anyway", worktree.Rel(id), info.Locked)
	}
	if !force && info.Head != "" && info.Branch != worktree.Branch(id) {
		if ok, err := s.Repo.IsAncestor(ctx, info.Head, integ); err != nil {
			return nil, err
		} else if !ok {
			return nil, contracts.Invalidf("worktree %s is at %s, which is not on %s: pass --force to delete it", worktree.Rel(id), short(info.Head), branch)
		}
	}
	if err := worktree.Remove(ctx, s.Repo, id, integ, force); err != nil {
		return nil, err
	}
	return &DeletedWorktree{ID: id, Status: status, Worktree: worktree.Rel(id), WorktreeRemoved: info.Exists || info.Prunable,
		Branch: worktree.Branch(id), BranchDeleted: hasBranch}, nil
}
