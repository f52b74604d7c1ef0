package refstore

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClearWorktreeLocks: a lock a killed git left in a linked checkout's
// git directory (index.lock) is removed once no git works in the checkout
// and it is StaleLockAge old, a younger one after a wait; one that a git
// working in the checkout may hold is kept, and so is a lock of another
// checkout that this one's .git file was made to name.
func TestClearWorktreeLocks(t *testing.T) {
	dir := newRepo(t)
	for _, args := range [][]string{{"commit", "-q", "--allow-empty", "-m", "c"}, {"worktree", "add", "-q", "wt", "-b", "wt"}, {"worktree", "add", "-q", "other", "-b", "other"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	r := open(t, dir)
	wt := filepath.Join(dir, "wt")
	lock := filepath.Join(r.CommonDir, "worktrees", "wt", "index.lock")
	aged := func(path string, age time.Duration) {
		t.Helper()
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}

	// Old, and no git at work: removed at once.
	aged(lock, time.Minute)
	if got, err := r.ClearWorktreeLocks(context.Background(), wt); err != nil || len(got) != 1 || !strings.HasPrefix(got[0], "removed "+lock+": ") {
		t.Fatalf("removed %v, %v; want %s", got, err, lock)
	}

	// Young: removed once old enough.
	aged(lock, StaleLockAge-500*time.Millisecond)
	start := time.Now()
	if got, err := r.ClearWorktreeLocks(context.Background(), wt); err != nil || len(got) != 1 {
		t.Fatalf("removed %v, %v; want the young lock, once old", got, err)
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Errorf("a lock %s young removed after %s", StaleLockAge-500*time.Millisecond, waited)
	}

	// A git at work in the checkout may hold it: kept.
	aged(lock, time.Minute)
	// (Through sh: this process's own git children are taken to hold
	// nothing it asks about.)
	held := exec.Command("sh", "-c", "git cat-file --batch; :")
	held.Dir = wt
	stdin, _ := held.StdinPipe()
	stdout, _ := held.StdoutPipe()
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	// Its answer says it runs.
	if _, err := stdin.Write([]byte("HEAD\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); held.Wait() }()
	if got, err := r.ClearWorktreeLocks(context.Background(), wt); err != nil || len(got) != 0 {
		t.Errorf("removed %v, %v while git works in the checkout", got, err)
	}
	stdin.Close()
	held.Wait()

	// The checkout's .git made to name another registration: nothing of
	// that one's is touched.
	os.Remove(lock)
	otherLock := filepath.Join(r.CommonDir, "worktrees", "other", "index.lock")
	aged(otherLock, time.Minute)
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(r.CommonDir, "worktrees", "other")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ClearWorktreeLocks(context.Background(), wt); err != nil || len(got) != 0 {
		t.Errorf("removed %v, %v through a .git naming another checkout's registration", got, err)
	}
	if _, err := os.Stat(otherLock); err != nil {
		t.Errorf("the other checkout's lock: %v", err)
	}
}
