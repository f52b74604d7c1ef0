package refstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/proc"
)

// stale dates a lock file back past StaleLockAge.
func stale(t *testing.T, p string) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// A lock of git's is removed only when it is old and no git process works
// in the repository; removing it is told.
func TestClearStaleLock(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	var told []string
	r.Notice = func(s string) { told = append(told, s) }
	lock := filepath.Join(r.CommonDir, "refs", "heads", "main.lock")
	writeFile(t, lock, strings.Repeat("a", 40)+"\n")

	// Young: kept.
	if gone, why, err := r.ClearStaleLock(lock); err != nil || gone || !strings.HasPrefix(why, "it is ") {
		t.Fatalf("young lock: %v %q %v", gone, why, err)
	}
	stale(t, lock)

	// A git process works in the repository (not this process's child,
	// which holds none of its locks): kept.
	fifo := filepath.Join(t.TempDir(), "in")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skip("no mkfifo here")
	}
	cmd := exec.Command("sh", "-c", "git cat-file --batch < "+fifo+" & wait")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The shell opens the fifo before it starts git: wait until git runs.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if pids, _ := proc.GitIn([]string{dir}); len(pids) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the git process never showed in the process table")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if gone, why, err := r.ClearStaleLock(lock); err != nil || gone || !strings.HasPrefix(why, "git (pid ") {
		t.Fatalf("lock with git running: %v %q %v", gone, why, err)
	}
	// But a ref's lock still empty past StaleLockAge is a dead writer's
	// (git writes the value as it locks), whatever git runs: a team whose
	// supervisors fetch all the time kept one for ever, and stood still.
	dead := filepath.Join(r.CommonDir, "refs", "liza", "state.lock")
	writeFile(t, dead, "")
	stale(t, dead)
	if gone, why, err := r.ClearStaleLock(dead); err != nil || !gone {
		t.Fatalf("an empty ref lock 1m old with git running: %v %q %v", gone, why, err)
	}
	young := filepath.Join(r.CommonDir, "refs", "liza", "young.lock")
	writeFile(t, young, "")
	if gone, _, err := r.ClearStaleLock(young); err != nil || gone {
		t.Fatalf("a young empty lock was removed: %v %v", gone, err)
	}
	os.Remove(young)
	told = nil
	in.Close()
	cmd.Wait()

	if gone, why, err := r.ClearStaleLock(lock); err != nil || !gone {
		t.Fatalf("stale lock: %v %q %v", gone, why, err)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("stale lock still there")
	}
	if len(told) != 1 || !strings.HasPrefix(told[0], "removed "+lock+": a lock of git's that a killed git process left (1m0s old") {
		t.Fatalf("told: %q", told)
	}
}

// A ref update that meets a stale lock is a lost race whose retry passes;
// one that meets a young lock says which lock and how to remove it.
func TestRefUpdateMeetsLock(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	ctx := context.Background()
	head, _, _ := r.ReadRef("refs/heads/main")
	lock := filepath.Join(r.CommonDir, "refs", "liza", "state.lock")
	writeFile(t, lock, "")
	commit := func() error {
		txn, err := r.BeginRefs(ctx, "test")
		if err != nil {
			t.Fatal(err)
		}
		return txn.Commit(RefUpdate{Name: "refs/liza/state", New: head})
	}
	err := commit()
	var le *LockError
	if !errors.Is(err, ErrStale) || !errors.As(err, &le) || le.Path != lock {
		t.Fatalf("young lock: %v", err)
	}
	if want := lock + " exists (it is "; !strings.HasPrefix(le.Error(), want) || !strings.HasSuffix(le.Error(), "rm "+lock) {
		t.Fatalf("message %q", le.Error())
	}
	stale(t, lock)
	if err := commit(); !errors.Is(err, ErrStale) || errors.As(err, &le) {
		t.Fatalf("stale lock: %v", err)
	}
	if err := commit(); err != nil {
		t.Fatalf("retry after the stale lock went: %v", err)
	}

	// UpdateRefs waits for a lock nobody holds to turn stale.
	writeFile(t, lock, "")
	almost := time.Now().Add(-StaleLockAge + 300*time.Millisecond)
	os.Chtimes(lock, almost, almost)
	if err := r.UpdateRefs(ctx, "test", RefUpdate{Name: "refs/liza/state", Old: head, New: head}); err != nil {
		t.Fatalf("UpdateRefs past a lock turning stale: %v", err)
	}
}

// GitUnlocking waits for a stale lock in the way of a command that
// changes nothing when it cannot lock, removes it, and runs the command
// again; ClearStaleLocks finds the ones git-liza's commands leave.
func TestGitUnlocking(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	ctx := context.Background()
	git(t, dir, "branch", "gone")
	git(t, dir, "pack-refs", "--all")
	packed := filepath.Join(r.CommonDir, "packed-refs.lock")
	writeFile(t, packed, "")
	stale(t, packed)
	if _, err := r.GitUnlocking(ctx, "branch", "-D", "gone"); err != nil {
		t.Fatalf("branch -D past a stale packed-refs.lock: %v", err)
	}
	for _, p := range []string{"config.lock", "refs/heads/task/x.lock", "refs/liza/state.lock"} {
		writeFile(t, filepath.Join(r.CommonDir, p), "")
		stale(t, filepath.Join(r.CommonDir, p))
	}
	writeFile(t, filepath.Join(r.CommonDir, "refs/heads/young.lock"), "")
	removed, kept, err := r.ClearStaleLocks()
	if err != nil || len(removed) != 3 || len(kept) != 1 || !strings.HasSuffix(kept[0].Path, "young.lock") {
		t.Fatalf("ClearStaleLocks: %v %v %v", removed, kept, err)
	}
}

// TestTryFlock: TryFlock has the lock when nobody holds it, and goes
// without it, at once, while Flock's holder keeps it.
func TestTryFlock(t *testing.T) {
	r := open(t, newRepo(t))
	unlock, ok, err := r.TryFlock("x")
	if err != nil || !ok {
		t.Fatalf("free lock: %v %v", ok, err)
	}
	unlock()
	hold, err := r.Flock("x")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.TryFlock("x"); err != nil || ok {
		t.Fatalf("held lock: had it %v, error %v", ok, err)
	}
	hold()
	unlock, ok, err = r.TryFlock("x")
	if err != nil || !ok {
		t.Fatalf("lock let go: %v %v", ok, err)
	}
	unlock()
}
