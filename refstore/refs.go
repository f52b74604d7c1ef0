package refstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// StateRef is where the blackboard lives.
const StateRef = "refs/liza/state"

// RefUpdateEnv is set in the environment of the update-ref processes
// git-liza runs, so that its reference-transaction hook can tell git-liza's
// moves of refs/liza/state from anyone else's.
const RefUpdateEnv = "GIT_LIZA_REF_UPDATE"

// RefUpdate moves Name from Old to New. A zero Old means the ref must not
// exist yet; a zero New deletes it.
type RefUpdate struct {
	Name string
	Old  Hash
	New  Hash
}

// ErrStale means a compare-and-swap lost: some ref was not at the expected
// old value (or its lock was held by a concurrent update). Nothing moved.
var ErrStale = errors.New("ref moved concurrently")

// RefsUnder lists the refs whose names start with prefix (a directory of
// refs, ending in "/"), by name. The files backend is read directly: the
// loose refs under the directory, then packed-refs for the names it lacks.
func (r *Repo) RefsUnder(ctx context.Context, prefix string) (map[string]Hash, error) {
	if !validRefPath(strings.TrimSuffix(prefix, "/")) || !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("listing %s: not a directory of refs", prefix)
	}
	if r.plumbing == "" { // any extensions.refStorage is read through git (readFormat)
		return r.refsUnderFiles(prefix)
	}
	out, err := r.Git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	refs := map[string]Hash{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, name, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(name, prefix) {
			continue
		}
		h, ok := ParseHash(id)
		if !ok {
			return nil, fmt.Errorf("git for-each-ref printed %q", line)
		}
		refs[name] = h
	}
	return refs, nil
}

