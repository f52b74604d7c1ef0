package refstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ClearWorktreeLocks removes the stale locks of git's in the own git
// directory of the linked checkout at dir (index.lock, HEAD.lock and the
// like): what a git of an agent's session leaves when the session is
// killed (its timebox, a kill -9, an out-of-memory kill), after which
// every git add or commit in the checkout fails ("index.lock: File
// exists") and the next sessions crash until the task is blocked. The
// rule is StaleLockAge's, narrowed to the checkout: no git process works
// in it, and the lock is older than StaleLockAge. A younger one is waited
// for until it is that old, at most StaleLockAge. It returns a line for
// each lock it removed.
func (r *Repo) ClearWorktreeLocks(ctx context.Context, dir string) ([]string, error) {
	gitDir, err := readGitFile(filepath.Join(dir, ".git"))
	if err != nil {
		return nil, nil // not a linked checkout (or none): nothing of its own
	}
	// Only the checkout's own registration in this repository's
	// worktrees/, which names it back: its .git file is the agent's to
	// write, and could name another checkout's.
	if gitDir, err = filepath.EvalSymlinks(gitDir); err != nil {
		return nil, nil
	}
	common, err := filepath.EvalSymlinks(filepath.Join(r.CommonDir, "worktrees"))
	if err != nil || filepath.Dir(gitDir) != common {
		return nil, nil
	}
	back, err := ReadFile(filepath.Join(gitDir, "gitdir"))
	if err != nil {
		return nil, nil
	}
	mine, err1 := filepath.EvalSymlinks(filepath.Join(dir, ".git"))
	named, err2 := filepath.EvalSymlinks(absFrom(gitDir, strings.TrimSpace(string(back))))
	if err1 != nil || err2 != nil || mine != named {
		return nil, nil
	}
	locks, err := filepath.Glob(filepath.Join(gitDir, "*.lock"))
	if err != nil || len(locks) == 0 {
		return nil, err
	}
	dirs := []string{dir, gitDir}
	var removed []string
	for _, path := range locks {
		v, _, age, err := judgeLockIn(path, dirs, true)
		if err == nil && v == lockYoung {
			select {
			case <-ctx.Done():
				return removed, ctx.Err()
			case <-time.After(StaleLockAge - age + 100*time.Millisecond):
			}
			v, _, age, err = judgeLockIn(path, dirs, true)
		}
		if err != nil && !os.IsNotExist(err) {
			return removed, err
		}
		if v == lockRemoved {
			removed = append(removed, removedLock(path, age))
		}
	}
	return removed, nil
}
