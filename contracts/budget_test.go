package contracts

import "testing"

// A budget gone over is named with its figures, as the planner reads it in
// a blocked_reason; a budget not set is not in force.
func TestBudgetLines(t *testing.T) {
	b := &Budgets{SessionTokens: 2000, TaskTokens: 10000, TaskUSD: 3}
	task := &Task{ID: "t3", History: []*HistoryEvent{
		{Event: "session_ended", Usage: &Usage{InputTokens: 9000, OutputTokens: 400, CostUSD: 2.5, CostSource: CostReported}},
		{Event: "claimed"},
	}}
	lines := TaskBudget(b, task, Usage{InputTokens: 3000})
	if len(lines) != 2 {
		t.Fatalf("task budgets in force: %+v, want task_tokens and task_usd", lines)
	}
	over, ok := FirstOver(lines)
	if !ok {
		t.Fatalf("12,400 tokens of 10,000 is not over: %+v", lines)
	}
	if got, want := over.Exceeded(), "budget_exceeded: task t3 spent 12,400 tokens of its 10,000 (task_tokens)"; got != want {
		t.Errorf("reason %q\n want %q", got, want)
	}
	if lines[1].Over() || lines[1].Figures() != "$2.50 of its $3.00" {
		t.Errorf("money: %+v %q", lines[1], lines[1].Figures())
	}
	if s := SessionBudget(b, Usage{InputTokens: 2000}); len(s) != 1 || s[0].Over() {
		t.Errorf("a session that spent exactly its budget is not over it: %+v", s)
	}
	if s := AgentBudget(b, &State{}, "coder-1", Usage{InputTokens: 1 << 40}); len(s) != 0 {
		t.Errorf("no agent budget set, yet %+v", s)
	}
	if got := Thousands(-1234567); got != "-1,234,567" {
		t.Errorf("Thousands: %q", got)
	}
}
