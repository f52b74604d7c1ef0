package commands

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

func (e *Env) submitCmd() *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "submit COMMIT (default: the tip of task/ID) for review",
		ArgsUsage: "ID [COMMIT]",
		Action: e.action(1, 2, "submit ID [COMMIT]", func(ctx context.Context, s *session, a []string) error {
			rev := ""
			if len(a) == 2 {
				rev = a[1]
			}
			return s.submit(ctx, a[0], rev)
		}),
	}
}

// submit checks the submission against git (on the task branch, descended
// from the base, clean worktree, within the task's paths and size limits),
// then records READY_FOR_REVIEW with the full commit id.
func (s *session) submit(ctx context.Context, id, rev string) error {
	if err := contracts.ValidTaskID(id); err != nil {
		return err
	}
	if err := contracts.Permit(s.agent, contracts.OpSubmit); err != nil {
		return err
	}
	var t *contracts.Task
	if err := s.store.View(s.agent, func(tx *cas.Tx) error {
		var err error
		t, err = tx.MustTask(id)
		if err != nil {
			return err
		}
		return checkSubmitter(t, s.agent)
	}); err != nil {
		return err
	}
	commit, err := s.submission(ctx, t, rev)
	if err != nil {
		return err
	}
	if err := s.publishBranch(ctx, id); err != nil {
		return err
	}
	res, err := s.update(ctx, cas.Op{Name: contracts.OpSubmit, Apply: func(tx *cas.Tx) (any, error) {
		cur, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if err := checkSubmitter(cur, s.agent); err != nil {
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
		cur.History = append(cur.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "submitted", Agent: s.agent,
			From: string(contracts.Claimed), To: string(contracts.ReadyForReview), Commit: cur.ReviewCommit})
		tx.PutTask(cur)
		if err := setAgent(tx, s.agent, contracts.RoleCoder, "WAITING", id, cur.LeaseExpires); err != nil {
			return nil, err
		}
		tx.Describe(fmt.Sprintf("submit %s (%s)", id, s.agent), id)
		return map[string]string{"id": id, "review_commit": cur.ReviewCommit}, nil
	}})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(map[string]any{"id": id, "status": contracts.ReadyForReview, "review_commit": commit.String(), "base_commit": t.BaseCommit, "commit": res.Commit.String(), "replayed": res.Replayed})
	}
	fmt.Fprintf(s.Stdout, "%s submitted for review at %s (%s..%s)\n", id, short(commit.String()), short(t.BaseCommit), short(commit.String()))
	return nil
}

// publishBranch pushes task/ID in remote mode, so that a reviewer on
// another machine can fetch the commit it reviews. The remote's branch must
// be an ancestor of ours: work on a task branch only moves forward.
func (s *session) publishBranch(ctx context.Context, id string) error {
	r := s.remote()
	if r == "" {
		return nil
	}
	ref := worktree.BranchRef(id)
	local, ok, err := s.repo.ReadRef(ref)
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
		if ff, err := s.repo.IsAncestor(ctx, remote.String(), local.String()); err != nil {
			return err
		} else if !ff {
			return contracts.Invalidf("%s on %s has commits that %s lacks: merge them first", worktree.Branch(id), r, worktree.Branch(id))
		}
	}
	err = s.repo.Push(ctx, r, refstore.RefUpdate{Name: ref, Old: remote, New: local})
	if errors.Is(err, refstore.ErrStale) {
		return contracts.Errorf(contracts.CodeContention, "%s moved on %s while submitting; submit again", worktree.Branch(id), r)
	}
	return err
}

func checkSubmitter(t *contracts.Task, agent string) error {
	if t.Status != contracts.Claimed {
		return contracts.Invalidf("task %s is %s, not CLAIMED", t.ID, t.Status)
	}
	if t.AssignedTo != agent {
		return contracts.Invalidf("task %s is assigned to %s, not %s", t.ID, t.AssignedTo, agent)
	}
	return nil
}

// submission resolves and checks the commit a coder submits.
func (s *session) submission(ctx context.Context, t *contracts.Task, rev string) (refstore.Hash, error) {
	branchTip, hasBranch, err := s.repo.ReadRef(worktree.BranchRef(t.ID))
	if err != nil {
		return refstore.Hash{}, err
	}
	var commit refstore.Hash
	if rev == "" {
		if !hasBranch {
			return commit, contracts.Invalidf("there is no branch %s: name the commit to submit", worktree.Branch(t.ID))
		}
		commit = branchTip
	} else if commit, err = s.repo.ResolveCommit(ctx, rev); err != nil {
		return commit, err
	}
	if hasBranch {
		on, err := s.repo.IsAncestor(ctx, commit.String(), branchTip.String())
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
	if desc, err := s.repo.IsAncestor(ctx, base.String(), commit.String()); err != nil {
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
	changes, err := s.repo.DiffFiles(ctx, base, commit)
	if err != nil {
		return commit, err
	}
	return commit, checkScope(t, changes)
}

// checkScope enforces the task's owned paths and size limits on a change.
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
	if t.MaxFiles > 0 && len(changes) > t.MaxFiles {
		return contracts.Invalidf("the change touches %d files; task %s allows %d", len(changes), t.ID, t.MaxFiles)
	}
	if t.MaxLOC > 0 && loc > t.MaxLOC {
		return contracts.Invalidf("the change adds and removes %d lines; task %s allows %d", loc, t.ID, t.MaxLOC)
	}
	return nil
}

// taskCheckout is the absolute path of a task's recorded worktree when it
// exists on this machine.
func (s *session) taskCheckout(t *contracts.Task) string {
	if t.Worktree == "" {
		return ""
	}
	dir := t.Worktree
	if !filepath.IsAbs(dir) {
		root := s.repo.MainWorkTree()
		if root == "" {
			return ""
		}
		dir = filepath.Join(root, dir)
	}
	if ok, _ := isDir(dir); !ok {
		return ""
	}
	return dir
}
