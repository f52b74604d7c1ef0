package ops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// ReviewCheckout makes the reviewer's own checkout of the commit under
// review of task (worktree.ReviewPath for agent and task: a detached
// worktree under the main work tree's worktree.Dir) and returns its path.
// A checkout already there at that commit is kept; one at another commit,
// or left half-made by a crash, is made again. In remote mode the commit
// is fetched first. A reviewer never reads a coder's worktree: it may be
// on another machine, or hold later work.
func (s *Service) ReviewCheckout(ctx context.Context, agent, task string) (string, error) {
	if err := contracts.ValidTaskID(task); err != nil {
		return "", err
	}
	if got, err := contracts.ParseAgentID(agent); err != nil || got != contracts.RoleReviewer {
		return "", contracts.Invalidf("a review checkout is for a code-reviewer id, not %q", agent)
	}
	if s.Repo.MainWorkTree() == "" {
		return "", contracts.Invalidf("review checkouts need a repository with a work tree")
	}
	var commitID string
	if err := s.view(ctx, func(tx *cas.Tx) error {
		t, err := tx.MustTask(task)
		if err != nil {
			return err
		}
		commitID = t.ReviewCommit
		return nil
	}); err != nil {
		return "", err
	}
	commit, err := reviewCommit(task, commitID)
	if err != nil {
		return "", err
	}
	return s.reviewCheckout(ctx, agent, task, commit)
}

// reviewCommit is the commit to review of task, recorded as commitID.
func reviewCommit(task, commitID string) (refstore.Hash, error) {
	commit, ok := refstore.ParseHash(commitID)
	if !ok {
		return refstore.Hash{}, contracts.Invalidf("task %s has no commit to review", task)
	}
	return commit, nil
}

// reviewCheckout is ReviewCheckout once the arguments are checked and the
// commit under review is known.
func (s *Service) reviewCheckout(ctx context.Context, agent, task string, commit refstore.Hash) (string, error) {
	commitID := commit.String()
	if !s.Repo.HasObject(commit) && s.remote() != "" {
		if _, err := s.Repo.Fetch(ctx, s.remote(), worktree.BranchRef(task)); err != nil {
			return "", fmt.Errorf("fetch the commit of %s to review: %w", task, err)
		}
	}
	if !s.Repo.HasObject(commit) {
		return "", contracts.Invalidf("the commit of %s to review, %s, is not in this repository", task, short(commitID))
	}
	dir := worktree.ReviewPath(s.Repo, agent, task)
	if detachedAt(dir, commit) {
		return dir, nil
	}
	// An old checkout in the way goes first. Where there is none (the
	// usual case: a review's checkout goes with its session), the removal,
	// which waits for the worktrees' lock and reads every registration, is
	// done only if git refuses the new one (a registration whose directory
	// went).
	_, statErr := os.Lstat(dir)
	removed := errors.Is(statErr, fs.ErrNotExist)
	if !removed {
		if err := worktree.RemoveDetached(ctx, s.Repo, dir); err != nil {
			return "", fmt.Errorf("remove the old review checkout %s: %w", dir, err)
		}
	}
	// Like the task worktrees, it stays out of the main checkout's status.
	if err := worktree.Exclude(s.Repo, "/"+worktree.Dir+"/"); err != nil {
		return "", err
	}
	err := worktree.AddDetached(ctx, s.Repo, dir, commit, task, agent)
	if err != nil && removed {
		if rerr := worktree.RemoveDetached(ctx, s.Repo, dir); rerr != nil {
			return "", fmt.Errorf("remove the old review checkout %s: %w", dir, rerr)
		}
		err = worktree.AddDetached(ctx, s.Repo, dir, commit, task, agent)
	}
	if err != nil {
		return "", fmt.Errorf("check out %s to review: %w", short(commitID), err)
	}
	// A new checkout gets the ignored files and the setup that the
	// integration branch's .worktreeinclude and setup script ask for (not
	// the commit under review's: its coder wrote them). One that fails to
	// be readied goes, so that the next call makes it again.
	err = func() error {
		source, err := s.includeSource(ctx)
		if err != nil {
			return err
		}
		_, err = s.prepareNew(ctx, worktree.KindReview, task, source, agent, s.notice)
		return err
	}()
	if err != nil {
		if rerr := worktree.RemoveDetached(context.WithoutCancel(ctx), s.Repo, dir); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return "", err
	}
	return dir, nil
}

// detachedAt reports whether dir is a checkout of its own whose HEAD is
// commit, detached.
func detachedAt(dir string, commit refstore.Hash) bool {
	gd, err := refstore.CheckoutGitDir(dir)
	if err != nil {
		return false
	}
	head, err := os.ReadFile(filepath.Join(gd, "HEAD"))
	return err == nil && strings.TrimSpace(string(head)) == commit.String()
}
