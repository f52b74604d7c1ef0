package worktree

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// MergePath is a new place for a merge's integration test of task id: a
// throwaway worktree under the common directory, where a crash leaves it
// findable.
func MergePath(repo *refstore.Repo, id string) string {
	return filepath.Join(repo.CommonDir, "liza", "merge", fmt.Sprintf("%s-%d-%x", id, os.Getpid(), rand.Uint32()))
}

// AddDetached checks out commit in a throwaway worktree at path, locked by
// a lock that names this process so that the worktree is removed as a
// leftover once the process is gone: for a merge's integration test of
// task id (agent empty), or for agent's review of it. It is serialised
// with the task worktrees' own registry commands.
func AddDetached(ctx context.Context, repo *refstore.Repo, path string, commit refstore.Hash, id, agent string) error {
	reason := mergeLock(id)
	if agent != "" {
		reason = reviewLock(id, agent)
	}
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_, err = repo.GitUnlocking(ctx, "worktree", "add", "--quiet", "--detach", "--lock", "--reason", reason, path, commit.String())
	return err
}

// RemoveDetached removes a worktree AddDetached made, whatever it holds.
func RemoveDetached(ctx context.Context, repo *refstore.Repo, path string) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := scan(repo)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.path != "" && (e.path == path || e.path == realPath(path)) {
			return discard(repo, e)
		}
	}
	if err := toTrash(repo, path); err != nil {
		return err
	}
	emptyTrash(repo)
	return nil
}

// CheckedOut returns the checkout that has branch (a full ref name) checked
// out, or "".
func CheckedOut(ctx context.Context, repo *refstore.Repo, branch string) (string, error) {
	if root := repo.MainWorkTree(); root != "" {
		if b, err := os.ReadFile(filepath.Join(repo.CommonDir, "HEAD")); err == nil && strings.TrimSpace(string(b)) == "ref: "+branch {
			return root, nil
		}
	}
	unlock, err := lockRepo(repo)
	if err != nil {
		return "", err
	}
	defer unlock()
	entries, err := scan(repo)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.path != "" && e.head == "ref: "+branch {
			return e.path, nil
		}
	}
	return "", nil
}
