// Package worktree manages task worktrees: .worktrees/<id> on branch
// task/<id>, created for a claim, kept while they hold work, removed only
// when that work is merged or a person says so.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Dir is where task worktrees live, relative to the main checkout.
const Dir = ".worktrees"

// Rel is the worktree path of a task relative to the main checkout, as the
// task's worktree field records it.
func Rel(id string) string { return Dir + "/" + id }

// Branch is a task's branch name.
func Branch(id string) string { return "task/" + id }

// BranchRef is a task's branch as a full ref name.
func BranchRef(id string) string { return "refs/heads/" + Branch(id) }

// ReviewDir is the directory under Dir that holds reviewers' checkouts;
// its leading dot keeps it apart from task ids.
const ReviewDir = ".review"

// ReviewPath is where a reviewer's agent reads the commit under review: a
// detached worktree of its own, whether or not the coder's worktree is on
// this machine, beside the task worktrees (and like them out of the main
// checkout's status). It is not under the git directory: the agent CLIs'
// sandboxes keep a git directory read-only to a session that runs inside
// it (Claude Code's refused to write the objects a verdict needs).
func ReviewPath(repo *refstore.Repo, agent, id string) string {
	root := repo.MainWorkTree()
	if root == "" {
		return filepath.Join(repo.CommonDir, "liza", "review", agent, id)
	}
	return filepath.Join(root, Dir, ReviewDir, agent, id)
}

// ErrBusy means another process is claiming the same task on this machine
// right now: its worktree or branch appeared under our feet.
var ErrBusy = errors.New("task worktree is being created by another process")

// Root is the main checkout, where .worktrees/ lives.
func Root(repo *refstore.Repo) (string, error) {
	root := repo.MainWorkTree()
	if root == "" {
		return "", contracts.Invalidf("task worktrees need a checkout; this repository is bare (use --no-worktree)")
	}
	return root, nil
}

// Path is the absolute path of a task's worktree.
func Path(repo *refstore.Repo, id string) (string, error) {
	root, err := Root(repo)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, Dir, id), nil
}

// Info describes a task worktree as git sees it.
type Info struct {
	ID       string `json:"id"`
	Path     string `json:"path"`
	Exists   bool   `json:"exists"`
	Branch   string `json:"branch,omitempty"`
	Head     string `json:"head,omitempty"`
	Dirty    bool   `json:"dirty"`
	Locked   string `json:"locked,omitempty"`
	Prunable bool   `json:"prunable,omitempty"`
}

// claimLock is the lock reason a claim in progress leaves on the worktree it
// creates, so that a crashed claim can be told from one still running.
func claimLock(agent string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("git-liza claim by %s: pid %d on %s", agent, os.Getpid(), host)
}

