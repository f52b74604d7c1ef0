package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

// Recovery is what Recover needs to know from the blackboard.
type Recovery struct {
	// Holds reports whether the board records .worktrees/ID as the
	// worktree of task ID, not finished: a claim of it committed. When nil,
	// every task worktree counts as held.
	Holds func(id string) (bool, error)
	// Integration is the integration branch as a full ref, or "" when
	// unknown: a task branch whose tip is on it holds no work of its own.
	Integration func() (string, error)
	// Reviewing reports whether the board records agent as holding the
	// review of task: a reviewer's checkout (AGENT/ID under a review
	// area) is kept while it does, whoever made it, and is a leftover once
	// it does not and no live process of git-liza's owns it. When nil, a
	// reviewer's checkout is judged by its owner alone.
	Reviewing func(agent, task string) (bool, error)
	// Routine reports whether the end of agent's review of task was
	// routine (the acting agent ends its own review, or the review ended
	// with that reviewer's verdict): its checkout, once not held, is
	// removed without a Repair, since nothing was repaired. When nil,
	// every removal is reported.
	Routine func(agent, task string) bool
}

// Repair is one leftover of a dead process that Recover repaired, or (Fix
// set) found and left because touching it could lose work or disturb a
// process that may be running.
type Repair struct {
	Path string `json:"path"`
	ID   string `json:"id,omitempty"`
	// What says what was done, or what is wrong.
	What string `json:"what"`
	// Fix is the command that repairs it, when Recover would not.
	Fix string `json:"fix,omitempty"`
}

func (r Repair) String() string {
	if r.Fix == "" {
		return r.What
	}
	return r.What + ": " + r.Fix
}

// Recover repairs what killed processes left in the worktree registry,
// under the same lock as every other worktree command here:
//   - a registration whose commondir is empty (git dies on every worktree
//     command, on fsck and gc, whoever's worktree it is): its content is
//     always "../..", so it is written;
//   - a worktree of git-liza's (found by where it lies, or by its lock)
//     whose owner process is gone (see owner.go):
//     a claim's that git did not finish making is removed;
//     a claim's that committed (Holds) is unlocked, as the claim would have;
//     a claim's that did not commit is removed with its branch when
//     neither holds anything (clean, the branch's tip on the integration
//     branch), else unlocked, and the next claim of the task takes it on;
//     a throwaway one (a merge's test, a reviewer's checkout) is removed
//     whatever it holds: git-liza made it to be discarded;
//   - a registration of git-liza's that a killed removal left half
//     deleted (no gitdir, or HEAD gone) is forgotten;
//   - throwaway worktrees of an earlier git-liza ($TMPDIR/liza-merge-*,
//     unlocked review checkouts) that no process works in;
//   - directories under the throwaway areas that no worktree is registered
//     at, and what a killed removal left in the trash.
//
// A registration git-liza did not make is never removed: when its HEAD
// is unset (git fsck and gc fail), the repair comes back with Fix set.
func Recover(ctx context.Context, repo *refstore.Repo, rec Recovery) ([]Repair, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return recoverLocked(ctx, repo, rec)
}

// RecoverWhenFree is Recover when nobody holds the worktree commands' lock
// now; when another worktree command does, it does nothing (ran is false)
// and leaves the recovery to a later command. A team's claims, reviews and
// merges run it first: in a busy team, where the lock is rarely free, each
// would otherwise queue behind the others' checkouts to find, nearly
// always, nothing to repair.
func RecoverWhenFree(ctx context.Context, repo *refstore.Repo, rec Recovery) (repairs []Repair, ran bool, err error) {
	unlock, ok, err := repo.TryFlock(lockName)
	if err != nil || !ok {
		return nil, false, err
	}
	defer emptyTrash(repo)
	defer unlock()
	repairs, err = recoverLocked(ctx, repo, rec)
	return repairs, true, err
}

func recoverLocked(ctx context.Context, repo *refstore.Repo, rec Recovery) ([]Repair, error) {
	entries, err := scan(repo)
	if err != nil {
		return nil, err
	}
	var out []Repair
	if leftByKilled(repo) && emptyTrash(repo) == nil {
		out = append(out, Repair{Path: displayPath(repo, trashDir(repo)), What: fmt.Sprintf("emptied %s: what a killed removal had set aside", displayPath(repo, trashDir(repo)))})
	}
	add := func(e *entry, fix, format string, a ...any) {
		out = append(out, Repair{Path: e.display(repo), ID: e.id, What: fmt.Sprintf(format, a...), Fix: fix})
	}
	registered := map[string]bool{}
	resolve := resolver{}
	for _, e := range entries {
		if e.commondirEmpty {
			if err := os.WriteFile(filepath.Join(e.admin, "commondir"), []byte("../..\n"), 0o644); err != nil {
				return out, err
			}
			e.commondir = "../.."
			out = append(out, Repair{Path: displayPath(repo, filepath.Join(e.admin, "commondir")), ID: e.id,
				What: fmt.Sprintf("repaired %s: a killed git worktree add left it empty, which stops every git worktree command", displayPath(repo, filepath.Join(e.admin, "commondir")))})
		}
		done, err := recoverEntry(ctx, repo, rec, e, add)
		if err != nil {
			return out, err
		}
		if !done && e.path != "" {
			registered[e.path] = true
			registered[resolve.real(e.path)] = true
		}
	}
	stray, err := strays(repo, registered)
	if err != nil {
		return out, err
	}
	for _, p := range stray {
		if err := removeAll(p); err != nil {
			return out, err
		}
		out = append(out, Repair{Path: displayPath(repo, p), What: fmt.Sprintf("removed %s: a throwaway directory no worktree is registered at", displayPath(repo, p))})
	}
	return out, nil
}

