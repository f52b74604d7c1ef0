package refstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/proc"
)

// StaleLockAge is how old one of git's lock files must be before git-liza
// may take it for the leftover of a git process that was killed.
//
// The rule (ClearStaleLock): git's lock files (*.lock) carry no pid, so a
// lock is stale only when both of these hold:
//   - it is older than StaleLockAge: git holds a ref, packed-refs or config
//     lock for milliseconds and waits for one at most a second
//     (core.filesRefLockTimeout, core.packedRefsTimeout), so a holder that
//     git-liza cannot see (another machine on a shared disk, another pid
//     namespace) would long have let go;
//   - no git process on this machine may be working in the repository
//     (proc.GitIn: its working directory, -C, --git-dir, GIT_DIR and the
//     like lie elsewhere); where the process table cannot be read, no lock
//     is ever stale.
//
// git itself settles the same question for gc.pid by the pid the file
// records and an age of 12 hours; a lock file has no pid, and one held by a
// dead process blocks every writer of that ref until someone removes it,
// hence the process table and a short age.
const StaleLockAge = 10 * time.Second

// LockError is a git command that failed because one of git's lock files
// exists. It is ErrStale (a race lost: retry) and unwraps to the git
// failure; Error names the lock and how to clear it.
type LockError struct {
	Path string
	// Why says why the lock is not taken for stale.
	Why string
	Err error
	// young: no git process holds it, but it is not old enough to be
	// stale yet; held: a git process may hold it.
	young, held bool
}

func (e *LockError) Error() string {
	return fmt.Sprintf("%s exists (%s): if no git command is running in that repository, remove it: rm %s", e.Path, e.Why, e.Path)
}

func (e *LockError) Is(target error) bool { return target == ErrStale }
func (e *LockError) Unwrap() error        { return e.Err }

