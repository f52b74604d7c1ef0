package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

func (e *Env) worktreeCmd() *cli.Command {
	return &cli.Command{
		Name:  "worktree",
		Usage: "task worktrees (.worktrees/ID on branch task/ID): list, prune orphans, delete one",
		Commands: []*cli.Command{
			{
				Name:  "list",
				Usage: "every task worktree with its task, and the tasks whose worktree is missing here",
				Action: e.action(0, 0, "worktree list", func(ctx context.Context, s *session, _ []string) error {
					return s.worktreeList(ctx)
				}),
			},
			{
				Name:  "prune",
				Usage: "remove clean, merged worktrees of finished or unknown tasks; forget worktrees whose directory is gone",
				Action: e.action(0, 0, "worktree prune", func(ctx context.Context, s *session, _ []string) error {
					return s.worktreePrune(ctx)
				}),
			},
			{
				Name:      "delete",
				Usage:     "remove the worktree and branch of a BLOCKED, ABANDONED or SUPERSEDED task (--force: even with unmerged or uncommitted work)",
				ArgsUsage: "ID",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "force", Usage: "delete uncommitted changes and commits that are not on the integration branch"},
				},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					a, err := args(cmd, 1, 1, "worktree delete ID [--force]")
					if err != nil {
						return err
					}
					if err := contracts.ValidTaskID(a[0]); err != nil {
						return err
					}
					s, err := e.open(cmd)
					if err != nil {
						return err
					}
					return s.worktreeDelete(ctx, a[0], cmd.Bool("force"))
				},
			},
		},
	}
}

