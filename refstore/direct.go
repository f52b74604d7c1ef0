package refstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/liza-dev/git-liza/proc"
)

// ErrNeedGit means a ref cannot be moved in this process here (see
// DirectRefs): git update-ref has to move it.
var ErrNeedGit = errors.New("this repository's refs are moved by git")

// DirectRefs reports whether MoveRef may move a ref of this repository in
// this process: its refs are files, and nothing git would do besides
// moving one is asked for. Hooks that git runs for every ref transaction
// (reference-transaction) other than git-liza's own, shared permissions
// (core.sharedRepository) and synced ref files (core.fsync) are left to
// git update-ref.
func (r *Repo) DirectRefs() bool {
	if r.plumbing != "" {
		return false
	}
	if v, set := r.Config("extensions.refstorage"); set && !strings.EqualFold(v, "files") {
		return false
	}
	for _, key := range []string{"core.sharedrepository", "core.fsync", "core.fsyncobjectfiles"} {
		if _, set := r.Config(key); set {
			return false
		}
	}
	return !r.foreignHook("reference-transaction")
}

// foreignHook reports whether git would run a hook called name that is
// not git-liza's, or that chains one.
func (r *Repo) foreignHook(name string) bool {
	path, ok := r.runHook(name)
	if !ok {
		return false
	}
	if _, err := os.Stat(path + HookChainSuffix); err == nil {
		return true
	}
	b, err := readAtMost(path, 4096)
	return err != nil || !IsOwnHook(b)
}

// readAtMost reads the first n bytes of a file.
func readAtMost(path string, n int) ([]byte, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	m, err := f.Read(b)
	if err != nil && m == 0 {
		return nil, err
	}
	return b[:m], nil
}

// MoveRef moves one ref from u.Old to u.New (a zero Old: it must not
// exist) the way git's files backend does, without a git process: it
// creates NAME.lock, checks the ref's value under it (the loose file, or
// packed-refs), writes the new value into the lock, appends to the ref's
// reflog as who, and renames the lock over the ref. A ref that is not at
// u.Old, or whose lock another writer holds, comes back as ErrStale; a
// lock that a killed writer left is removed once stale (as UpdateRefs
// does), and the caller's next try passes. Where DirectRefs is false, or
// the ref is symbolic, it returns ErrNeedGit and moves nothing.
//
// A crash leaves the ref where it was, or moved; at worst also its lock
// (stale after StaleLockAge) or a reflog line for a move that did not
// happen, as a killed git update-ref does.
//
// MoveRef takes the turn of git-liza's writers here (RefTurn) for the
// move; MoveRefInTurn is MoveRef for a caller that holds it already.
func (r *Repo) MoveRef(u RefUpdate, reason string, who Signature) error {
	return r.moveRef(u, reason, who, false)
}

// MoveRefInTurn is MoveRef by a caller that holds the turn (RefTurn).
func (r *Repo) MoveRefInTurn(u RefUpdate, reason string, who Signature) error {
	return r.moveRef(u, reason, who, true)
}

// RefTurn waits for this process's turn among git-liza's processes that
// move refs here, and returns the function that ends it. The turn is a
// flock, which the kernel releases however a process ends. A writer of
// the state that holds it from its read of the tip to its move cannot
// lose the race to another writer of git-liza's: they wait for it instead
// of building on a tip that is about to move, and then backing off. Only
// git-liza's writers take turns; a move by git itself is still caught by
// the check of the old value.
//
// The flock is on the directory liza/ of the common directory itself, not
// on a file in it: an agent whose sandbox lets it write in liza/ could
// replace a lock file (two writers would then each hold "the" lock), but
// not the directory, and one whose sandbox keeps liza/ read-only can
// still open it to take its turn.
func (r *Repo) RefTurn() (func(), error) {
	dir := filepath.Join(r.CommonDir, "liza")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	return flockDir(dir)
}

