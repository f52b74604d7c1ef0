package worktree

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

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
// task id (agent empty), or for agent's review of it. Only its
// registration is serialised with the task worktrees' own registry
// commands; it is checked out after the lock is released, as a claim's
// worktree is (see Create). Killed in between, it leaves a locked
// registration of a dead process, which recovery removes.
func AddDetached(ctx context.Context, repo *refstore.Repo, path string, commit refstore.Hash, id, agent string) error {
	reason := mergeLock(id)
	if agent != "" {
		reason = reviewLock(id, agent)
	}
	if err := registerDetached(ctx, repo, path, commit, reason); err != nil {
		return err
	}
	if err := checkOut(ctx, repo, path); err != nil {
		if rerr := RemoveDetached(context.WithoutCancel(ctx), repo, path); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("check out %s: %w", path, err)
	}
	return nil
}

// registerDetached is the part of AddDetached done under the worktree
// commands' lock: git worktree add without a checkout.
func registerDetached(ctx context.Context, repo *refstore.Repo, path string, commit refstore.Hash, reason string) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_, err = repo.GitUnlocking(ctx, "worktree", "add", "--quiet", "--no-checkout", "--detach", "--lock", "--reason", reason, path, commit.String())
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
	return toTrash(repo, path)
}

// CheckedOut returns the checkout that has branch (a full ref name) checked
// out, or "". It only reads, and reads a registration being made or
// removed as far as it is: it waits for no worktree command (a merge asks
// it every time, and claims hold the lock while git registers theirs).
func CheckedOut(ctx context.Context, repo *refstore.Repo, branch string) (string, error) {
	return holder(repo, branch)
}

// Kept is the throwaway worktree a long-running process keeps for its
// merges' integration tests: made at the first test, then moved to each
// next merge's commit (git reset --hard and git clean) instead of being
// made and removed every time, which costs two git processes in place of
// a worktree add, a removal and two holds of the worktree commands' lock,
// and checks out only what changed since the last test. Close removes it.
// It is locked by its process like every throwaway worktree, so what a
// crash leaves is removed by the next command's Recover. A nil *Kept
// makes a new worktree for every test.
type Kept struct {
	mu   sync.Mutex
	path string
	// setupKey is the SetupKey of the setup that last worked in it, or "":
	// while the next merge's key is the same, what that setup installed
	// (ignored files: node_modules, a virtualenv) stays through the move,
	// and the setup does not run again.
	setupKey string
	// dropped is the path Drop asked to remove as it is given back.
	dropped atomic.Pointer[string]
}

// Drop asks that the worktree at path, which Checkout gave, be removed as
// it is given back, not kept for the next test: what the test left in it
// must not stay until then (it filled the disk, and the next test would
// wait for room). A new worktree is removed when given back anyway.
func (k *Kept) Drop(path string) {
	if k != nil {
		k.dropped.Store(&path)
	}
}

// release gives the kept worktree back, removing it when Drop asked to.
func (k *Kept) release(ctx context.Context, repo *refstore.Repo) func() {
	return func() {
		if p := k.dropped.Swap(nil); p != nil && *p == k.path {
			RemoveDetached(context.WithoutCancel(ctx), repo, k.path)
			k.path, k.setupKey = "", ""
		}
		k.mu.Unlock()
	}
}

// Checkout returns a worktree detached at commit for task id's test, and
// the function that gives it back. While another test holds the kept
// worktree, and for a nil Kept, it is a new one, removed when given back.
func (k *Kept) Checkout(ctx context.Context, repo *refstore.Repo, commit refstore.Hash, id string) (string, func(), error) {
	path, _, done, err := k.CheckoutPrepared(ctx, repo, commit, id, nil)
	return path, done, err
}

// CheckoutPrepared is Checkout, and readies the worktree with Prepare
// (prep's Dir is filled in) when prep is not nil: a new worktree in full,
// once; the kept one, when it moves to the next merge, only gets its
// copies of ignored files back (the move cleans them away with every
// other ignored file). The Prepared it returns is nil when nothing was
// readied.
func (k *Kept) CheckoutPrepared(ctx context.Context, repo *refstore.Repo, commit refstore.Hash, id string, prep *Prep) (string, *Prepared, func(), error) {
	ready := func(path string) (*Prepared, error) {
		if prep == nil {
			return nil, nil
		}
		p := *prep
		p.Dir = path
		return Prepare(ctx, repo, p)
	}
	if k == nil || !k.mu.TryLock() {
		path := MergePath(repo, id)
		if err := AddDetached(ctx, repo, path, commit, id, ""); err != nil {
			return "", nil, nil, err
		}
		done := func() { RemoveDetached(context.WithoutCancel(ctx), repo, path) }
		got, err := ready(path)
		if err != nil {
			done()
			return "", nil, nil, err
		}
		return path, got, done, nil
	}
	// What the setup of this commit would depend on: the setup script and
	// the lockfiles; "" when there is no setup script.
	key := ""
	if prep != nil {
		var err error
		if key, err = SetupKey(repo, prep.Source, commit); err != nil {
			key = "unreadable" // Prepare runs, and says what is wrong
		}
	}
	if k.path != "" {
		keep := key != "" && key == k.setupKey
		if moveTo(ctx, k.path, commit, keep) == nil {
			var got *Prepared
			if prep != nil && (keep || key == "") {
				// Set up for the same lockfiles already, or no setup to
				// run: the copies come back, quietly.
				p := *prep
				p.Dir, p.Log = k.path, nil
				got = &Prepared{}
				if err := copyIncluded(ctx, repo, p, got); err != nil {
					k.mu.Unlock()
					return "", nil, nil, err
				}
			} else if prep != nil {
				k.setupKey = ""
				p := *prep
				p.Dir = k.path
				var err error
				if got, err = Prepare(ctx, repo, p); err != nil {
					k.mu.Unlock()
					return "", nil, nil, err
				}
				if got.Setup != nil {
					k.setupKey = key
				}
			}
			return k.path, got, k.release(ctx, repo), nil
		}
		// Removed by hand, or half moved by a cancelled git: start again.
		RemoveDetached(context.WithoutCancel(ctx), repo, k.path)
		k.path = ""
	}
	path := MergePath(repo, "kept")
	if err := AddDetached(ctx, repo, path, commit, "", ""); err != nil {
		k.mu.Unlock()
		return "", nil, nil, err
	}
	got, err := ready(path)
	if err != nil {
		RemoveDetached(context.WithoutCancel(ctx), repo, path)
		k.mu.Unlock()
		return "", nil, nil, err
	}
	k.path, k.setupKey = path, ""
	if got != nil && got.Setup != nil {
		k.setupKey = key
	}
	return path, got, k.release(ctx, repo), nil
}

// moveTo makes the worktree at path hold exactly commit, detached: what
// the last test changed or left there goes, ignored files included unless
// keepIgnored (what a setup installed, kept while its lockfiles are the
// same).
func moveTo(ctx context.Context, path string, commit refstore.Hash, keepIgnored bool) error {
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		return err
	}
	if _, err := refstore.RunIn(ctx, path, "reset", "--quiet", "--hard", commit.String()); err != nil {
		return err
	}
	clean := "-ffdxq"
	if keepIgnored {
		clean = "-ffdq"
	}
	_, err := refstore.RunIn(ctx, path, "clean", clean)
	return err
}

// Close removes the kept worktree, if any.
func (k *Kept) Close(ctx context.Context, repo *refstore.Repo) error {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.path == "" {
		return nil
	}
	err := RemoveDetached(ctx, repo, k.path)
	k.path = ""
	return err
}
