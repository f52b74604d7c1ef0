package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

// Remove deletes a task's worktree and its branch. Without force it refuses
// a worktree with uncommitted changes, and a branch whose commits are not
// on the integration branch (pass the integration branch's ref; empty skips
// that check).
func Remove(ctx context.Context, repo *refstore.Repo, id, integration string, force bool) error {
	info, err := Inspect(ctx, repo, id)
	if err != nil {
		return err
	}
	if !force {
		if info.Dirty {
			return contracts.Invalidf("worktree %s has uncommitted changes: commit them, or pass --force to discard them", Rel(id))
		}
		if pid, ok := workingIn(info.Path); ok {
			return contracts.Invalidf("process %d works in %s: it is removed once nobody does (git liza worktree prune)", pid, Rel(id))
		}
		if integration != "" {
			merged, err := BranchMerged(ctx, repo, id, integration)
			if err != nil {
				return err
			}
			if !merged {
				return contracts.Invalidf("branch %s has commits that are not on %s: pass --force to delete them", Branch(id), strings.TrimPrefix(integration, "refs/heads/"))
			}
		}
	}
	return drop(ctx, repo, id, true)
}

// workingIn finds a process, other than this one and the git that started
// it, whose working directory is in dir: an agent's session still running
// in a task's worktree after its task moved on (submitted, then merged by
// a quick reviewer) would lose its directory under it.
func workingIn(dir string) (int, bool) {
	if dir == "" {
		return 0, false
	}
	pids, _ := proc.Using(dir)
	for _, pid := range pids {
		if pid != os.Getpid() && pid != os.Getppid() {
			return pid, true
		}
	}
	return 0, false
}

// Undo removes the worktree Create made for a claim that did not commit,
// whatever it holds (nobody was told of it), and the branch too when
// Create made it.
func Undo(ctx context.Context, repo *refstore.Repo, id string, branch bool) error {
	return drop(ctx, repo, id, branch)
}

// drop removes task id's worktree, and its branch when branch is set. A
// branch checked out somewhere else stays, as git branch -D would keep it.
// The branch is deleted with the worktree commands' lock held, with git
// update-ref (which unlike git branch reads no worktree's registration):
// let go before, a claim of the same task here could register a worktree
// on the branch in between and have it deleted under it (see
// TestUndoRacesAClaim).
func drop(ctx context.Context, repo *refstore.Repo, id string, branch bool) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	for seen := map[string]bool{}; ; {
		e, err := find(repo, id)
		if err == nil && e != nil && !seen[e.admin] {
			seen[e.admin] = true
			err = discard(repo, e)
		} else if err == nil {
			break // none left, or one discard left in place
		}
		if err != nil {
			return err
		}
	}
	if !branch {
		return nil
	}
	at, err := holder(repo, BranchRef(id))
	if err != nil {
		return err
	}
	if at != "" {
		return contracts.Invalidf("branch %s is checked out in %s: it stays", Branch(id), at)
	}
	proc.CrashPoint("worktree:branch")
	if tip, ok, err := repo.ReadRef(BranchRef(id)); err != nil {
		return err
	} else if ok {
		if _, err := repo.GitUnlocking(ctx, "update-ref", "-d", BranchRef(id), tip.String()); err != nil {
			return err
		}
	}
	return nil
}

// holder is the checkout, the main one or a registered one, that has
// branch (a full ref name) checked out, or "". It reads the HEAD of each
// registration (and the gitdir of one at branch), not the whole of each:
// merges ask it twice with the review queue's worktrees registered.
func holder(repo *refstore.Repo, branch string) (string, error) {
	if root := repo.MainWorkTree(); root != "" && headIs(repo, branch) {
		return root, nil
	}
	dir, names, err := adminNames(repo)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		admin := filepath.Join(dir, n)
		if b, ok := readSmall(filepath.Join(admin, "HEAD")); !ok || strings.TrimSpace(string(b)) != "ref: "+branch {
			continue
		}
		if g, ok := gitdirIn(admin, "gitdir"); ok {
			return filepath.Dir(g), nil
		}
	}
	return "", nil
}

// headIs reports whether the main checkout's HEAD is branch (a full ref
// name).
func headIs(repo *refstore.Repo, branch string) bool {
	b, err := os.ReadFile(filepath.Join(repo.CommonDir, "HEAD"))
	return err == nil && strings.TrimSpace(string(b)) == "ref: "+branch
}

// BranchMerged reports whether task/<id> has no commit that integration
// lacks (true when the branch does not exist).
func BranchMerged(ctx context.Context, repo *refstore.Repo, id, integration string) (bool, error) {
	tip, ok, err := repo.ReadRef(BranchRef(id))
	if err != nil || !ok {
		return true, err
	}
	return repo.IsAncestor(ctx, tip.String(), integration)
}

// Prune forgets the registrations of task worktrees whose directory is
// gone (as git worktree prune would, for git-liza's worktrees only),
// unless locked or detached at a commit that only the registration keeps.
// It returns the tasks whose worktree it forgot.
func Prune(ctx context.Context, repo *refstore.Repo) ([]string, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	entries, err := scan(repo)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.kind != taskTree || e.path == "" || e.locked || (e.exists && e.dotGit) || !detachedSafe(ctx, repo, e) {
			continue
		}
		if err := forget(repo, e, e.exists && !onlyGitFile(e.path)); err != nil {
			return ids, err
		}
		ids = append(ids, e.id)
	}
	return ids, nil
}
