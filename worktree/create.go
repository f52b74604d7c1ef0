package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

// Create makes the worktree of task id for a claim in progress: on a new
// branch task/<id> at base, or on the existing branch when there is one (a
// branch that holds nothing base lacks is moved to base first). It is
// locked until Unlock, by a lock that names this process. A worktree of
// id that a live process is creating comes back as ErrBusy; one left by a
// dead process is for Recover. A registration whose directory is gone is
// forgotten first (what it held is gone already), and notice says so.
// madeBranch says whether the branch is new.
//
// Only the registration is made under the worktree commands' lock; the
// files are checked out once it is released (on a real repository that
// takes seconds, which every other claim, review and merge would wait
// through). Until then the registration has no index: if this process
// dies, Recover takes it for unfinished and removes it.
func Create(ctx context.Context, repo *refstore.Repo, id string, base refstore.Hash, agent string, notice func(string)) (madeBranch bool, err error) {
	path, err := Path(repo, id)
	if err != nil {
		return false, err
	}
	if err := ensureExcluded(repo); err != nil {
		return false, err
	}
	if madeBranch, err = register(ctx, repo, id, path, base, agent, notice); err != nil {
		return false, err
	}
	if err := checkOut(ctx, repo, path); err != nil {
		if derr := drop(context.WithoutCancel(ctx), repo, id, madeBranch); derr != nil {
			err = errors.Join(err, derr)
		}
		return false, fmt.Errorf("check out %s: %w", Rel(id), err)
	}
	return madeBranch, nil
}

// checkOut fills a worktree that git registered without a checkout: the
// index and the files of its HEAD, then the post-checkout hook, as git
// worktree add would run it.
func checkOut(ctx context.Context, repo *refstore.Repo, path string) error {
	if _, err := refstore.RunIn(ctx, path, "reset", "--quiet", "--hard"); err != nil {
		return err
	}
	if !repo.HasHook("post-checkout") {
		return nil
	}
	head, err := refstore.RunIn(ctx, path, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	_, err = refstore.RunIn(ctx, path, "hook", "run", "--ignore-missing", "post-checkout", "--", repo.NullID(), strings.TrimSpace(string(head)), "1")
	return err
}

// register is the part of Create done under the worktree commands' lock:
// git worktree add without a checkout.
func register(ctx context.Context, repo *refstore.Repo, id, path string, base refstore.Hash, agent string, notice func(string)) (madeBranch bool, err error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return false, err
	}
	defer unlock()
	// A registration of the path whose directory is gone is forgotten
	// when that loses nothing; any other is another claim's (or a dead
	// one's, settling).
	clear := func(e *entry) error {
		if owner, ok := parseLock(e.reason); ok && e.locked && owner.ended() {
			return ErrSettling
		}
		if e.locked || e.exists || !e.headOK() || !detachedSafe(ctx, repo, e) {
			return ErrBusy
		}
		if err := discard(repo, e); err != nil {
			return err
		}
		if notice != nil {
			notice(fmt.Sprintf("forgot the registration of %s: its directory is gone", Rel(id)))
		}
		return nil
	}
	e, err := find(repo, id)
	if err != nil {
		return false, err
	}
	if e != nil {
		if err := clear(e); err != nil {
			return false, err
		}
	}
	// Not a worktree of ours, yet something is there: git would refuse to
	// check out into it after creating the branch. Say what is in the
	// way, and leave nothing behind.
	if err := inTheWay(path, Rel(id)); err != nil {
		return false, err
	}
	tip, hasBranch, err := repo.ReadRef(BranchRef(id))
	if err != nil {
		return false, err
	}
	args := []string{"worktree", "add", "--quiet", "--no-checkout", "--lock", "--reason", claimLock(id, agent), path}
	switch {
	case !hasBranch:
		args = append(args, "-b", Branch(id), base.String())
	case tip != base && !base.IsZero():
		// A branch a dead claim made, or one whose work is all on base:
		// it starts from base, as a new one would.
		if behind, err := repo.IsAncestor(ctx, tip.String(), base.String()); err != nil {
			return false, err
		} else if behind {
			args = append(args, "-B", Branch(id), base.String())
			break
		}
		args = append(args, Branch(id))
	default:
		args = append(args, Branch(id))
	}
	// worktree add writes .git/config.lock when it records the worktree's
	// branch; concurrent claims here may collide on it, so retry briefly.
	scanned := false
	for try := 0; ; try++ {
		_, err = repo.GitUnlocking(ctx, args...)
		var ge *refstore.GitError
		if err == nil || !errors.As(err, &ge) {
			return !hasBranch, err
		}
		switch {
		case strings.Contains(ge.Stderr, "already exists"), strings.Contains(ge.Stderr, "already checked out"),
			strings.Contains(ge.Stderr, "is already used by worktree"), strings.Contains(ge.Stderr, "is a missing but"):
			// A registration find does not see (moved into place, its
			// directory gone), another claim's, or the git of a claim
			// killed a moment ago, which goes on alone.
			other, ferr := findAll(repo, id)
			if ferr != nil {
				return false, ferr
			}
			if other != nil && e == nil && !scanned {
				scanned = true
				if err := clear(other); err != nil {
					return false, err
				}
				if now, ok, _ := repo.ReadRef(BranchRef(id)); !hasBranch && ok && now == base {
					// git made the branch before it refused the path.
					args = append(args[:len(args)-3], Branch(id))
				}
				continue
			}
			if other != nil {
				if owner, ok := parseLock(other.reason); ok && owner.ended() {
					return false, ErrSettling
				}
			} else if pids, _ := proc.GitIn([]string{path}); len(pids) > 0 {
				return false, ErrSettling
			}
			return false, ErrBusy
		case strings.Contains(ge.Stderr, ".lock") && try < 20:
			time.Sleep(time.Duration(5+try*5) * time.Millisecond)
			continue
		}
		return false, err
	}
}

// inTheWay refuses a path where a worktree is to be made that holds
// something already (exit 3): anything but an empty directory.
func inTheWay(path, name string) error {
	fi, err := os.Lstat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		names, _ := f.Readdirnames(1)
		f.Close()
		if len(names) == 0 {
			return nil
		}
	}
	return contracts.Errorf(contracts.CodeGit, "%s is in the way: it exists and is not a worktree of this repository; move it away or remove it, then claim again", name)
}

// detachedSafe reports whether forgetting a registration loses no commit:
// its HEAD is a branch, or a commit on the task's branch.
func detachedSafe(ctx context.Context, repo *refstore.Repo, e *entry) bool {
	if e.branch() != "" {
		return true
	}
	tip, ok, err := repo.ReadRef(BranchRef(e.id))
	if err != nil || !ok {
		return false
	}
	in, err := repo.IsAncestor(ctx, e.head, tip.String())
	return err == nil && in
}