// refsUnderFiles is RefsUnder for the files backend.
func (r *Repo) refsUnderFiles(prefix string) (map[string]Hash, error) {
	refs := map[string]Hash{}
	root := filepath.Join(r.CommonDir, filepath.FromSlash(prefix))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(d.Name(), ".lock") {
			return nil
		}
		rel, err := filepath.Rel(r.CommonDir, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if h, ok, err := r.ReadRef(name); err != nil {
			return err
		} else if ok {
			refs[name] = h
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", prefix, err)
	}
	b, err := ReadFile(filepath.Join(r.CommonDir, "packed-refs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading packed-refs: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		id, name, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(name, prefix) {
			continue
		}
		if _, loose := refs[name]; loose {
			continue
		}
		if h, ok := ParseHash(id); ok {
			refs[name] = h
		}
	}
	return refs, nil
}

// UpdateRefs moves every ref in one transaction with git update-ref --stdin,
// each from its expected old value: all move or none does. A lost race comes
// back as ErrStale; any other failure as *GitError.
//
// A lock of git's in the way is waited for while a git process may hold it
// (about a second) or until it is old enough to be stale (StaleLockAge),
// then removed and the transaction tried again; one that stays comes back
// as *LockError.
func (r *Repo) UpdateRefs(ctx context.Context, reason string, updates ...RefUpdate) error {
	began := time.Now()
	for {
		txn, err := r.BeginRefs(ctx, reason)
		if err != nil {
			return err
		}
		err = txn.Commit(updates...)
		if again, werr := waitForLock(ctx, began, err); !again {
			return werr
		}
	}
}

// MoveRefs moves refs as updates say one by one, not in one transaction
// (as git fetch moves its tracking refs): each in this process where it
// may (MoveRef, as who, tried again while a lock in its way may be a live
// writer's, as UpdateRefs does), the others, and the refs it removes, with
// one git update-ref (in one transaction). A ref found moved meanwhile
// stops it with ErrStale; the refs it moved before stay moved.
func (r *Repo) MoveRefs(ctx context.Context, reason string, who Signature, updates ...RefUpdate) error {
	var rest []RefUpdate
	for _, u := range updates {
		if u.New.IsZero() {
			rest = append(rest, u)
			continue
		}
		began := time.Now()
		for {
			err := r.MoveRef(u, reason, who)
			if errors.Is(err, ErrNeedGit) {
				rest = append(rest, u)
				break
			}
			if again, werr := waitForLock(ctx, began, err); !again {
				if werr != nil {
					return werr
				}
				break
			}
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return r.UpdateRefs(ctx, reason, rest...)
}

// waitForLock says whether a ref update begun at began that failed with
// err is tried again: at once when it removed a stale lock of git's, and
// after a short pause while a lock in its way may be a live git's (young,
// or held by a running git for up to 2 s). It returns err otherwise, or
// ctx's error if ctx ends during the pause.
func waitForLock(ctx context.Context, began time.Time, err error) (bool, error) {
	var le *LockError
	switch {
	case errors.Is(err, errLockCleared):
		return true, nil
	case errors.As(err, &le) && le.young && time.Since(began) < StaleLockAge+time.Second,
		errors.As(err, &le) && le.held && time.Since(began) < 2*time.Second:
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(time.Duration(20+rand.IntN(80)) * time.Millisecond):
		}
		return true, nil
	}
	return false, err
}

// PushWaiting is Push for a command that has nothing else to do meanwhile
// (git liza sync): a lock of git's in the way on a remote this machine can
// read (a path) is waited for as UpdateRefs waits for a local one
// (waitForLock), since a push killed a moment ago may have left it, and it
// is removed once stale.
func (r *Repo) PushWaiting(ctx context.Context, remote string, updates ...RefUpdate) error {
	began := time.Now()
	for {
		err := r.Push(ctx, remote, updates...)
		if again, werr := waitForLock(ctx, began, err); !again {
			return werr
		}
	}
}

// errLockCleared is a ref update that failed on a stale lock, now removed:
// the update may be tried again at once. (A type of its own rather than
// fmt.Errorf, which would run fmt at every start of the program.)
var errLockCleared error = lockCleared{}

type lockCleared struct{}

func (lockCleared) Error() string { return ErrStale.Error() + ": a stale lock was removed" }
func (lockCleared) Unwrap() error { return ErrStale }

// RefTxn is a `git update-ref --stdin` process. It takes no lock until
// Commit sends its updates, so a caller may start it before it knows what
// to write, and the process's start-up then overlaps the caller's work.
//
// core.warnAmbiguousRefs is off because git 2.39's update-ref was seen to
// lose updates under concurrent pack-refs when it resolves ambiguous names.
type RefTxn struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  io.ReadCloser
	stderr  bytes.Buffer
	args    []string
	started chan error // the result of starting the process
	done    bool
	algo    hashAlgo // the repository's, to spell the null id
	repo    *Repo
}

// BeginRefs starts a ref transaction; reason is the reflog message. The
// process is started in the background: an error starting it is reported
// by Commit.
func (r *Repo) BeginRefs(ctx context.Context, reason string) (*RefTxn, error) {
	if err := CheckGit(); err != nil {
		return nil, err
	}
	args := []string{"-c", "core.warnAmbiguousRefs=false", "update-ref", "--create-reflog", "--stdin"}
	if reason != "" {
		args = append(args, "-m", reason)
	}
	t := &RefTxn{args: args[2:], started: make(chan error, 1), algo: r.algo, repo: r}
	t.cmd = exec.CommandContext(ctx, "git", args...)
	t.cmd.Dir = r.Dir()
	t.cmd.Env = inEnglish(ContainEnv(append(os.Environ(), RefUpdateEnv+"=1")))
	t.cmd.Stderr = &t.stderr
	ownGroup(t.cmd)
	in, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	t.stdin = in
	if t.stdout, err = t.cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	// Starting a process blocks the calling thread until the child has
	// run exec; in a goroutine, the caller goes on meanwhile.
	go func() { t.started <- t.cmd.Start() }()
	return t, nil
}

// wait waits until the process has started, and says why it could not.
func (t *RefTxn) wait() error {
	err := <-t.started
	t.started <- err
	if err != nil {
		t.stdin.Close()
		return &GitError{Args: t.args, ExitCode: -1, Stderr: err.Error()}
	}
	return nil
}

// Commit sends the updates and waits for git to apply them all or none.
func (t *RefTxn) Commit(updates ...RefUpdate) error {
	if t.done {
		return errors.New("ref transaction already finished")
	}
	// git refuses to point a ref at an object it cannot find; on an error
	// here the caller's Abort ends the process.
	if err := flushAllHeld(); err != nil {
		return err
	}
	t.done = true
	if err := t.wait(); err != nil {
		return err
	}
	var in strings.Builder
	in.WriteString("start\n")
	// The null id that says "must not exist" is as long as the
	// repository's ids: git refuses 40 zeros in a SHA-256 repository.
	spell := func(h Hash) string {
		if h.IsZero() {
			return t.algo.nullHex()
		}
		return h.String()
	}
	for _, u := range updates {
		if u.New.IsZero() {
			fmt.Fprintf(&in, "delete %s %s\n", u.Name, spell(u.Old))
		} else {
			fmt.Fprintf(&in, "update %s %s %s\n", u.Name, u.New, spell(u.Old))
		}
	}
	in.WriteString("prepare\ncommit\n")
	_, werr := io.WriteString(t.stdin, in.String())
	t.stdin.Close()
	// git answers each command on stdout; "commit: ok" comes once every
	// ref has moved and the reflogs are written. The process's own exit
	// is not waited for then.
	var out bytes.Buffer
	br := bufio.NewReader(t.stdout)
	for werr == nil {
		line, err := br.ReadString('\n')
		out.WriteString(line)
		if line == "commit: ok\n" {
			go t.cmd.Wait()
			return nil
		}
		if err != nil {
			break
		}
	}
	err := t.cmd.Wait()
	if err == nil {
		err = werr
	}
	if err == nil {
		err = fmt.Errorf("update-ref ended without committing: %q", out.String())
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	gerr := &GitError{Args: t.args, ExitCode: code, Stderr: t.stderr.String()}
	if staleRef(t.stderr.String()) {
		return t.repo.lockedRef(gerr, t.stderr.String())
	}
	return gerr
}

// Abort ends a transaction that will not commit; nothing moves. It does
// not wait for the process to end.
func (t *RefTxn) Abort() {
	if t.done {
		return
	}
	t.done = true
	go func() {
		if t.wait() == nil {
			t.stdin.Close()
			_, _ = io.Copy(io.Discard, t.stdout)
			_ = t.cmd.Wait()
		}
	}()
}

// lockedRef is a ref update lost to a lock: when git says one of its lock
// files is in the way, a stale one is removed (the caller's retry then
// passes) and a live one comes back as *LockError, which names it; either
// way the error is ErrStale, a race lost.
func (r *Repo) lockedRef(err error, stderr string) error {
	path, found := LockIn(stderr)
	if !found {
		return ErrStale
	}
	if _, serr := os.Stat(filepath.Dir(path)); serr != nil {
		// Not on this machine (a remote's).
		return ErrStale
	}
	return r.clearOrName(path, err)
}

// clearOrName removes the lock of git's at path when it is stale
// (errLockCleared: the caller tries again at once), and otherwise names it
// in a *LockError wrapping err.
func (r *Repo) clearOrName(path string, err error) error {
	v, why, cerr := r.clearStaleLock(path)
	switch {
	case cerr != nil:
		return errors.Join(ErrStale, cerr)
	case v == lockGone, v == lockRemoved:
		return errLockCleared
	}
	return &LockError{Path: path, Why: why, Err: err, young: v == lockYoung, held: v == lockHeld}
}

// staleRef recognises update-ref's complaints about a ref that moved or is
// locked by a concurrent writer.
func staleRef(stderr string) bool {
	// A name clash (refs/heads/a/b exists, so refs/heads/a cannot) is
	// permanent, however the message continues.
	if strings.Contains(stderr, "exists; cannot create") || strings.Contains(stderr, "at the same time") {
		return false
	}
	for _, s := range []string{
		"but expected",
		"reference already exists",
		"File exists",
		"unable to resolve reference",
		"cannot lock ref",
		"incorrect old value",
		"is at ",
	} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}
