package refstore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var who = Signature{Name: "coder-1", Email: "coder-1@liza.invalid"}

// MoveRef moves a ref as git update-ref would: from the right old value
// only, creating it only where it does not exist, over a packed copy,
// with a reflog line git reads back; a repository read through git's
// plumbing is left to git.
func TestMoveRef(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		err := r.MoveRef(RefUpdate{Name: StateRef, New: c1}, "liza: init", who)
		if mode.plumbing {
			if !errors.Is(err, ErrNeedGit) {
				t.Fatalf("MoveRef read through git: %v, want ErrNeedGit", err)
			}
			wantRef(t, r, StateRef, ZeroID)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c1)
		if err := r.MoveRef(RefUpdate{Name: StateRef, New: c2}, "again", who); !errors.Is(err, ErrStale) {
			t.Fatalf("create of an existing ref: %v, want ErrStale", err)
		}
		if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c2, New: c1}, "wrong old", who); !errors.Is(err, ErrStale) {
			t.Fatalf("move from a wrong old value: %v, want ErrStale", err)
		}
		wantRef(t, r, StateRef, c1)
		if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c2}, "liza: claim", who); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c2)
		// Packed, with no loose file: the move checks the packed value.
		git(t, r.Dir(), "pack-refs", "--all")
		if _, err := os.Stat(filepath.Join(r.CommonDir, "refs", "liza", "state")); err == nil {
			t.Fatal("pack-refs left the loose file")
		}
		if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c1}, "stale packed", who); !errors.Is(err, ErrStale) {
			t.Fatalf("move from a wrong old packed value: %v, want ErrStale", err)
		}
		if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c2, New: c1}, "liza: submit", who); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, StateRef, c1)
		// git reads the reflog back, newest first, with who and why.
		got := git(t, r.Dir(), "log", "-g", "--format=%H %gs %gn <%ge>", StateRef)
		want := strings.Join([]string{
			c1.String() + " liza: submit coder-1 <coder-1@liza.invalid>",
			c2.String() + " liza: claim coder-1 <coder-1@liza.invalid>",
			c1.String() + " liza: init coder-1 <coder-1@liza.invalid>",
		}, "\n")
		if got != want {
			t.Errorf("reflog:\n%s\nwant:\n%s", got, want)
		}
		if _, err := os.Stat(filepath.Join(r.CommonDir, "refs", "liza", "state.lock")); err == nil {
			t.Error("a lock stayed")
		}
		git(t, r.Dir(), "fsck", "--no-progress")
	})
}

// Another writer's lock is a race lost and stays; one a killed writer
// left is removed once stale, and the next try passes.
func TestMoveRefLocked(t *testing.T) {
	r, c1, c2 := twoCommits(t)
	if err := r.MoveRef(RefUpdate{Name: StateRef, New: c1}, "init", who); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.CommonDir, "refs", "liza", "state.lock")
	writeFile(t, lock, c2.String()+"\n")
	err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c2}, "claim", who)
	var le *LockError
	if !errors.Is(err, ErrStale) || !errors.As(err, &le) || le.Path != lock {
		t.Fatalf("move past a held lock: %v, want a LockError naming it", err)
	}
	if _, serr := os.Stat(lock); serr != nil {
		t.Fatal("a live writer's lock was removed")
	}
	old := time.Now().Add(-2 * StaleLockAge)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c2}, "claim", who); !errors.Is(err, errLockCleared) {
		t.Fatalf("move past a stale lock: %v, want it cleared", err)
	}
	if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c2}, "claim", who); err != nil {
		t.Fatalf("move after the stale lock went: %v", err)
	}
	wantRef(t, r, StateRef, c2)
}

