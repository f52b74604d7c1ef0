package refstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A watch signals every move of the ref, by this process or by git, and
// the loss of its loose file to pack-refs; it watches the directory again
// when it was removed and a move made it again. A move of another ref in
// the same directory is no signal. A repository read through git's
// plumbing cannot be watched.
func TestWatchRef(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		if err := os.MkdirAll(filepath.Join(r.CommonDir, "refs", "liza"), 0o755); err != nil {
			t.Fatal(err)
		}
		w := r.WatchRef(StateRef)
		defer w.Close()
		if mode.plumbing {
			if w.Watching() {
				t.Fatal("a repository read through git's plumbing is watched")
			}
			return
		}
		if !w.Watching() {
			t.Fatal("refs/liza is not watched")
		}
		drain(w.C)
		wantSignal := func(what string) {
			t.Helper()
			select {
			case <-w.C:
			case <-time.After(10 * time.Second):
				t.Fatalf("no signal after %s", what)
			}
			drain(w.C)
		}
		wantNone := func(what string) {
			t.Helper()
			select {
			case <-w.C:
				t.Fatalf("a signal after %s", what)
			case <-time.After(200 * time.Millisecond):
			}
		}
		if err := r.MoveRef(RefUpdate{Name: StateRef, New: c1}, "liza: init", who); err != nil {
			t.Fatal(err)
		}
		wantSignal("MoveRef made the ref")
		git(t, r.Dir(), "update-ref", StateRef, c2.String(), c1.String())
		wantSignal("git update-ref moved it")
		git(t, r.Dir(), "update-ref", "refs/liza/queue", c2.String())
		wantNone("another ref moved")

		git(t, r.Dir(), "pack-refs", "--all")
		wantSignal("pack-refs took the loose file")
		// Some gits remove the empty directory after packing: so may a
		// user.
		if err := os.Remove(filepath.Join(r.CommonDir, "refs", "liza")); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(10 * time.Second); w.Watching(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal("refs/liza is gone and still said to be watched")
			}
		}
		w.Rearm()
		if w.Watching() {
			t.Fatal("a missing directory is said to be watched")
		}
		git(t, r.Dir(), "update-ref", StateRef, c1.String(), c2.String())
		w.Rearm()
		if !w.Watching() {
			t.Fatal("refs/liza is back and not watched")
		}
		wantSignal("the watch came back") // the ref may have moved meanwhile
		git(t, r.Dir(), "update-ref", StateRef, c2.String(), c1.String())
		wantSignal("git update-ref moved it after the watch came back")
	})
}

// The watch rests on fsnotify, whose backends (inotify on Linux, kqueue on
// macOS and the BSDs, ReadDirectoryChangesW on Windows) report what these
// writers do: the lock file renamed over the ref as git's files backend
// does it, step by step by hand; the ref's file written in place; another
// ref's dance in the same directory (no signal); the directory removed and
// made again.
func TestWatchRefBackend(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		r, c1, c2 := twoCommits(t)
		dir := filepath.Join(r.CommonDir, "refs", "liza")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		w := r.WatchRef(StateRef)
		defer w.Close()
		if !w.Watching() {
			t.Fatal("refs/liza is not watched")
		}
		drain(w.C)
		signalled := func() bool {
			select {
			case <-w.C:
				drain(w.C)
				return true
			case <-time.After(300 * time.Millisecond):
				return false
			}
		}
		dance := func(name string, h Hash) {
			t.Helper()
			lock := filepath.Join(dir, name+".lock")
			f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(h.String() + "\n"); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(lock, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		dance("state", c1)
		if !signalled() {
			t.Fatal("no signal after a lock file was renamed over refs/liza/state")
		}
		dance("state", c2)
		if !signalled() {
			t.Fatal("no signal after a second lock file was renamed over refs/liza/state")
		}
		dance("queue", c1)
		if signalled() {
			t.Fatal("a signal after refs/liza/queue moved")
		}
		if err := os.WriteFile(filepath.Join(dir, "state"), []byte(c1.String()+"\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		if !signalled() {
			t.Fatal("no signal after refs/liza/state was written in place")
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(10 * time.Second); w.Watching(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal("refs/liza is gone and still said to be watched")
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		w.Rearm()
		if !w.Watching() {
			t.Fatal("refs/liza is back and not watched")
		}
		drain(w.C)
		dance("state", c2)
		if !signalled() {
			t.Fatal("no signal after the directory came back and the ref moved")
		}
	})
}

// drain takes the signals of c until none comes for a moment.
func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		case <-time.After(50 * time.Millisecond):
			return
		}
	}
}

// A bell wakes the watchers of its file only, each ring once; ringing a
// file nobody watches makes no bell; Ring(nil) rings them all; a removed
// bell wakes its watcher. A repository read through git's plumbing has
// no bells.
func TestBells(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		r, _, _ := twoCommits(t)
		mine := r.WatchBells([]string{"tasks/t-1.yaml", "liza.yaml"})
		defer mine.Close()
		if mode.plumbing {
			if mine.Watching() {
				t.Fatal("a repository read through git's plumbing has bells")
			}
			return
		}
		other := r.WatchBells([]string{"tasks/t-2.yaml"})
		defer other.Close()
		if !mine.Watching() || !other.Watching() {
			t.Fatal("bells not watched")
		}
		woke := func(b *Bells) bool {
			select {
			case <-b.C:
				drain(b.C)
				return true
			case <-time.After(200 * time.Millisecond):
				return false
			}
		}
		if !woke(mine) || !woke(other) {
			t.Fatal("a new watch does not look once at once")
		}
		r.Ring([]string{"tasks/t-1.yaml", "tasks/t-3.yaml"})
		if !woke(mine) {
			t.Fatal("the bell of tasks/t-1.yaml did not wake its watcher")
		}
		if woke(other) {
			t.Fatal("the bell of tasks/t-1.yaml woke the watcher of tasks/t-2.yaml")
		}
		if _, err := os.Stat(r.bellPath("tasks/t-3.yaml")); !os.IsNotExist(err) {
			t.Fatalf("ringing a file nobody waits for made a bell: %v", err)
		}
		r.Ring(nil)
		if !woke(mine) || !woke(other) {
			t.Fatal("Ring(nil) did not ring every bell")
		}
		r.RemoveBells([]string{"tasks/t-2.yaml"})
		if !woke(other) {
			t.Fatal("removing a bell did not wake its watcher")
		}
	})
}
