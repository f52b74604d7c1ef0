package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// The board shows the sprint's spend and the goal's share of its budget
// under the sprint line, and nothing of spend on a board that has none.
func TestRenderSpend(t *testing.T) {
	now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	st := &contracts.State{
		Goal:   contracts.Goal{ID: "goal-1", Description: "Retry every API call", Status: "IN_PROGRESS"},
		Sprint: contracts.Sprint{ID: "sprint-1", Status: "IN_PROGRESS"},
		Tasks:  []*contracts.Task{{ID: "t-1", Status: contracts.Unclaimed, Priority: 1, Description: "a"}},
	}
	b := ops.NewBoard(st, now, ops.BoardFilter{})
	m := &model{board: b, width: 80, height: 24}
	if text := ansi.Strip(m.render()); strings.Contains(text, "Spend") {
		t.Errorf("a board without spend shows some:\n%s", text)
	}
	b.Spend = &ops.BoardSpend{Sprint: ops.Spend{Sessions: 3, Tokens: 1234567, CostUSD: 4.5},
		Budget: &ops.SpendBudget{GoalTokens: 2000000, GoalUSD: 10, TokensShare: 0.75, USDShare: 0.5}}
	text := ansi.Strip(m.render())
	want := "Spend 1.23M tokens $4.50 (sprint); goal 75% of 2M tokens, 50% of $10.00"
	lines := strings.Split(text, "\n")
	if len(lines) < 3 || lines[2] != want {
		t.Errorf("the spend line is not under the sprint line; want %q in:\n%s", want, text)
	}
	b.Spend.Budget = nil
	if text := ansi.Strip(m.render()); !strings.Contains(text, "Spend 1.23M tokens $4.50 (sprint); no goal budget\n") {
		t.Errorf("a board without a budget:\n%s", text)
	}
}
