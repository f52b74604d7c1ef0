package ops_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestSubmitNeedsCheckpoint: a submission without a checkpoint in the
// task's current iteration is refused (the Service as the command and the
// submit tool call it), and so is such a commit in a replay; one recorded
// under the rules before, which did not ask for a checkpoint, still
// replays as valid.
func TestSubmitNeedsCheckpoint(t *testing.T) {
	human, root := newRepo(t)
	ctx := context.Background()
	ok := succeeds(t)

	// Under the rules before: no checkpoint asked, and the commit replays.
	oh := human.UnderRules(contracts.RulesContained)
	ok(oh.Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}))
	ok(oh.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}))
	ok(oh.AddTask(ctx, ops.AddTaskRequest{Task: task("b")}))
	old := human.As("coder-2", 0).UnderRules(contracts.RulesContained)
	ok(old.Claim(ctx, ops.ClaimRequest{Task: "b"}))
	commitIn(t, root, "b", "b.txt", "b\n")
	ok(old.Submit(ctx, ops.SubmitRequest{Task: "b"}))
	oldSubmit := stateTip(t, human)
	v, err := human.Validate(ctx, ops.ValidateRequest{History: true})
	if err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history: %v %+v", err, v)
	}
	// The same commit claiming the current rules is a forgery.
	wantRefused(t, "a submission without a checkpoint under the current rules",
		forged(t, human, root, oldSubmit, "Liza-Rules: 3\n", fmt.Sprintf("Liza-Rules: %d\n", contracts.RulesCheckpointed)), "task b has no pre-execution checkpoint in iteration 1")

	// Under the current rules: refused, then accepted after a checkpoint.
	coder := human.As("coder-1", 0)
	ok(coder.Claim(ctx, ops.ClaimRequest{Task: "a"}))
	commitIn(t, root, "a", "a.txt", "a\n")
	_, err = coder.Submit(ctx, ops.SubmitRequest{Task: "a"})
	if ops.Class(err) != contracts.CodeInvalid || !strings.Contains(err.Error(), "task a has no pre-execution checkpoint in iteration 1: record one first: git liza checkpoint a ") {
		t.Fatalf("a submission without a checkpoint: %v", err)
	}
	ok(coder.Checkpoint(ctx, ops.CheckpointRequest{Task: "a", Checkpoint: contracts.Checkpoint{Intent: "i", Validation: "v", FilesToModify: contracts.StringList{"a.txt"}}}))
	ok(coder.Submit(ctx, ops.SubmitRequest{Task: "a"}))
	v, err = human.Validate(ctx, ops.ValidateRequest{History: true})
	if err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history: %v %+v", err, v)
	}
}

// checkpoint records coder's pre-execution checkpoint on task id, which a
// submission under the current rules needs.
func checkpoint(t *testing.T, coder *ops.Service, id string) {
	t.Helper()
	cp := contracts.Checkpoint{Intent: "do " + id, Validation: "test " + id, FilesToModify: contracts.StringList{id + ".txt"}}
	if _, err := coder.Checkpoint(context.Background(), ops.CheckpointRequest{Task: id, Checkpoint: cp}); err != nil {
		t.Fatal(err)
	}
}
