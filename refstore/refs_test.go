package refstore

import (
	"context"
	"errors"
	"testing"
)

// twoCommits returns a repository and two commits c1 (HEAD~1) and c2 (HEAD).
func twoCommits(t *testing.T) (*Repo, Hash, Hash) {
	t.Helper()
	dir := newRepo(t)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
	return open(t, dir), hashOf(t, git(t, dir, "rev-parse", "HEAD~1")), hashOf(t, git(t, dir, "rev-parse", "HEAD"))
}

// wantRef checks a ref with ReadRef and with git itself; a zero want
// means the ref must not exist.
func wantRef(t *testing.T, r *Repo, name string, want Hash) {
	t.Helper()
	got, ok, err := r.ReadRef(name)
	if err != nil {
		t.Fatalf("ReadRef(%s): %v", name, err)
	}
	out, gerr := runGit(r.Dir(), nil, nil, "rev-parse", "--verify", "--quiet", name)
	if want.IsZero() {
		if ok || gerr == nil {
			t.Fatalf("%s exists (ReadRef %s, git %q), want it absent", name, got, out)
		}
		return
	}
	if !ok || got != want || out != want.String() {
		t.Fatalf("%s: ReadRef %s (exists %v), git %q; want %s", name, got, ok, out, want)
	}
}

func TestUpdateRefsCreate(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := context.Background()
		if err := r.UpdateRefs(ctx, "liza: init", RefUpdate{Name: StateRef, Old: ZeroID, New: c1}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c1)
		// The reflog records the reason, even for a ref outside refs/heads.
		if got := git(t, r.Dir(), "log", "-g", "--format=%gs", StateRef); got != "liza: init" {
			t.Errorf("reflog %q", got)
		}

		// Creating it again loses: it exists.
		err := r.UpdateRefs(ctx, "again", RefUpdate{Name: StateRef, Old: ZeroID, New: c2})
		if !errors.Is(err, ErrStale) {
			t.Fatalf("create of an existing ref: %v, want ErrStale", err)
		}
		wantRef(t, r, StateRef, c1)

		// A move from the right old value works.
		if err := r.UpdateRefs(ctx, "move", RefUpdate{Name: StateRef, Old: c1, New: c2}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c2)
	})
}

func TestUpdateRefsStaleOld(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := context.Background()
		git(t, r.Dir(), "update-ref", StateRef, c2.String())
		err := r.UpdateRefs(ctx, "stale", RefUpdate{Name: StateRef, Old: c1, New: c1})
		if !errors.Is(err, ErrStale) {
			t.Fatalf("stale old value: %v, want ErrStale", err)
		}
		wantRef(t, r, StateRef, c2)

		// Expecting a ref that does not exist is stale too (it was deleted
		// under us).
		err = r.UpdateRefs(ctx, "gone", RefUpdate{Name: "refs/liza/gone", Old: c1, New: c2})
		if !errors.Is(err, ErrStale) {
			t.Fatalf("old value for a missing ref: %v, want ErrStale", err)
		}
		wantRef(t, r, "refs/liza/gone", Hash{})
	})
}

func TestUpdateRefsAllOrNothing(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := context.Background()
		git(t, r.Dir(), "update-ref", "refs/heads/a", c1.String())
		git(t, r.Dir(), "update-ref", "refs/heads/b", c1.String())
		err := r.UpdateRefs(ctx, "both",
			RefUpdate{Name: "refs/heads/a", Old: c1, New: c2}, // fine alone
			RefUpdate{Name: "refs/heads/b", Old: c2, New: c1}, // stale
			RefUpdate{Name: StateRef, Old: ZeroID, New: c2},   // fine alone
		)
		if !errors.Is(err, ErrStale) {
			t.Fatalf("one stale update: %v, want ErrStale", err)
		}
		wantRef(t, r, "refs/heads/a", c1)
		wantRef(t, r, "refs/heads/b", c1)
		wantRef(t, r, StateRef, Hash{})

		// With both right, both move.
		if err := r.UpdateRefs(ctx, "both",
			RefUpdate{Name: "refs/heads/a", Old: c1, New: c2},
			RefUpdate{Name: "refs/heads/b", Old: c1, New: c2},
		); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, "refs/heads/a", c2)
		wantRef(t, r, "refs/heads/b", c2)
	})
}

func TestRefTxnBeginCommit(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := context.Background()
		txn, err := r.BeginRefs(ctx, "started early")
		if err != nil {
			t.Fatal(err)
		}
		// Nothing is locked while the transaction waits: another writer may
		// move the ref in between, and then the commit is stale.
		git(t, r.Dir(), "update-ref", StateRef, c2.String())
		if err := txn.Commit(RefUpdate{Name: StateRef, Old: ZeroID, New: c1}); !errors.Is(err, ErrStale) {
			t.Fatalf("commit after a concurrent create: %v, want ErrStale", err)
		}
		wantRef(t, r, StateRef, c2)
		if err := txn.Commit(); err == nil {
			t.Fatal("a second Commit on a finished transaction succeeded")
		}
		txn.Abort() // harmless after Commit

		txn, err = r.BeginRefs(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := txn.Commit(RefUpdate{Name: StateRef, Old: c2, New: c1}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c1)
	})
}