func (r *Repo) moveRef(u RefUpdate, reason string, who Signature, inTurn bool) error {
	if !validRefPath(u.Name) || !strings.HasPrefix(u.Name, "refs/") || u.New.IsZero() {
		return fmt.Errorf("moving %s: not a ref this process moves", u.Name)
	}
	// What the ref will point at is on disk before it does (see Hold).
	if err := flushAllHeld(); err != nil {
		return err
	}
	for _, own := range []string{"refs/worktree/", "refs/bisect/", "refs/rewritten/"} {
		if strings.HasPrefix(u.Name, own) { // a worktree's own
			return ErrNeedGit
		}
	}
	if !r.DirectRefs() {
		return ErrNeedGit
	}
	path := filepath.Join(r.CommonDir, filepath.FromSlash(u.Name))
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	// The processes of git-liza that move refs here take turns (RefTurn),
	// and each names the lock it makes in liza/refs.pending until it is
	// done: a ref lock found there by the next one is a dead writer's,
	// removed at once. The file is emptied, not removed, when the move is
	// done: writing an existing file costs no new inode.
	if beforeRefTurn != nil {
		beforeRefTurn()
	}
	if !inTurn {
		unlock, err := r.RefTurn()
		if err != nil {
			return err
		}
		defer unlock()
	}
	lock := path + ".lock"
	f, err := openFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	for i := 0; errors.Is(err, fs.ErrNotExist) && i < 3; i++ {
		// git pack-refs --prune (git gc) removed the directory it left
		// empty since it was made: made again, as git does
		// (raceproof_create_file).
		if err = os.MkdirAll(filepath.Dir(path), 0o777); err == nil {
			f, err = openFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return r.lockTaken(lock)
	}
	if err != nil {
		return err
	}
	// The new value goes in at once, so that the lock is as it will be
	// when it is named.
	_, err = f.WriteString(u.New.String() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var mine os.FileInfo
	if err == nil {
		mine, err = os.Lstat(lock)
	}
	if err == nil {
		// A writer whose sandbox keeps liza/ read-only (an agent's) cannot
		// name its lock: killed now, its lock is recovered by age instead
		// (clearOrName), as a lock of git's is.
		if werr := r.namePending(lockID(lock, mine)); werr != nil && !readOnly(werr) {
			err = werr
		}
	}
	held := true // the lock at its path is this process's, to remove
	defer func() {
		if held {
			os.Remove(lock)
		}
		r.namePending("")
	}()
	if err != nil {
		return err
	}
	proc.CrashPoint("refs:locked")
	target, cur, ok, err := r.readRefOnce(u.Name)
	switch {
	case err != nil:
		return err
	case target != "":
		return ErrNeedGit
	case ok != !u.Old.IsZero(), ok && cur != u.Old:
		return ErrStale
	}
	if err := r.appendReflog(u, reason, who); err != nil {
		return err
	}
	proc.CrashPoint("refs:logged")
	// Still this process's: one that took it for stale (this process
	// stopped for StaleLockAge) may have removed it and made its own.
	if fi, err := os.Lstat(lock); err != nil || !os.SameFile(mine, fi) {
		held = false
		return ErrStale
	}
	if err := os.Rename(lock, path); err != nil {
		return err
	}
	held = false
	return nil
}

// lockID names one lock file: its path, and the inode and time of the file
// at that path, which tell it from a lock git made there since.
func lockID(path string, fi os.FileInfo) string {
	return fmt.Sprintf("%s\n%d %d\n", path, inodeOf(fi), fi.ModTime().UnixNano())
}

// readOnly reports whether err says a file could not be written because
// its file system or directory is read-only to this process.
func readOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

// pending is the file that names the ref lock a writer of git-liza's holds.
func (r *Repo) pending() string { return filepath.Join(r.CommonDir, "liza", "refs.pending") }

// namePending names id in the pending file ("" names none). The name is
// written over the start of the file and ended by a NUL, and the file is
// never truncated: on ext4, cutting a file that holds data cost a move
// 150 microseconds, a write over it 6. A writer killed midway leaves a
// name cut short, which names no lock (one is then recovered by its age,
// as git's are).
func (r *Repo) namePending(id string) error {
	f, err := openFile(r.pending(), os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(append([]byte(id), 0), 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readPending is the lock the pending file names, up to its NUL (a file
// written by an older git-liza has none, and an emptied one nothing).
func (r *Repo) readPending() string {
	f, err := openRead(r.pending())
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 16<<10))
	name, _, _ := bytes.Cut(b, []byte{0})
	return string(name)
}

// lockTaken is a ref's lock found in the way: another writer's, which is
// a race lost (ErrStale), or one a killed writer left, which is removed
// once stale (the error then says to try again at once) and otherwise
// named, as lockedRef does for git's own complaint.
func (r *Repo) lockTaken(lock string) error {
	fi, err := os.Lstat(lock)
	if err != nil {
		return errLockCleared // gone meanwhile
	}
	if r.readPending() == lockID(lock, fi) {
		// Named by a writer of git-liza's that is gone: the turn is this
		// process's, and git would have had to find the lock free to
		// make its own.
		if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		os.Remove(r.pending())
		r.notice("removed %s: the lock of a git-liza process killed while it moved %s", lock, strings.TrimSuffix(lock, ".lock"))
		return errLockCleared
	}
	if time.Since(fi.ModTime()) < StaleLockAge {
		// The usual case: a writer holds it for a moment.
		age := time.Since(fi.ModTime()).Round(time.Millisecond)
		return &LockError{Path: lock, Why: fmt.Sprintf("it is %s old", age), Err: ErrStale, young: true}
	}
	return r.clearOrName(lock, ErrStale)
}

// appendReflog adds the line git writes for a move of u to the ref's log:
// old and new ids, who and when, and the reason.
func (r *Repo) appendReflog(u RefUpdate, reason string, who Signature) error {
	path := filepath.Join(r.CommonDir, "logs", filepath.FromSlash(u.Name))
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := openFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if who.When.IsZero() {
		who.When = time.Now()
	}
	old := u.Old.String()
	if u.Old.IsZero() {
		old = r.algo.nullHex()
	}
	msg := strings.Join(strings.Fields(reason), " ")
	_, err = fmt.Fprintf(f, "%s %s %s\t%s\n", old, u.New, who.encode(), msg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// beforeRefTurn, when set (by a test), runs in moveRef once the ref's
// directory is made and before the turn is waited for.
var beforeRefTurn func()
