package refstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// hubOf is twoCommits' repository with an empty bare repository beside
// it as its remote "hub", and the hub's path.
func hubOf(t *testing.T) (*Repo, Hash, Hash, string) {
	r, c1, c2 := twoCommits(t)
	hub := filepath.Join(t.TempDir(), "hub.git")
	git(t, r.Dir(), "init", "-q", "--bare", "--object-format="+mode.format, hub)
	git(t, r.Dir(), "remote", "add", "hub", hub)
	return r, c1, c2, hub
}

// A push that meets a young lock of git's on a remote that is a path (one
// a push killed a moment ago left, or a live push's) waits for it:
// PushWaiting goes through once the lock goes, where Push gives up at
// once, naming the lock.
func TestPushWaitingForLock(t *testing.T) {
	r, c1, _, hub := hubOf(t)
	ctx := context.Background()
	lock := filepath.Join(hub, "refs", "liza", "state.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	u := RefUpdate{Name: StateRef, New: c1}
	var le *LockError
	if err := r.Push(ctx, "hub", u); !errors.As(err, &le) {
		t.Fatalf("Push beside a young lock: %v, want a LockError", err)
	}
	go func() {
		time.Sleep(500 * time.Millisecond)
		os.Remove(lock)
	}()
	// git cannot move the ref while the lock is there: the push that
	// passes is one made after it went.
	if err := r.PushWaiting(ctx, "hub", u); err != nil {
		t.Fatalf("PushWaiting: %v", err)
	}
	if got := git(t, hub, "rev-parse", StateRef); got != c1.String() {
		t.Fatalf("hub's %s is %s, want %s", StateRef, got, c1)
	}
}

// A push the remote took but could not store is told from a hook's
// refusal by receive-pack's report, never by the words around it: a pack
// over the remote's receive.maxInputSize fails to unpack as on a full disk
// (RemoteUnstored), and a pre-receive hook that declines, whatever it
// prints, is a plain refusal.
func TestPushUnstored(t *testing.T) {
	r, c1, c2, hub := hubOf(t)
	ctx := context.Background()

	git(t, hub, "config", "receive.maxInputSize", "20")
	err := r.Push(ctx, "hub", RefUpdate{Name: StateRef, New: c1})
	var rej *ErrRejected
	if !errors.As(err, &rej) || !RemoteUnstored(err) {
		t.Fatalf("a push over the remote's size limit: %v (%#v), want an unstored refusal", err, rej)
	}

	git(t, hub, "config", "--unset", "receive.maxInputSize")
	hook := filepath.Join(hub, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'fatal: unable to write loose object file: No space left on device (unpacker error)'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = r.Push(ctx, "hub", RefUpdate{Name: StateRef, New: c2})
	if !errors.As(err, &rej) || RemoteUnstored(err) {
		t.Fatalf("a hook's refusal that says the disk is full: %v, want a refusal that is not unstored", err)
	}
	if RemoteUnstored(errors.New("[remote rejected] (unpacker error)")) || RemoteUnstored(nil) {
		t.Error("words taken for an unstored push")
	}
}
