package worktree

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/proc"
)

// Two claims of one task in one repository: the first made the worktree
// and the branch, lost its compare-and-swap, and undoes them; the second
// makes its worktree meanwhile. Undo deleted the branch after it had let
// the worktree commands' lock go, so the second claim, taking the branch
// it found, had it deleted under it: "fatal: invalid reference: task/t1"
// (eight coders in four clones, remote_concurrent.txtar, once in CI), or a
// worktree on a branch that no longer exists. The branch now goes while
// the lock is held: the second claim waits for it and makes its own.
func TestUndoRacesAClaim(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	base := r.base
	wt, err := Path(r.repo, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if made, err := Create(ctx, r.repo, "t1", base, "coder-1", nil); err != nil || !made {
		t.Fatalf("the first claim's worktree: %v, made the branch %v", err, made)
	}
	second := make(chan error, 1)
	proc.SetCrashHook(func(point string) {
		if point != "worktree:branch" {
			return
		}
		// The first claim is about to delete the branch: the second
		// claim makes its worktree now, and the first goes on once it
		// has, or after a while if it cannot (the lock is held).
		go func() {
			_, err := Create(ctx, r.repo, "t1", base, "coder-2", nil)
			second <- err
		}()
		select {
		case err := <-second:
			second <- err
		case <-time.After(500 * time.Millisecond):
		}
	})
	defer proc.SetCrashHook(nil)
	if err := Undo(ctx, r.repo, "t1", true); err != nil {
		t.Fatalf("undo: %v", err)
	}
	proc.SetCrashHook(nil)
	if err := <-second; err != nil {
		t.Fatalf("the second claim's worktree: %v", err)
	}
	if out, err := r.try("rev-parse", "--verify", "refs/heads/"+Branch("t1")); err != nil {
		t.Fatalf("the second claim's worktree has no branch %s: %s", Branch("t1"), out)
	}
	if out, err := r.try("-C", wt, "symbolic-ref", "HEAD"); err != nil || strings.TrimSpace(out) != "refs/heads/"+Branch("t1") {
		t.Fatalf("the worktree's HEAD: %q, %v", out, err)
	}
	if out, err := r.try("-C", wt, "rev-parse", "HEAD"); err != nil || strings.TrimSpace(out) != base.String() {
		t.Fatalf("the worktree's HEAD does not resolve to the base: %q, %v", out, err)
	}
}