var lockExists = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`) })

// LockIn finds the lock file git's message says exists.
func LockIn(stderr string) (string, bool) {
	m := lockExists().FindStringSubmatch(stderr)
	if m == nil {
		return "", false
	}
	return filepath.Clean(m[1]), true
}

// lockVerdict is what ClearStaleLock found.
type lockVerdict int

const (
	lockGone    lockVerdict = iota // there is no such lock (now)
	lockRemoved                    // it was stale and is removed
	lockYoung                      // no git process holds it, but it is too young to say
	lockHeld                       // a git process may hold it
	lockUnknown                    // nothing can be said (no process table)
)

// ClearStaleLock removes the lock file at path when it is stale (see
// StaleLockAge), and tells Notice. It reports whether the lock is gone
// (removed now, or already), and else why it was kept.
func (r *Repo) ClearStaleLock(path string) (bool, string, error) {
	v, why, err := r.clearStaleLock(path)
	return v == lockGone || v == lockRemoved, why, err
}

func (r *Repo) clearStaleLock(path string) (lockVerdict, string, error) {
	v, why, age, err := judgeLock(path, true)
	if v == lockRemoved {
		r.notice("%s", removedLock(path, age))
	}
	return v, why, err
}

// removedLock says that the stale lock at path was removed.
func removedLock(path string, age time.Duration) string {
	return fmt.Sprintf("removed %s: a lock of git's that a killed git process left (%s old, and no git process is running in that repository)", path, age.Round(time.Second))
}

// ClearStaleLocks removes the stale locks of git's that git-liza's own
// git commands may leave: packed-refs.lock, config.lock, and those under
// refs/. It returns the locks it removed (Why says so) and those it kept.
func (r *Repo) ClearStaleLocks() (removed, kept []*LockError, err error) {
	var paths []string
	for _, name := range []string{"packed-refs.lock", "config.lock"} {
		paths = append(paths, filepath.Join(r.CommonDir, name))
	}
	filepath.WalkDir(filepath.Join(r.CommonDir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			paths = append(paths, p)
		}
		return nil
	})
	for _, p := range paths {
		v, why, age, err := judgeLock(p, true)
		switch {
		case err != nil:
			return removed, kept, err
		case v == lockRemoved:
			removed = append(removed, &LockError{Path: p, Why: removedLock(p, age)})
		case v != lockGone:
			kept = append(kept, &LockError{Path: p, Why: why})
		}
	}
	return removed, kept, nil
}

// LockStale reports whether the lock file at path exists and is stale (see
// StaleLockAge), without removing it.
func LockStale(path string) bool {
	v, _, _, err := judgeLock(path, false)
	return err == nil && v == lockRemoved
}

// judgeLock says what it finds of the lock at path, and removes it when it
// is stale and remove is set (lockRemoved means stale, when not).
func judgeLock(path string, remove bool) (lockVerdict, string, time.Duration, error) {
	return judgeLockIn(path, nil, remove)
}

// judgeLockIn is judgeLock with the directories whose git processes may
// hold the lock given (nil: the whole repository's, repoDirs).
func judgeLockIn(path string, dirs []string, remove bool) (lockVerdict, string, time.Duration, error) {
	if !strings.HasSuffix(path, ".lock") {
		return lockUnknown, "not a lock file", 0, nil
	}
	// Processes of git-liza judging locks in one directory take turns, so
	// that none removes a lock another has just seen go and git re-create.
	unlock, err := flockDir(filepath.Dir(path))
	if err != nil {
		if os.IsNotExist(err) {
			return lockGone, "", 0, nil
		}
		return lockUnknown, "", 0, err
	}
	defer unlock()
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return lockGone, "", 0, nil
	}
	if err != nil {
		return lockUnknown, "", 0, err
	}
	if dirs == nil {
		dirs = repoDirs(path)
	}
	pids, known := proc.GitIn(dirs)
	age := time.Since(fi.ModTime())
	switch {
	case deadRefLock(path, fi, age):
		// Past the checks below: a team whose supervisors run git all the
		// time (their fetches) would keep it for ever.
	case !known:
		return lockUnknown, "this machine's processes cannot be seen to tell whether git holds it", age, nil
	case len(pids) > 0:
		return lockHeld, fmt.Sprintf("git (pid %d) is running in that repository", pids[0]), age, nil
	case age < StaleLockAge:
		return lockYoung, fmt.Sprintf("it is %s old", age.Round(time.Millisecond)), age, nil
	}
	// The same file that was judged, not one a git process made since.
	if now, err := os.Lstat(path); err != nil || !os.SameFile(fi, now) || !now.ModTime().Equal(fi.ModTime()) {
		if err != nil && os.IsNotExist(err) {
			return lockGone, "", age, nil
		}
		return lockHeld, "it changed while being looked at", age, nil
	}
	if !remove {
		return lockRemoved, "", age, nil
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return lockUnknown, "", age, err
	}
	return lockRemoved, "", age, nil
}

// deadRefLock reports whether the lock at path is a ref's lock (under
// refs/) that is still empty at age StaleLockAge: git writes a ref's new
// value into its lock as it takes it, and holds an empty one only while it
// deletes the ref, for milliseconds. Such a lock is a dead writer's (git
// killed in that instant: a session's process group ended, an
// out-of-memory kill), whatever git processes run in the repository.
func deadRefLock(path string, fi os.FileInfo, age time.Duration) bool {
	return fi.Size() == 0 && fi.Mode().IsRegular() && age >= StaleLockAge &&
		strings.Contains(filepath.ToSlash(path), "/refs/")
}

// notice tells r.Notice, when it is set.
func (r *Repo) notice(format string, a ...any) {
	if r.Notice != nil {
		r.Notice(fmt.Sprintf(format, a...))
	}
}

// repoDirs are the directories of the repository that holds a lock file:
// its git directory (found upwards from the lock), the common directory,
// the main checkout and every linked worktree.
func repoDirs(lock string) []string {
	gitDir := ""
	for d := filepath.Dir(lock); ; d = filepath.Dir(d) {
		if isGitDir(d) {
			gitDir = d
			break
		}
		if filepath.Dir(d) == d {
			return []string{filepath.Dir(lock)}
		}
	}
	common := gitDir
	if b, err := ReadFile(filepath.Join(gitDir, "commondir")); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		common = absFrom(gitDir, strings.TrimSpace(string(b)))
	}
	dirs := []string{common}
	if gitDir != common {
		dirs = append(dirs, gitDir)
	}
	if !isBare(common) {
		dirs = append(dirs, filepath.Dir(common))
	}
	admins, _ := os.ReadDir(filepath.Join(common, "worktrees"))
	for _, a := range admins {
		b, err := ReadFile(filepath.Join(common, "worktrees", a.Name(), "gitdir"))
		if p := strings.TrimSpace(string(b)); err == nil && p != "" {
			dirs = append(dirs, filepath.Dir(absFrom(filepath.Join(common, "worktrees", a.Name()), p)))
		}
	}
	return dirs
}

// Flock holds an exclusive flock on the file liza/NAME.lock in the common
// directory until the returned function is called; the kernel releases it
// when the process ends, however it ends. git-liza's processes on this
// machine serialise what git does not with it.
func (r *Repo) Flock(name string) (func(), error) {
	f, err := r.lockFile(name)
	if err != nil {
		return nil, err
	}
	if _, err := flockFile(f, true); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// TryFlock holds the flock on liza/NAME.lock, as Flock does, if nobody
// holds it now, and reports whether it does: for work that may as well be
// left to a later command while others hold the lock.
func (r *Repo) TryFlock(name string) (func(), bool, error) {
	f, err := r.lockFile(name)
	if err != nil {
		return nil, false, err
	}
	switch held, err := flockFile(f, false); {
	case held:
		return func() { f.Close() }, true, nil
	case err == nil:
		f.Close()
		return nil, false, nil
	default:
		f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
}

// lockFile opens liza/NAME.lock in the common directory, creating it.
func (r *Repo) lockFile(name string) (*os.File, error) {
	dir := filepath.Join(r.CommonDir, "liza")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return openFile(filepath.Join(dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
}

// waitLock decides what to do about a git failure: when git says one of
// its lock files exists, it waits while the lock may be held (at most
// about a second while a git process is seen to hold it, as git itself
// waits) or until it is old enough to be stale, removes a stale one, and
// says to run the command again; otherwise the failure comes back, a
// lock's as *LockError.
func (r *Repo) waitLock(ctx context.Context, err error, stderr string, began time.Time) (again bool, out error) {
	path, found := LockIn(stderr)
	if !found {
		return false, err
	}
	v, why, cerr := r.clearStaleLock(path)
	if cerr != nil {
		return false, errors.Join(err, cerr)
	}
	waited := time.Since(began)
	switch {
	case v == lockGone, v == lockRemoved:
		return true, err
	case v == lockYoung && waited < StaleLockAge+time.Second, v == lockHeld && waited < 2*time.Second:
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(time.Duration(20+rand.IntN(80)) * time.Millisecond):
		}
		return true, err
	}
	return false, &LockError{Path: path, Why: why, Err: err}
}

// GitUnlocking is Git for commands that change nothing when they cannot
// take a lock (branch -D, worktree add, config): a lock of git's in the
// way is waited for, removed when stale, and the command run again; one
// that stays comes back as *LockError.
func (r *Repo) GitUnlocking(ctx context.Context, args ...string) ([]byte, error) {
	began := time.Now()
	for {
		out, err := r.Git(ctx, args...)
		var ge *GitError
		if err == nil || !errors.As(err, &ge) {
			return out, err
		}
		again, lerr := r.waitLock(ctx, err, ge.Stderr, began)
		if !again {
			return out, lerr
		}
	}
}
