package ops_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// TestLeaseThiefWithFastClock: coder-1 holds task a until 10:05. At 10:01:03
// by every honest clock, coder-2's clock reads 4.5 minutes ahead (10:05:33),
// within the skew a commit's date may have. Its claim is refused where it
// is made; one made by a git-liza that trusts its own clock is refused by
// a guarded remote and by a clone, whose clocks read 10:01:03. Once the
// lease is over by every clock within the bound, coder-2 takes it.
func TestLeaseThiefWithFastClock(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	honest := time.Minute + 3*time.Second
	fast := honest + 4*time.Minute + 30*time.Second
	thief := serviceAt(t, human, "coder-2", fast)

	// Made here: refused, whatever the thief's clock says.
	_, err := thief.Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true})
	if err == nil || !strings.Contains(err.Error(), "task a is claimed by coder-1 until 2026-01-17T10:05:00Z; a lease is taken over 5m0s after it ends") {
		t.Fatalf("claim with a fast clock: %v, want a refusal", err)
	}

	// Made by a git-liza that trusts its own clock, then checked by a
	// guarded remote and by a clone at the honest time.
	old := stateTip(t, human)
	base, _ := refstore.ParseHash(git(t, human.Repo.WorkTree, "rev-parse", "integration"))
	forged, err := thief.ClaimTrustingOwnClock(ctx, "a", base)
	if err != nil {
		t.Fatal(err)
	}
	server := serviceAt(t, human, "", honest)
	problems, err := server.CheckPush(ctx, []refstore.RefUpdate{{Name: refstore.StateRef, Old: old, New: forged}})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "claim by coder-2 is refused on its parent state: task a is claimed by coder-1 until 2026-01-17T10:05:00Z") {
		t.Fatalf("guarded remote: %q, want the claim refused", problems)
	}
	v, err := server.Validate(ctx, ops.ValidateRequest{History: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Problems) != 1 || !strings.Contains(v.Problems[0].Msg, "task a is claimed by coder-1 until") {
		t.Fatalf("clone: %v, want the claim refused", v.Problems)
	}
	git(t, human.Repo.WorkTree, "update-ref", refstore.StateRef, old.String())

	// Over by every clock: coder-2's honest takeover lands, and the
	// remote and a clone at the same time take it.
	later := 10 * time.Minute
	r, err := serviceAt(t, human, "coder-2", later).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true})
	if err != nil || r.Kind != string(ops.ClaimExpired) {
		t.Fatalf("honest takeover: %+v, %v", r, err)
	}
	server = serviceAt(t, human, "", later)
	if problems, err := server.CheckPush(ctx, []refstore.RefUpdate{{Name: refstore.StateRef, Old: old, New: stateTip(t, human)}}); err != nil || len(problems) != 0 {
		t.Fatalf("guarded remote on the honest takeover: %q, %v", problems, err)
	}
	if v, err := server.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) != 0 {
		t.Fatalf("clone on the honest takeover: %v, %v", v, err)
	}
}
