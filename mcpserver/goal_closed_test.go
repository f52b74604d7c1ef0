package mcpserver_test

import (
	"context"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// The planner's task_add is the command's task add: on a COMPLETED goal
// it is refused (naming goal new), and nothing is written.
func TestPlannerTaskAddOnCompletedGoal(t *testing.T) {
	b := newBoard(t)
	ctx := context.Background()
	b.block(t)
	for _, id := range []string{"a", "b"} {
		if _, err := b.human.Abandon(ctx, ops.AbandonRequest{Task: id, Reason: "done otherwise"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.human.GoalComplete(ctx, ops.Call{}); err != nil {
		t.Fatal(err)
	}
	cs := b.planner(t)
	before := b.stateTip(t)
	refused(t, call(t, cs, "task_add", `{"id":"c","description":"x","spec_ref":"specs/vision.md","done_when":"y","scope":"z"}`),
		contracts.CodeInvalid, "goal goal-1 is COMPLETED: new tasks are refused; git liza goal new GOAL starts the next goal")
	unchanged(t, b, before)
}