// Create makes the worktree of task id for a claim in progress: on a new
// branch task/<id> at base, or on the existing branch when there is one. It
// is locked until Unlock. If the worktree or branch is being created by a
// live process here, it returns ErrBusy; one left by a dead process is
// removed first.
func Create(ctx context.Context, repo *refstore.Repo, id string, base refstore.Hash, agent string) (err error) {
	path, err := Path(repo, id)
	if err != nil {
		return err
	}
	if err := ensureExcluded(repo); err != nil {
		return err
	}
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	if info, err := inspect(ctx, repo, id); err != nil {
		return err
	} else if info.Exists {
		if !orphanedClaim(info.Locked) {
			return ErrBusy
		}
		if err := forceRemove(ctx, repo, path); err != nil {
			return err
		}
	}
	// Not a worktree of ours, yet something is there: git would refuse to
	// check out into it after creating the branch. Say what is in the
	// way, and leave nothing behind.
	if err := inTheWay(path, Rel(id)); err != nil {
		return err
	}
	_, hasBranch, err := repo.ReadRef(BranchRef(id))
	if err != nil {
		return err
	}
	if !hasBranch {
		// A failed add may still have created the branch.
		defer func() {
			if err == nil {
				return
			}
			if tip, ok, rerr := repo.ReadRef(BranchRef(id)); rerr == nil && ok && tip == base {
				_, _ = repo.Git(context.WithoutCancel(ctx), "branch", "--quiet", "-D", Branch(id))
			}
		}()
	}
	args := []string{"worktree", "add", "--quiet", "--lock", "--reason", claimLock(agent), path}
	if hasBranch {
		args = append(args, Branch(id))
	} else {
		args = append(args, "-b", Branch(id), base.String())
	}
	// worktree add writes .git/config.lock when it records the worktree's
	// branch; concurrent claims here may collide on it, so retry briefly.
	for try := 0; ; try++ {
		_, err = repo.Git(ctx, args...)
		var ge *refstore.GitError
		if err == nil || !errors.As(err, &ge) {
			return err
		}
		switch {
		case strings.Contains(ge.Stderr, "already exists"), strings.Contains(ge.Stderr, "already checked out"),
			strings.Contains(ge.Stderr, "is already used by worktree"), strings.Contains(ge.Stderr, "is a missing but"):
			return ErrBusy
		case strings.Contains(ge.Stderr, ".lock") && try < 20:
			time.Sleep(time.Duration(5+try*5) * time.Millisecond)
			continue
		}
		return err
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

// Unlock releases the claim lock once the claim is committed.
func Unlock(ctx context.Context, repo *refstore.Repo, id string) error {
	path, err := Path(repo, id)
	if err != nil {
		return err
	}
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = repo.Git(ctx, "worktree", "unlock", path)
	return err
}

// lockRepo serialises git-liza's worktree commands on this machine. Git
// does not: two worktree adds of one path on an existing branch both write
// into the same directory (and the loser's cleanup deletes it), and
// worktree add, list, unlock, remove and branch -D die ("failed to read
// .git/worktrees/X/commondir", "failed to read .../locked") when they
// read a worktree another process is creating, unlocking or removing. The
// lock is an flock on a file in the common git directory: the kernel
// releases it when the process ends, however it ends.
func lockRepo(repo *refstore.Repo) (func(), error) {
	dir := filepath.Join(repo.CommonDir, "liza")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "worktrees.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// orphanedClaim reports whether a lock reason names a claim whose process
// is gone (on this host).
func orphanedClaim(reason string) bool {
	rest, ok := strings.CutPrefix(reason, "git-liza claim by ")
	if !ok {
		return false
	}
	_, rest, _ = strings.Cut(rest, ": pid ")
	pidStr, host, _ := strings.Cut(rest, " on ")
	pid, err := strconv.Atoi(pidStr)
	if err != nil {
		return false
	}
	if me, _ := os.Hostname(); host != me {
		return false
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// Inspect reports on a task's worktree.
func Inspect(ctx context.Context, repo *refstore.Repo, id string) (Info, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return Info{}, err
	}
	info, err := inspect(ctx, repo, id)
	unlock()
	if err != nil {
		return Info{}, err
	}
	return info, fillDirty(ctx, &info)
}

// inspect is Inspect without Dirty, for a caller holding lockRepo.
func inspect(ctx context.Context, repo *refstore.Repo, id string) (Info, error) {
	path, err := Path(repo, id)
	if err != nil {
		return Info{}, err
	}
	list, err := list(ctx, repo)
	if err != nil {
		return Info{}, err
	}
	for _, w := range list {
		if w.ID == id {
			return w, nil
		}
	}
	return Info{ID: id, Path: path}, nil
}

// List reports every worktree under .worktrees/.
func List(ctx context.Context, repo *refstore.Repo) ([]Info, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return nil, err
	}
	infos, err := list(ctx, repo)
	unlock()
	if err != nil {
		return nil, err
	}
	for i := range infos {
		if err := fillDirty(ctx, &infos[i]); err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// fillDirty asks git whether a worktree is dirty. One removed meanwhile
// is reported absent.
func fillDirty(ctx context.Context, w *Info) error {
	if !w.Exists {
		return nil
	}
	dirty, err := Dirty(ctx, w.Path)
	if err != nil {
		if _, serr := os.Stat(w.Path); os.IsNotExist(serr) {
			w.Exists = false
			return nil
		}
		return err
	}
	w.Dirty = dirty
	return nil
}

// list reports every worktree under .worktrees/, not whether it is dirty,
// for a caller holding lockRepo.
func list(ctx context.Context, repo *refstore.Repo) ([]Info, error) {
	root, err := Root(repo)
	if err != nil {
		return nil, err
	}
	out, err := repo.Git(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	prefix := filepath.Join(root, Dir) + string(filepath.Separator)
	var infos []Info
	for _, rec := range strings.Split(string(out), "\x00\x00") {
		var w Info
		for _, line := range strings.Split(rec, "\x00") {
			k, v, _ := strings.Cut(line, " ")
			switch k {
			case "worktree":
				w.Path = v
			case "HEAD":
				w.Head = v
			case "branch":
				w.Branch = strings.TrimPrefix(v, "refs/heads/")
			case "locked":
				w.Locked = v
				if v == "" {
					w.Locked = "locked"
				}
			case "prunable":
				w.Prunable = true
			}
		}
		if !strings.HasPrefix(w.Path, prefix) {
			continue
		}
		w.ID = strings.TrimPrefix(w.Path, prefix)
		if strings.HasPrefix(w.ID, ReviewDir+string(filepath.Separator)) {
			continue // a reviewer's checkout, not a task worktree
		}
		if fi, err := os.Stat(w.Path); err == nil && fi.IsDir() {
			w.Exists = true
		}
		infos = append(infos, w)
	}
	return infos, nil
}

// Dirty reports whether the checkout at path has uncommitted changes or
// untracked files.
func Dirty(ctx context.Context, path string) (bool, error) {
	out, err := refstore.Run(ctx, path, nil, "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return false, err
	}
	return len(strings.TrimSpace(string(out))) > 0, nil
}

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
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	if info.Exists || info.Prunable {
		if err := forceRemove(ctx, repo, info.Path); err != nil {
			return err
		}
	}
	if _, ok, err := repo.ReadRef(BranchRef(id)); err != nil {
		return err
	} else if ok {
		if _, err := repo.Git(ctx, "branch", "--quiet", "-D", Branch(id)); err != nil {
			return err
		}
	}
	return nil
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

// Prune forgets worktrees whose directory is gone (git worktree prune).
func Prune(ctx context.Context, repo *refstore.Repo) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = repo.Git(ctx, "worktree", "prune")
	return err
}

// forceRemove removes a worktree even when locked.
func forceRemove(ctx context.Context, repo *refstore.Repo, path string) error {
	_, err := repo.Git(ctx, "worktree", "remove", "--force", "--force", path)
	if err != nil {
		if _, statErr := os.Stat(path); os.IsNotExist(statErr) {
			_, err = repo.Git(ctx, "worktree", "prune")
		}
	}
	return err
}

// ensureExcluded keeps .worktrees/ out of the main checkout's status
// without touching any tracked file.
func ensureExcluded(repo *refstore.Repo) error {
	return Exclude(repo, "/"+Dir+"/")
}

// Exclude adds patterns to the repository's info/exclude, which every
// worktree reads, unless they are there already, so that what git-liza
// writes in the main checkout (worktrees, reports for the human) stays out
// of git status.
func Exclude(repo *refstore.Repo, patterns ...string) error {
	path := filepath.Join(repo.CommonDir, "info", "exclude")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add strings.Builder
	for _, p := range patterns {
		if !have[p] {
			add.WriteString(p + "\n")
			have[p] = true
		}
	}
	if add.Len() == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	text := add.String()
	if len(b) > 0 && !strings.HasSuffix(string(b), "\n") {
		text = "\n" + text
	}
	_, err = f.WriteString(text)
	return err
}

// AddDetached checks out commit in a throwaway worktree at path (a merge's
// integration test runs there), serialised with the task worktrees' own
// registry commands.
func AddDetached(ctx context.Context, repo *refstore.Repo, path string, commit refstore.Hash) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = repo.Git(ctx, "worktree", "add", "--quiet", "--detach", path, commit.String())
	return err
}

// RemoveDetached removes a worktree AddDetached made.
func RemoveDetached(ctx context.Context, repo *refstore.Repo, path string) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	return forceRemove(ctx, repo, path)
}

// CheckedOut returns the checkout that has branch (a full ref name) checked
// out, or "".
func CheckedOut(ctx context.Context, repo *refstore.Repo, branch string) (string, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return "", err
	}
	defer unlock()
	out, err := repo.Git(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return "", err
	}
	var path string
	for _, line := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			path = p
		}
		if line == "branch "+branch {
			return path, nil
		}
	}
	return "", nil
}