// Where git would run a reference-transaction hook that is not
// git-liza's (or that chains one), or do more than move the ref, MoveRef
// leaves the move to git; git-liza's own hook does not stop it. git-liza's
// git runs hooks only from a core.hooksPath of the user's own config
// (contain.go): hooks in the repository, whoever put them there, do not
// count.
func TestMoveRefLeavesToGit(t *testing.T) {
	for _, c := range []struct {
		name   string
		setup  func(t *testing.T, dir string)
		direct bool
	}{
		{"own hook", func(t *testing.T, dir string) {
			hook(t, dir, "reference-transaction", "#!/bin/sh\n"+HookMarker+"\nexit 0\n")
		}, true},
		{"foreign hook", func(t *testing.T, dir string) {
			hook(t, dir, "reference-transaction", "#!/bin/sh\nexit 0\n")
		}, true},
		{"chained hook", func(t *testing.T, dir string) {
			hook(t, dir, "reference-transaction", "#!/bin/sh\n"+HookMarker+"\nexit 0\n")
			hook(t, dir, "reference-transaction.liza-chained", "#!/bin/sh\nexit 0\n")
		}, true},
		{"not executable", func(t *testing.T, dir string) {
			hook(t, dir, "reference-transaction", "#!/bin/sh\nexit 1\n")
			os.Chmod(filepath.Join(dir, ".git", "hooks", "reference-transaction"), 0o644)
		}, true},
		{"hooks path", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "githooks", "reference-transaction"), "#!/bin/sh\nexit 0\n")
			os.Chmod(filepath.Join(dir, "githooks", "reference-transaction"), 0o755)
			git(t, dir, "config", "core.hooksPath", "githooks")
		}, true},
		{"user's hooks path", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "githooks", "reference-transaction"), "#!/bin/sh\nexit 0\n")
			os.Chmod(filepath.Join(dir, "githooks", "reference-transaction"), 0o755)
			global := filepath.Join(dir, "global.gitconfig")
			writeFile(t, global, "[core]\n\thooksPath = "+filepath.Join(dir, "githooks")+"\n")
			t.Setenv("GIT_CONFIG_GLOBAL", global)
		}, false},
		{"shared", func(t *testing.T, dir string) { git(t, dir, "config", "core.sharedRepository", "group") }, false},
		{"fsync", func(t *testing.T, dir string) { git(t, dir, "config", "core.fsync", "reference") }, false},
		{"symbolic", func(t *testing.T, dir string) { git(t, dir, "symbolic-ref", StateRef, "refs/heads/main") }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := newRepo(t)
			c.setup(t, dir)
			r := open(t, dir)
			head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
			old, _, _ := r.ReadRef(StateRef)
			err := r.MoveRef(RefUpdate{Name: StateRef, Old: old, New: head}, "liza: init", who)
			if c.direct && err != nil || !c.direct && !errors.Is(err, ErrNeedGit) {
				t.Fatalf("MoveRef: %v, want moved %v", err, c.direct)
			}
		})
	}
}

func hook(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, ".git", "hooks", name)
	writeFile(t, p, text)
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Writers in this process and git update-ref processes moving one ref
// from what each read, over and over: every move that reports success
// is in the ref's history, once, and nothing else is.
func TestMoveRefAgainstGit(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	base := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
	if err := r.MoveRef(RefUpdate{Name: StateRef, New: base}, "init", who); err != nil {
		t.Fatal(err)
	}
	const writers, moves = 4, 15
	var mu sync.Mutex
	var landed []Hash
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < moves; {
				tip, _, err := r.ReadRef(StateRef)
				if err != nil {
					t.Error(err)
					return
				}
				parent, err := r.ReadCommit(tip)
				if err != nil {
					t.Error(err)
					return
				}
				c, err := r.WriteCommit(parent.Tree, []Hash{tip}, Signature{Name: who.Name, Email: who.Email, When: time.Now()}, fmt.Sprintf("move %d.%d", w, n))
				if err != nil {
					t.Error(err)
					return
				}
				u := RefUpdate{Name: StateRef, Old: tip, New: c}
				if w%2 == 0 {
					err = r.MoveRef(u, "direct", who)
				} else {
					err = gitMove(dir, u)
				}
				switch {
				case err == nil:
					mu.Lock()
					landed = append(landed, c)
					mu.Unlock()
					n++
				case !errors.Is(err, ErrStale):
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	history := strings.Fields(git(t, dir, "rev-list", "--first-parent", StateRef, "^"+base.String()))
	if len(history) != writers*moves || len(landed) != writers*moves {
		t.Fatalf("%d moves reported, %d in the history, want %d", len(landed), len(history), writers*moves)
	}
	in := map[string]bool{}
	for _, h := range history {
		in[h] = true
	}
	for _, c := range landed {
		if !in[c.String()] {
			t.Errorf("move to %s reported but not in the history", c)
		}
	}
	git(t, dir, "fsck", "--no-progress")
}

// gitMove is a move by git update-ref, a lost race as ErrStale.
func gitMove(dir string, u RefUpdate) error {
	cmd := exec.Command("git", "update-ref", "-m", "git", u.Name, u.New.String(), u.Old.String())
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if staleRef(string(out)) {
			return ErrStale
		}
		return errors.New(string(out))
	}
	return nil
}

// The lock of a git-liza writer killed while it moved a ref is named in
// liza/refs.pending: the next writer removes it at once instead of waiting
// for it to go stale. A lock made since at that path is not taken for it.
func TestMoveRefAfterKilledWriter(t *testing.T) {
	r, c1, c2 := twoCommits(t)
	if err := r.MoveRef(RefUpdate{Name: StateRef, New: c1}, "init", who); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.CommonDir, "refs", "liza", "state.lock")
	writeFile(t, lock, c2.String()+"\n")
	fi, err := os.Lstat(lock)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, r.pending(), lockID(lock, fi))
	if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c2}, "claim", who); !errors.Is(err, errLockCleared) {
		t.Fatalf("move past a killed writer's lock: %v, want it cleared", err)
	}
	if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c2}, "claim", who); err != nil {
		t.Fatal(err)
	}
	wantRef(t, r, StateRef, c2)

	// git's lock, made where a killed writer's was: it stays.
	writeFile(t, r.pending(), lockID(lock, fi))
	later := fi.ModTime().Add(-time.Minute)
	writeFile(t, lock, c1.String()+"\n")
	if err := os.Chtimes(lock, later, time.Now()); err != nil {
		t.Fatal(err)
	}
	err = r.MoveRef(RefUpdate{Name: StateRef, Old: c2, New: c1}, "claim", who)
	var le *LockError
	if !errors.As(err, &le) {
		t.Fatalf("move past another lock at that path: %v, want a LockError", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("a lock the pending file does not name was removed")
	}
}