func TestRefTxnAbort(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := context.Background()
		git(t, r.Dir(), "update-ref", StateRef, c1.String())
		txn, err := r.BeginRefs(ctx, "aborted")
		if err != nil {
			t.Fatal(err)
		}
		txn.Abort()
		txn.Abort() // twice is fine
		wantRef(t, r, StateRef, c1)
		if err := txn.Commit(RefUpdate{Name: StateRef, Old: c1, New: c2}); err == nil {
			t.Fatal("Commit after Abort succeeded")
		}
		wantRef(t, r, StateRef, c1)
		// No lock is left behind: the ref still moves.
		if err := r.UpdateRefs(ctx, "after abort", RefUpdate{Name: StateRef, Old: c1, New: c2}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c2)
	})
}

func TestUpdateRefsDelete(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := context.Background()
		git(t, r.Dir(), "update-ref", StateRef, c1.String())
		if err := r.UpdateRefs(ctx, "delete stale", RefUpdate{Name: StateRef, Old: c2}); !errors.Is(err, ErrStale) {
			t.Fatalf("delete with a stale old value: %v, want ErrStale", err)
		}
		wantRef(t, r, StateRef, c1)
		if err := r.UpdateRefs(ctx, "delete", RefUpdate{Name: StateRef, Old: c1}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, Hash{})

		// A packed ref is deleted too.
		git(t, r.Dir(), "update-ref", "refs/liza/packed", c1.String())
		git(t, r.Dir(), "pack-refs", "--all")
		if err := r.UpdateRefs(ctx, "delete packed", RefUpdate{Name: "refs/liza/packed", Old: c1}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, "refs/liza/packed", Hash{})
	})
}

func TestUpdateRefsPackedRef(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := context.Background()
		git(t, r.Dir(), "update-ref", StateRef, c1.String())
		git(t, r.Dir(), "pack-refs", "--all", "--prune")
		if err := r.UpdateRefs(ctx, "stale packed", RefUpdate{Name: StateRef, Old: c2, New: c2}); !errors.Is(err, ErrStale) {
			t.Fatalf("stale packed ref: %v, want ErrStale", err)
		}
		if err := r.UpdateRefs(ctx, "move packed", RefUpdate{Name: StateRef, Old: c1, New: c2}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c2)
	})
}

// TestUpdateRefsLockHeldIsStale: a concurrent writer's lock file is a lost
// race, to be retried (by the compare-and-swap loop, which commits a
// transaction of its own; UpdateRefs waits for the lock, see
// TestRefUpdateMeetsLock).
func TestUpdateRefsLockHeldIsStale(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		git(t, r.Dir(), "update-ref", StateRef, c1.String())
		writeFile(t, r.CommonDir+"/refs/liza/state.lock", c2.String()+"\n")
		txn, err := r.BeginRefs(context.Background(), "locked")
		if err != nil {
			t.Fatal(err)
		}
		err = txn.Commit(RefUpdate{Name: StateRef, Old: c1, New: c2})
		if !errors.Is(err, ErrStale) {
			t.Fatalf("update under a held lock: %v, want ErrStale", err)
		}
		wantRef(t, r, StateRef, c1)
	})
}

// TestUpdateRefsPermanentFailureIsNotStale: failures that no retry can cure
// must come back as *GitError, not ErrStale, or the CAS loop retries them
// until its budget is spent and reports contention.
func TestUpdateRefsPermanentFailureIsNotStale(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, _ := twoCommits(t)
		ctx := context.Background()
		missing := missingID()
		for _, c := range []struct {
			name string
			prep func()
			u    RefUpdate
		}{
			{"bad ref name", nil, RefUpdate{Name: "refs/heads/bad..name", Old: ZeroID, New: c1}},
			{"missing object", nil, RefUpdate{Name: "refs/heads/new", Old: ZeroID, New: missing}},
			{"directory/file conflict", func() {
				git(t, r.Dir(), "update-ref", "refs/heads/integration/x", c1.String())
			}, RefUpdate{Name: "refs/heads/integration", Old: ZeroID, New: c1}},
		} {
			t.Run(c.name, func(t *testing.T) {
				if c.prep != nil {
					c.prep()
				}
				err := r.UpdateRefs(ctx, "permanent", c.u)
				var ge *GitError
				if errors.Is(err, ErrStale) || !errors.As(err, &ge) {
					t.Fatalf("%v (%T), want a *GitError that is not ErrStale", err, err)
				}
				if ge.Args[0] != "update-ref" || ge.ExitCode == 0 || ge.Stderr == "" {
					t.Errorf("GitError %+v", ge)
				}
			})
		}
	})
}