// worktreeView is one line of `worktree list`.
type worktreeView struct {
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
func (s *session) worktreeBoard(ids []string, withRecorded bool) (integration string, tasks map[string]worktreeTask, recorded map[string]worktreeTask, err error) {
	tasks = map[string]worktreeTask{}
	if withRecorded {
		recorded = map[string]worktreeTask{}
	}
	err = s.store.View(s.agent, func(tx *cas.Tx) error {
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
			if sum.Status.Terminal() || sum.Status == contracts.Draft {
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
func (s *session) integrationRef(branch string) (string, error) {
	ref := "refs/heads/" + branch
	if _, ok, err := s.repo.ReadRef(ref); err != nil {
		return "", err
	} else if !ok {
		return "", contracts.Invalidf("integration branch %s does not exist", branch)
	}
	return ref, nil
}

func (s *session) worktreeList(ctx context.Context) error {
	// Worktrees first, then the state: a worktree listed unlocked was
	// claimed by a commit the state read then sees.
	infos, err := worktree.List(ctx, s.repo)
	if err != nil {
		return err
	}
	ids := make([]string, len(infos))
	for i, w := range infos {
		ids[i] = w.ID
	}
	branch, tasks, recorded, err := s.worktreeBoard(ids, true)
	if err != nil {
		return err
	}
	integ, integErr := s.integrationRef(branch)
	merged := func(id string) (bool, error) {
		if integErr != nil || contracts.ValidTaskID(id) != nil {
			return false, nil
		}
		return worktree.BranchMerged(ctx, s.repo, id, integ)
	}
	var views []worktreeView
	for _, w := range infos {
		t := tasks[w.ID]
		v := worktreeView{ID: w.ID, Path: worktree.Rel(w.ID), Worktree: "present", Status: t.status, NoTask: t.status == "",
			Archived: t.archived, AssignedTo: t.assignedTo, Branch: w.Branch, Head: w.Head, Dirty: w.Dirty, Locked: w.Locked}
		if !w.Exists {
			v.Worktree = "gone"
		}
		if v.Merged, err = merged(w.ID); err != nil {
			return err
		}
		views = append(views, v)
		delete(recorded, w.ID)
	}
	for id, t := range recorded {
		v := worktreeView{ID: id, Path: worktree.Rel(id), Worktree: "missing", Status: t.status, AssignedTo: t.assignedTo}
		if _, ok, err := s.repo.ReadRef(worktree.BranchRef(id)); err != nil {
			return err
		} else if ok {
			v.Branch = worktree.Branch(id)
		}
		if v.Merged, err = merged(id); err != nil {
			return err
		}
		views = append(views, v)
	}
	slices.SortFunc(views, func(a, b worktreeView) int { return strings.Compare(a.ID, b.ID) })
	if s.json {
		if views == nil {
			views = []worktreeView{}
		}
		return s.printJSON(map[string]any{"integration_branch": branch, "worktrees": views})
	}
	if len(views) == 0 {
		fmt.Fprintln(s.Stdout, "no task worktrees")
		return nil
	}
	if integErr != nil {
		fmt.Fprintf(s.Stderr, "git-liza: %v: merged shows no\n", integErr)
	}
	tw := tabwriter.NewWriter(s.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tASSIGNEE\tWORKTREE\tBRANCH\tDIRTY\tMERGED\tLOCKED")
	for _, v := range views {
		status := string(v.Status)
		switch {
		case v.NoTask:
			status = "no task"
		case v.Archived:
			status += " (archived)"
		}
		dirty := yesNo(v.Dirty)
		if v.Worktree != "present" {
			dirty = "-"
		}
		merged := yesNo(v.Merged)
		if v.Worktree == "missing" && v.Branch == "" {
			merged = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, status, dash(v.AssignedTo), v.Worktree,
			dash(v.Branch), dirty, merged, dash(v.Locked))
	}
	return tw.Flush()
}

// pruneItem is one worktree prune looked at, and what it did.
type pruneItem struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type pruneReport struct {
	IntegrationBranch string      `json:"integration_branch"`
	Removed           []pruneItem `json:"removed"`
	Pruned            []pruneItem `json:"pruned"`
	Kept              []pruneItem `json:"kept"`
}

// mayClean lets the planner and the human operator remove worktrees: the
// roles that may release a task (contracts.OpRelease), less the code
// reviewer, whose release is of its own review only.
func (s *session) mayClean(verb string) error {
	if role, _ := contracts.ParseAgentID(s.agent); role != contracts.RoleHuman && role != contracts.RolePlanner {
		return contracts.Invalidf("%s (%s) may not %s task worktrees (allowed: human, planner)", s.agent, role, verb)
	}
	return contracts.Permit(s.agent, contracts.OpRelease)
}

// worktreePrune removes the worktrees nobody needs: those of finished,
// archived or unknown tasks that hold no uncommitted change and no commit
// the integration branch lacks, and git's records of worktrees whose
// directory is gone. Anything else is kept, with the reason.
func (s *session) worktreePrune(ctx context.Context) error {
	if err := s.mayClean("prune"); err != nil {
		return err
	}
	infos, err := worktree.List(ctx, s.repo)
	if err != nil {
		return err
	}
	ids := make([]string, len(infos))
	for i, w := range infos {
		ids[i] = w.ID
	}
	branch, tasks, _, err := s.worktreeBoard(ids, false)
	if err != nil {
		return err
	}
	integ, err := s.integrationRef(branch)
	if err != nil {
		return err
	}
	rep := pruneReport{IntegrationBranch: branch, Removed: []pruneItem{}, Pruned: []pruneItem{}, Kept: []pruneItem{}}
	keep := func(w worktree.Info, format string, a ...any) {
		rep.Kept = append(rep.Kept, pruneItem{ID: w.ID, Path: worktree.Rel(w.ID), Reason: fmt.Sprintf(format, a...)})
	}
	var gone []worktree.Info
	for _, w := range infos {
		t := tasks[w.ID]
		switch {
		case w.Locked != "":
			keep(w, "locked: %s", w.Locked)
		case contracts.ValidTaskID(w.ID) != nil:
			keep(w, "%q is not a task id", w.ID)
		case !w.Exists:
			gone = append(gone, w)
		case !t.orphan():
			keep(w, "%s", t.describe(w.ID))
		default:
			if reason, err := s.unsafeToRemove(ctx, w, integ); err != nil {
				return err
			} else if reason != "" {
				keep(w, "%s, but %s", t.describe(w.ID), reason)
				continue
			}
			if err := worktree.Remove(ctx, s.repo, w.ID, integ, false); err != nil {
				keep(w, "%s, but %v", t.describe(w.ID), err)
				continue
			}
			rep.Removed = append(rep.Removed, pruneItem{ID: w.ID, Path: worktree.Rel(w.ID),
				Reason: fmt.Sprintf("%s; branch %s deleted", t.describe(w.ID), worktree.Branch(w.ID))})
		}
	}
	if len(gone) > 0 {
		if err := worktree.Prune(ctx, s.repo); err != nil {
			return err
		}
		for _, w := range gone {
			reason := "directory gone"
			if t := tasks[w.ID]; t.orphan() {
				// The branch of a finished task goes too, when merged.
				if ok, err := worktree.BranchMerged(ctx, s.repo, w.ID, integ); err != nil {
					return err
				} else if ok {
					if err := worktree.Remove(ctx, s.repo, w.ID, integ, false); err != nil {
						return err
					}
					reason += fmt.Sprintf("; %s, branch %s deleted", t.describe(w.ID), worktree.Branch(w.ID))
				} else {
					reason += fmt.Sprintf("; branch %s kept: it has commits not on %s", worktree.Branch(w.ID), branch)
				}
			}
			rep.Pruned = append(rep.Pruned, pruneItem{ID: w.ID, Path: worktree.Rel(w.ID), Reason: reason})
		}
	}
	if s.json {
		return s.printJSON(rep)
	}
	if len(infos) == 0 {
		fmt.Fprintln(s.Stdout, "no task worktrees")
		return nil
	}
	for _, it := range rep.Removed {
		fmt.Fprintf(s.Stdout, "removed %s: %s\n", it.Path, it.Reason)
	}
	for _, it := range rep.Pruned {
		fmt.Fprintf(s.Stdout, "pruned %s: %s\n", it.Path, it.Reason)
	}
	for _, it := range rep.Kept {
		fmt.Fprintf(s.Stdout, "kept %s: %s\n", it.Path, it.Reason)
	}
	return nil
}

// unsafeToRemove says why removing a worktree would lose work ("" when it
// would not): uncommitted changes, commits of task/ID the integration
// branch lacks, or a checkout (another branch, a detached HEAD) at a commit
// the integration branch lacks.
func (s *session) unsafeToRemove(ctx context.Context, w worktree.Info, integ string) (string, error) {
	name := strings.TrimPrefix(integ, "refs/heads/")
	if w.Dirty {
		return "it has uncommitted changes", nil
	}
	if ok, err := worktree.BranchMerged(ctx, s.repo, w.ID, integ); err != nil {
		return "", err
	} else if !ok {
		return fmt.Sprintf("branch %s has commits not on %s", worktree.Branch(w.ID), name), nil
	}
	if w.Head != "" {
		if ok, err := s.repo.IsAncestor(ctx, w.Head, integ); err != nil {
			return "", err
		} else if !ok {
			return fmt.Sprintf("its checkout is at %s, which is not on %s", short(w.Head), name), nil
		}
	}
	return "", nil
}

// worktreeDelete removes the worktree and branch of a task that will not
// be worked on as it stands. The state is not written: a finished task's
// record does not change, and a BLOCKED task keeps its fields.
func (s *session) worktreeDelete(ctx context.Context, id string, force bool) error {
	if err := s.mayClean("delete"); err != nil {
		return err
	}
	var status contracts.Status
	var branch string
	if err := s.store.View(s.agent, func(tx *cas.Tx) error {
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
		return err
	}
	switch status {
	case contracts.Blocked, contracts.Abandoned, contracts.Superseded:
	default:
		return contracts.Invalidf("task %s is %s: worktree delete takes BLOCKED, ABANDONED or SUPERSEDED tasks", id, status)
	}
	integ, err := s.integrationRef(branch)
	if err != nil && !force {
		return err
	}
	info, err := worktree.Inspect(ctx, s.repo, id)
	if err != nil {
		return err
	}
	_, hasBranch, err := s.repo.ReadRef(worktree.BranchRef(id))
	if err != nil {
		return err
	}
	if !info.Exists && !info.Prunable && !hasBranch {
		return contracts.Invalidf("task %s has no worktree and no branch %s here", id, worktree.Branch(id))
	}
	if info.Locked != "" && !force {
		return contracts.Invalidf("worktree %s is locked (%s): pass --force to delete it anyway", worktree.Rel(id), info.Locked)
	}
	if !force && info.Head != "" && info.Branch != worktree.Branch(id) {
		if ok, err := s.repo.IsAncestor(ctx, info.Head, integ); err != nil {
			return err
		} else if !ok {
			return contracts.Invalidf("worktree %s is at %s, which is not on %s: pass --force to delete it", worktree.Rel(id), short(info.Head), branch)
		}
	}
	if err := worktree.Remove(ctx, s.repo, id, integ, force); err != nil {
		return err
	}
	if s.json {
		return s.printJSON(struct {
			ID              string           `json:"id"`
			Status          contracts.Status `json:"status"`
			Worktree        string           `json:"worktree"`
			WorktreeRemoved bool             `json:"worktree_removed"`
			Branch          string           `json:"branch"`
			BranchDeleted   bool             `json:"branch_deleted"`
		}{id, status, worktree.Rel(id), info.Exists || info.Prunable, worktree.Branch(id), hasBranch})
	}
	var what []string
	if info.Exists || info.Prunable {
		what = append(what, worktree.Rel(id))
	}
	if hasBranch {
		what = append(what, "branch "+worktree.Branch(id))
	}
	fmt.Fprintf(s.Stdout, "deleted %s of %s task %s\n", strings.Join(what, " and "), status, id)
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
