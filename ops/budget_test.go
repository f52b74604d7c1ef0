package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// A supervisor pauses the team for the goal's budget only when the board
// shows the goal over it; the pause names the budget, claims are refused
// saying what lifts it, and raising the budget resumes the team in the
// same commit. A person's pause is never lifted by a budget change.
func TestPauseOverBudget(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	coder1 := human.As("coder-1", 0)
	for _, id := range []string{"a", "b"} {
		if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coder1.Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.SetBudgets(ctx, ops.BudgetRequest{Set: map[string]float64{"goal_tokens": 2000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coder1.PauseOverBudget(ctx, ops.Call{}); err == nil || !strings.Contains(err.Error(), "the goal is within its budgets") {
		t.Fatalf("a pause within the budget: %v, want refused", err)
	}
	if _, err := coder1.SessionEnded(ctx, ops.SessionRequest{Task: "a", Outcome: ops.SessionStopped,
		Usage: &contracts.Usage{InputTokens: 2400}}); err != nil {
		t.Fatal(err)
	}
	res, err := coder1.PauseOverBudget(ctx, ops.Call{})
	if err != nil {
		t.Fatal(err)
	}
	const why = "budget_exceeded: goal spent 2,400 tokens of its 2,000 (goal_tokens)"
	if !res.Changed || res.Reason != why {
		t.Fatalf("pause = %+v, want %q", res, why)
	}
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Control; c == nil || c.Mode != contracts.ModePaused || c.By != contracts.BudgetBy || c.Reason != why {
		t.Fatalf("control %+v", st.Control)
	}
	_, err = human.As("coder-2", 0).Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true})
	if err == nil || !strings.Contains(err.Error(), "raising the goal's budget lifts it (git liza budget --goal-tokens N or --goal-usd X)") {
		t.Errorf("a claim while paused for the budget: %v", err)
	}
	if v, err := human.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Errorf("the history does not verify: %v %v", err, v)
	}
	up, err := human.SetBudgets(ctx, ops.BudgetRequest{Set: map[string]float64{"goal_tokens": 5000}})
	if err != nil || !up.Resumed {
		t.Fatalf("raising the goal's budget: %+v, %v; want the team resumed", up, err)
	}
	// A person's pause stays.
	if _, err := human.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModePaused}); err != nil {
		t.Fatal(err)
	}
	if up, err := human.SetBudgets(ctx, ops.BudgetRequest{Clear: true}); err != nil || up.Resumed {
		t.Errorf("clearing the budgets under a person's pause: %+v, %v; want it kept", up, err)
	}
}