// A move names its lock in liza/refs.pending and empties the file when it
// is done, keeping it: making a file is what a move's writes cost most (a
// new inode), and a move made one here and removed it each time.
func TestMoveRefKeepsPendingFile(t *testing.T) {
	r, c1, c2 := twoCommits(t)
	if err := r.MoveRef(RefUpdate{Name: StateRef, New: c1}, "init", who); err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(r.pending())
	if err != nil {
		t.Fatalf("after a move: %v", err)
	}
	if err := r.MoveRef(RefUpdate{Name: StateRef, Old: c1, New: c2}, "claim", who); err != nil {
		t.Fatal(err)
	}
	again, err := os.Stat(r.pending())
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(first, again) || r.readPending() != "" {
		t.Fatalf("refs.pending made anew (%v) or still naming %q", !os.SameFile(first, again), r.readPending())
	}
	wantRef(t, r, StateRef, c2)
}

// The pending file is written over, never cut: a name shorter than the
// one before it is still read whole, and no more; a file an older
// git-liza wrote (no NUL) is read as it was written.
func TestPendingNameOverLongerOne(t *testing.T) {
	r, _, _ := twoCommits(t)
	if err := os.MkdirAll(filepath.Dir(r.pending()), 0o755); err != nil {
		t.Fatal(err)
	}
	long := "/a/much/longer/path/to/refs/heads/some-branch.lock\n123 456\n"
	short := "/x/refs/liza/state.lock\n7 8\n"
	for _, c := range []struct{ write, want string }{{long, long}, {short, short}, {"", ""}} {
		if err := r.namePending(c.write); err != nil {
			t.Fatal(err)
		}
		if got := r.readPending(); got != c.want {
			t.Errorf("after naming %q: read %q", c.write, got)
		}
	}
	writeFile(t, r.pending(), short) // as an older git-liza wrote it
	if got := r.readPending(); got != short {
		t.Errorf("an older git-liza's name read as %q", got)
	}
}

// MoveRefs moves refs one by one: where a ref is found moved meanwhile it
// stops with ErrStale and the refs before it stay moved; a ref it removes,
// and every ref of a repository read through git, git moves (those in one
// transaction).
func TestMoveRefs(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		ctx := t.Context()
		a, b, gone := "refs/remotes/hub/liza/state", "refs/liza/state", "refs/remotes/hub/liza/queue/0123456789abcdef"
		if err := r.MoveRefs(ctx, "liza: fetch hub", who, RefUpdate{Name: a, New: c1}, RefUpdate{Name: b, New: c1}, RefUpdate{Name: gone, New: c1}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, a, c1)
		wantRef(t, r, b, c1)
		err := r.MoveRefs(ctx, "liza: add", who, RefUpdate{Name: a, Old: c1, New: c2}, RefUpdate{Name: b, Old: c2, New: c1})
		if !errors.Is(err, ErrStale) {
			t.Fatalf("a ref found moved: %v, want ErrStale", err)
		}
		if mode.plumbing {
			wantRef(t, r, a, c1) // git's one transaction moved neither
		} else {
			wantRef(t, r, a, c2)
		}
		wantRef(t, r, b, c1)
		if err := r.MoveRefs(ctx, "liza: fetch hub", who, RefUpdate{Name: gone, Old: c1}); err != nil {
			t.Fatal(err)
		}
		wantRef(t, r, gone, ZeroID)
		if !mode.plumbing {
			if got := git(t, r.Dir(), "log", "-g", "-1", "--format=%gs %gn", a); got != "liza: add coder-1" {
				t.Errorf("reflog of %s: %q", a, got)
			}
		}
		git(t, r.Dir(), "fsck", "--no-progress")
	})
}
