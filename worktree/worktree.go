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
	"strings"

	"github.com/liza-dev/git-liza/atomicfile"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
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

// ErrSettling means the worktree's claim died, but a git process it
// started still works in it (a checkout finishing): Recover removes or
// unlocks it once that git is done, a moment later.
var ErrSettling = errors.New("task worktree is left by a dead claim whose git is still at work")

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
	// OnlyDeleted says that the worktree's only changes are tracked files
	// deleted, as a removal killed halfway leaves it.
	OnlyDeleted bool `json:"-"`
}

// Unlock releases the claim lock once the claim is committed.
// It removes the registration's locked file, as git worktree unlock does.
func Unlock(ctx context.Context, repo *refstore.Repo, id string) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	e, err := find(repo, id)
	if err != nil {
		return err
	}
	if e == nil {
		return fmt.Errorf("no worktree of %s to unlock", id)
	}
	if err := os.Remove(filepath.Join(e.admin, "locked")); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Abandon gives a claim's worktree, still locked by this process, over to
// the next claim's recovery, as if this process had been killed there: a
// claim whose push may have landed (stopped before the remote answered)
// leaves its worktree for a recovery that keeps it when the board says
// the claim landed and removes it when not, and that recovery leaves
// alone a worktree whose owner runs. A process that lives on (a
// supervisor) would hold it until it ended, and no claim of the task on
// this machine could take it. The lock stays, naming the
// claim and this process, marked stopped. A worktree another process
// locked is not touched.
func Abandon(ctx context.Context, repo *refstore.Repo, id string) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	defer unlock()
	e, err := find(repo, id)
	if err != nil || e == nil || !e.locked {
		return err
	}
	owner, ok := parseLock(e.reason)
	me := proc.Me()
	if !ok || owner.kind != taskTree || owner.stopped || owner.PID != me.PID || owner.Host != me.Host {
		return nil
	}
	head, _, _ := strings.Cut(e.reason, ": ")
	return atomicfile.Write(filepath.Join(e.admin, "locked"), []byte(head+": "+stoppedBy+me.String()), 0o644)
}

// lockRepo serialises git-liza's worktree commands on this machine (and
// with them the recovery of what a dead one left). Git does not: two
// worktree adds of one path on an existing branch both write into the same
// directory (and the loser's cleanup deletes it), and
// worktree add, list, unlock, remove and branch -D die ("failed to read
// .git/worktrees/X/commondir", "failed to read .../locked") when they
// read a worktree another process is creating, unlocking or removing. The
// lock is an flock on liza/worktrees.lock in the common git directory: the
// kernel releases it when the process ends, however it ends.
//
// Releasing it empties the trash (see discard) after the lock is free:
// deleting a checkout takes long on a real repository, and holds up
// nobody's worktree command.
func lockRepo(repo *refstore.Repo) (func(), error) {
	unlock, err := repo.Flock(lockName)
	if err != nil {
		return nil, err
	}
	return func() { unlock(); emptyTrash(repo) }, nil
}

// lockName names the worktree commands' lock (see lockRepo).
const lockName = "worktrees"

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
