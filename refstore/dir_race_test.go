package refstore

import (
	"context"
	"testing"
	"time"
)

// git gc packs the refs (git pack-refs --all --prune) and removes the
// directories their loose files leave empty. A MoveRef that made the
// ref's directory and then waits for its turn among git-liza's writers
// (another operation moves the state meanwhile) finds it gone when it
// creates the ref's lock. git itself makes the directory again and
// retries (raceproof_create_file).
func TestMoveRefBesidePackRefsPrune(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
	tracking := "refs/liza/remotes/origin/state"
	git(t, dir, "update-ref", tracking, head.String())
	who := Signature{Name: "Ada", Email: "ada@example.com", When: time.Now()}
	next, err := r.WriteCommit(hashOf(t, git(t, dir, "rev-parse", "HEAD^{tree}")), []Hash{head}, who, "next")
	if err != nil {
		t.Fatal(err)
	}
	beforeRefTurn = func() {
		beforeRefTurn = nil
		// While this writer waits for its turn: git gc's pack-refs.
		git(t, dir, "pack-refs", "--all", "--prune")
	}
	defer func() { beforeRefTurn = nil }()
	err = r.MoveRefs(context.Background(), "liza: fetch origin", who, RefUpdate{Name: tracking, Old: head, New: next})
	if err != nil {
		t.Fatalf("MoveRefs beside git pack-refs --all --prune: %v", err)
	}
	if got, _, _ := r.ReadRef(tracking); got != next {
		t.Fatalf("%s at %s, want %s", tracking, got, next)
	}
}
