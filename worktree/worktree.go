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
	"slices"
	"strings"
	"time"

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
		if owner, ok := parseLock(e.reason); ok && e.locked && owner.Gone() {
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
				if owner, ok := parseLock(other.reason); ok && owner.Gone() {
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

// find is the registration of task id's worktree, or nil (the caller
// holds lockRepo). Git names a registration after the worktree's
// directory (id, or id and a number when that name was taken), and the
// worktree's .git file names its registration: find reads those, not
// every registration, since claims and merges ask for one task's with the
// whole review queue registered. One it cannot see so (moved into place by
// git worktree move, its directory gone) makes git worktree add refuse the
// path, and register then reads them all (findAll).
func find(repo *refstore.Repo, id string) (*entry, error) {
	dir, names, err := adminNames(repo)
	if err != nil {
		return nil, err
	}
	var admins []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, id); ok && strings.Trim(rest, "0123456789") == "" {
			admins = append(admins, filepath.Join(dir, n))
		}
	}
	path, err := Path(repo, id)
	if err != nil {
		return nil, err
	}
	if g, ok := gitdirIn(path, ".git"); ok {
		admins = append(admins, g)
	}
	a := areasOf(repo)
	real := ""
	for i, admin := range admins {
		if slices.Contains(admins[:i], admin) {
			continue
		}
		// Most names that only begin with id are other tasks' (t-1 and
		// t-12): their gitdir says so.
		if g, ok := gitdirIn(admin, "gitdir"); ok && filepath.Dir(g) != path {
			if real == "" {
				real = realPath(path)
			}
			if filepath.Dir(g) != real {
				continue
			}
		}
		if e := read(a, admin); e.kind == taskTree && e.id == id {
			return e, nil
		}
	}
	return nil, nil
}

// gitdirIn reads the path that file in dir names: a worktree's .git file
// ("gitdir: " and its registration), or a registration's gitdir (the
// worktree's .git file).
func gitdirIn(dir, file string) (string, bool) {
	b, ok := readSmall(filepath.Join(dir, file))
	if !ok {
		return "", false
	}
	g := strings.TrimSpace(string(b))
	if file == ".git" {
		if g, ok = strings.CutPrefix(g, "gitdir: "); !ok {
			return "", false
		}
	}
	if g == "" {
		return "", false
	}
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	return filepath.Clean(g), true
}

// adminNames lists the names in git's registry of worktrees (dir), in
// order, without looking at each: none when there is no registry.
func adminNames(repo *refstore.Repo) (dir string, names []string, err error) {
	dir = filepath.Join(repo.CommonDir, "worktrees")
	f, err := os.Open(dir)
	if os.IsNotExist(err) {
		return dir, nil, nil
	}
	if err != nil {
		return dir, nil, err
	}
	names, err = f.Readdirnames(-1)
	f.Close()
	slices.Sort(names)
	return dir, names, err
}

// findAll is find reading every registration.
func findAll(repo *refstore.Repo, id string) (*entry, error) {
	entries, err := scan(repo)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.kind == taskTree && e.id == id {
			return e, nil
		}
	}
	return nil, nil
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

// Inspect reports on a task's worktree.
func Inspect(ctx context.Context, repo *refstore.Repo, id string) (Info, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return Info{}, err
	}
	info, err := inspect(repo, id)
	unlock()
	if err != nil {
		return Info{}, err
	}
	return info, fillDirty(ctx, &info)
}

// inspect is Inspect without Dirty, for a caller holding lockRepo.
func inspect(repo *refstore.Repo, id string) (Info, error) {
	path, err := Path(repo, id)
	if err != nil {
		return Info{}, err
	}
	e, err := find(repo, id)
	if err != nil || e == nil {
		return Info{ID: id, Path: path}, err
	}
	return e.info(repo), nil
}

// List reports every worktree under .worktrees/.
func List(ctx context.Context, repo *refstore.Repo) ([]Info, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return nil, err
	}
	infos, err := list(repo)
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
	dirty, onlyDeleted, err := status(ctx, w.Path)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(w.Path, ".git")); os.IsNotExist(serr) {
			w.Exists = false
			return nil
		}
		return err
	}
	w.Dirty, w.OnlyDeleted = dirty, onlyDeleted
	return nil
}

// list reports every worktree registered under .worktrees/, not whether
// it is dirty, for a caller holding lockRepo. It reads the registry
// itself: git worktree list dies on a registration a killed process left
// half written.
func list(repo *refstore.Repo) ([]Info, error) {
	if _, err := Root(repo); err != nil {
		return nil, err
	}
	entries, err := scan(repo)
	if err != nil {
		return nil, err
	}
	var infos []Info
	for _, e := range entries {
		if e.kind == taskTree && e.path != "" {
			infos = append(infos, e.info(repo))
		}
	}
	return infos, nil
}

// Dirty reports whether the checkout at path has uncommitted changes or
// untracked files.
func Dirty(ctx context.Context, path string) (bool, error) {
	dirty, _, err := status(ctx, path)
	return dirty, err
}

// status is Dirty, and whether the only changes are tracked files deleted
// from the checkout.
func status(ctx context.Context, path string) (dirty, onlyDeleted bool, err error) {
	// Without its .git file, git would answer for the checkout around it.
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		return false, false, fmt.Errorf("%s is not a checkout: %w", path, err)
	}
	// --no-optional-locks: status refreshes the index when it can, under
	// index.lock, which a kill would leave in the coder's way.
	out, err := refstore.RunIn(ctx, path, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=normal")
	if err != nil {
		return false, false, err
	}
	onlyDeleted = true
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		dirty = true
		if !strings.HasPrefix(rec, " D ") {
			onlyDeleted = false
		}
	}
	return dirty, dirty && onlyDeleted, nil
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
// The branch is deleted once the worktree commands' lock is released, with
// git update-ref, which unlike git branch reads no worktree's registration.
func drop(ctx context.Context, repo *refstore.Repo, id string, branch bool) error {
	unlock, err := lockRepo(repo)
	if err != nil {
		return err
	}
	for seen := map[string]bool{}; ; {
		e, err := find(repo, id)
		if err == nil && e != nil && !seen[e.admin] {
			seen[e.admin] = true
			err = discard(repo, e)
		} else if err == nil {
			break // none left, or one discard left in place
		}
		if err != nil {
			unlock()
			return err
		}
	}
	at := ""
	if branch {
		at, err = holder(repo, BranchRef(id))
	}
	unlock()
	if !branch || err != nil {
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