// recoverEntry repairs one registration, and reports whether it removed it.
func recoverEntry(ctx context.Context, repo *refstore.Repo, rec Recovery, e *entry, add func(*entry, string, string, ...any)) (bool, error) {
	return recoverOne(ctx, repo, rec, e, add, false)
}

// recoverOne is recoverEntry; settled says that no process works in the
// registration any more and that it was read again since.
func recoverOne(ctx context.Context, repo *refstore.Repo, rec Recovery, e *entry, add func(*entry, string, string, ...any), settled bool) (bool, error) {
	// Before acting on a leftover: a process that still works in it (the
	// git a dead claim started, still checking out; a test or an agent
	// that a dead merge or supervisor left running) keeps it for the next
	// command; once none does, what it finished is read again.
	again := func() (bool, error) {
		if busy(e) {
			return false, nil
		}
		if _, err := os.Stat(e.admin); err != nil {
			return true, nil
		}
		*e = *read(areasOf(repo), e.admin)
		return recoverOne(ctx, repo, rec, e, add, true)
	}
	owner, ours := parseLock(e.reason)
	if bare(e) && old(e.admin) {
		// git worktree add killed right after it made the directory, or
		// while it wrote the lock: nothing in it to lose.
		os.Remove(filepath.Join(e.admin, "locked"))
		if os.Remove(e.admin) == nil {
			add(e, "", "removed %s: an empty registration that a killed git worktree add left", displayPath(repo, e.admin))
		}
		return true, nil
	}
	if e.kind == foreign {
		if !ours {
			if !e.headOK() && e.path != "" && old(e.admin) {
				add(e, "if no git worktree add is running here, rm -rf "+displayPath(repo, e.admin),
					"%s is a worktree registration that git-liza did not make, left unfinished (no HEAD); git fsck and gc fail on it", displayPath(repo, e.admin))
			}
			return false, nil
		}
		// A lock of git-liza's on a registration without gitdir: its
		// owner says whose it is.
		e.kind = owner.kind
	}
	what := e.display(repo)
	if agent, task, ok := e.review(); ok && rec.Reviewing != nil && e.branch() == "" {
		// A reviewer's checkout lives as long as the review on the
		// board (the review command makes one and ends at once).
		if held, err := rec.Reviewing(agent, task); err != nil || held {
			return false, err
		}
		if ours && e.locked && !owner.ended() {
			return false, nil
		}
		if !settled {
			return again()
		}
		if err := discard(repo, e); err != nil {
			return false, err
		}
		if rec.Routine == nil || !rec.Routine(agent, task) {
			add(e, "", "removed %s: the checkout of a review of %s that %s no longer holds", what, task, agent)
		}
		return true, nil
	}
	switch {
	case e.locked && ours:
		if !owner.ended() {
			return false, nil
		}
		if !settled {
			return again()
		}
	case e.locked:
		// Someone's git worktree lock, or git's own "initializing" of a
		// worktree add that may be running: not git-liza's to judge.
		return false, nil
	case e.kind == legacyMerge && e.branch() == "", e.kind == reviewTree && e.path != "" && e.branch() == "":
		// Throwaway worktrees made before they carried their owner
		// (detached, as git-liza made them): left while any process works
		// in them.
		if _, known := proc.Using(e.path); !known {
			return false, nil
		}
		if !settled {
			return again()
		}
		if err := discard(repo, e); err != nil {
			return false, err
		}
		add(e, "", "removed %s: a throwaway worktree an earlier git-liza left, which no process works in", what)
		return true, nil
	case e.path == "" || e.commondir == "" || !e.headOK():
		if !settled {
			return again()
		}
		if err := forget(repo, e, e.kind == taskTree && e.exists && !onlyGitFile(e.path)); err != nil {
			return false, err
		}
		add(e, "", "removed the registration of %s: a killed removal left it half deleted", what)
		return true, nil
	default:
		return false, nil
	}
	// The owner is gone.
	if e.kind.throwaway() {
		if err := discard(repo, e); err != nil {
			return false, err
		}
		add(e, "", "removed %s: the throwaway worktree of %s, which %s", what, owner.describe(), owner.end())
		return true, nil
	}
	if !e.complete() {
		// git adds a worktree only into an empty directory: until HEAD
		// is set nothing is checked out, and until the index is written
		// what is there is git's unfinished checkout. Other files are
		// someone's, and stay.
		keep := ""
		if e.exists && !onlyGitFile(e.path) && (!e.headOK() || e.index) {
			keep = e.path
		}
		if err := forget(repo, e, keep != ""); err != nil {
			return false, err
		}
		if e.path == "" && e.kind == taskTree && e.id != "" {
			// Killed before gitdir named the directory: the lock names
			// the task, and git may have made its directory, empty yet.
			if p, err := Path(repo, e.id); err == nil && emptyDir(p) {
				os.Remove(p)
			}
		}
		add(e, "", "removed %s: the worktree %s was making when it %s", what, owner.describe(), owner.end())
		if keep != "" {
			add(e, "if nothing in it is needed, rm -rf "+displayPath(repo, keep), "kept the files in %s, which no checkout wrote", displayPath(repo, keep))
		}
		return true, nil
	}
	held := true
	if rec.Holds != nil {
		var err error
		if held, err = rec.Holds(e.id); err != nil {
			return false, err
		}
	}
	if !held {
		integ := ""
		if rec.Integration != nil {
			var err error
			if integ, err = rec.Integration(); err != nil {
				return false, err
			}
		}
		clean, err := holdsNothing(ctx, repo, e, integ)
		if err != nil {
			return false, err
		}
		if clean {
			if err := discard(repo, e); err != nil {
				return false, err
			}
			if _, ok, _ := repo.ReadRef(BranchRef(e.id)); ok {
				if _, err := repo.GitUnlocking(ctx, "branch", "--quiet", "-D", Branch(e.id)); err != nil {
					return true, err
				}
				add(e, "", "removed %s and branch %s: %s %s before the claim committed", what, Branch(e.id), owner.describe(), owner.end())
			} else {
				add(e, "", "removed %s: %s %s before the claim committed", what, owner.describe(), owner.end())
			}
			return true, nil
		}
	}
	if err := os.Remove(filepath.Join(e.admin, "locked")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if held {
		add(e, "", "unlocked %s: %s committed, then %s before unlocking it", what, owner.describe(), owner.end())
	} else {
		add(e, "", "unlocked %s: %s %s before the claim committed; what the worktree holds is kept for the next claim of %s", what, owner.describe(), owner.end(), e.id)
	}
	return false, nil
}

// busy reports whether a process works in a registration's worktree: a
// git process in it or in its registration, or any process whose working
// directory is in it.
func busy(e *entry) bool {
	dirs := []string{e.admin}
	if e.path != "" {
		dirs = append(dirs, e.path)
		if pids, _ := proc.Using(e.path); len(pids) > 0 {
			return true
		}
	}
	pids, _ := proc.GitIn(dirs)
	return len(pids) > 0
}

// holdsNothing reports whether removing a task worktree and its branch
// loses nothing: no uncommitted change, HEAD on the task's branch, and the
// branch's tip (if there is one) on the integration branch.
func holdsNothing(ctx context.Context, repo *refstore.Repo, e *entry, integration string) (bool, error) {
	if integration == "" || e.branch() != Branch(e.id) {
		return false, nil
	}
	if dirty, err := Dirty(ctx, repo, e.path); err != nil || dirty {
		return false, err
	}
	return BranchMerged(ctx, repo, e.id, integration)
}

// bare reports whether a registration holds nothing but, perhaps, a lock
// that names nobody (empty, or git's own "initializing"): git worktree add
// was killed before it wrote where the worktree is.
func bare(e *entry) bool {
	if e.path != "" || e.commondir != "" || e.commondirEmpty || e.head != "" || e.index {
		return false // read already: no need to list the directory
	}
	ents, err := os.ReadDir(e.admin)
	if err != nil {
		return false
	}
	for _, f := range ents {
		if f.Name() != "locked" || e.reason != "" && e.reason != "initializing" {
			return false
		}
	}
	return true
}

// emptyDir reports whether dir is a directory with nothing in it.
func emptyDir(dir string) bool {
	ents, err := os.ReadDir(dir)
	return err == nil && len(ents) == 0
}

// onlyGitFile reports whether dir holds nothing but a .git file.
func onlyGitFile(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() != ".git" {
			return false
		}
	}
	return true
}

// old reports whether a path was last changed longer ago than a git
// command holds anything it is making.
func old(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && time.Since(fi.ModTime()) > refstore.StaleLockAge
}
