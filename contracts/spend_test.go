package contracts

import (
	"math"
	"strings"
	"testing"
)

func TestUsageTokensAndAdd(t *testing.T) {
	u := Usage{Model: "m", InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, CostUSD: 0.5, CostSource: CostReported}
	if u.Tokens() != 10 {
		t.Fatalf("Tokens() = %d, want 10", u.Tokens())
	}
	var sum Usage
	sum.Add(u)
	sum.Add(Usage{Model: "m", InputTokens: 10, CostUSD: 0.25, CostSource: CostPriced})
	want := Usage{Model: "m", InputTokens: 11, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, CostUSD: 0.75, CostSource: CostPriced}
	if sum != want {
		t.Fatalf("sum = %+v, want %+v", sum, want)
	}
	sum.Add(Usage{Model: "other", OutputTokens: 1})
	if sum.Model != "" {
		t.Fatalf("a sum over two models names %q, want none", sum.Model)
	}
}

func TestPrice(t *testing.T) {
	c := Config{Prices: map[string]Price{"mine": {Input: 2, Output: 10, CacheRead: 0.5, CacheWrite: 4}}}
	u, ok := c.Price(Usage{Model: "mine-2025", InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 500_000})
	if !ok || u.CostSource != CostPriced || math.Abs(u.CostUSD-(2+1+1+2)) > 1e-9 {
		t.Fatalf("priced %+v %v, want 6 USD priced", u, ok)
	}
	rep := Usage{Model: "mine", InputTokens: 5, CostUSD: 0.01, CostSource: CostReported}
	if got, ok := c.Price(rep); !ok || got != rep {
		t.Fatalf("a reported cost became %+v", got)
	}
	if got, ok := c.Price(Usage{Model: "unknown-model", InputTokens: 5}); ok || got.CostUSD != 0 || got.CostSource != "" {
		t.Fatalf("an unpriced model got %+v %v", got, ok)
	}
	// The shipped defaults price the CLIs' models; the longest prefix wins.
	sonnet, _ := Config{}.PriceOf("claude-sonnet-4-5-20250929")
	opus45, _ := Config{}.PriceOf("claude-opus-4-5-20251101")
	opus4, _ := Config{}.PriceOf("claude-opus-4-1-20250805")
	if sonnet.Input != 3 || opus45.Input != 5 || opus4.Input != 15 {
		t.Fatalf("default prices: sonnet %v opus-4-5 %v opus-4-1 %v", sonnet, opus45, opus4)
	}
	// config.prices overrides a default.
	over := Config{Prices: map[string]Price{"gpt-5": {Input: 100}}}
	if p, _ := over.PriceOf("gpt-5-codex"); p.Input != 100 {
		t.Fatalf("override not used: %v", p)
	}
}

func TestSpendSums(t *testing.T) {
	s := validState()
	tk := s.Tasks[0]
	u1 := Usage{Model: "m", InputTokens: 100, OutputTokens: 10, CostUSD: 1, CostSource: CostPriced}
	u2 := Usage{Model: "m", InputTokens: 50, CacheReadTokens: 5, CostUSD: 0.5, CostSource: CostPriced}
	tk.History = append(tk.History,
		&HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Agent: "coder-1", Usage: &u1},
		&HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Agent: "coder-2", Usage: &u2},
		&HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Agent: "coder-1"},
		&HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "claimed", Agent: "coder-1", Usage: &u2})
	if got := TaskSpend(tk); got.Tokens() != 165 || got.CostUSD != 1.5 {
		t.Fatalf("TaskSpend = %+v", got)
	}
	if s.Agents == nil {
		s.Agents = map[string]*Agent{}
	}
	s.Agents["planner-1"] = &Agent{Role: "planner", Status: "IDLE", Spend: &Usage{InputTokens: 1000, CostUSD: 2, CostSource: CostPriced}}
	if got := GoalSpend(s); got.Tokens() != 1165 || got.CostUSD != 3.5 {
		t.Fatalf("GoalSpend = %+v", got)
	}
	if got := AgentSpend(s, "coder-1"); got.Tokens() != 110 {
		t.Fatalf("AgentSpend(coder-1) = %+v", got)
	}
	if got := AgentSpend(s, "planner-1"); got.Tokens() != 1000 {
		t.Fatalf("AgentSpend(planner-1) = %+v", got)
	}
}

func TestSpendValidation(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(s *State)
		want string
	}{
		"negative tokens": {func(s *State) {
			s.Tasks[0].History = append(s.Tasks[0].History, &HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Usage: &Usage{InputTokens: -1}})
		}, "input_tokens -1 is negative"},
		"absurd tokens": {func(s *State) {
			s.Tasks[0].History = append(s.Tasks[0].History, &HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Usage: &Usage{OutputTokens: MaxSessionTokens + 1}})
		}, "is past the bound"},
		"nan cost": {func(s *State) {
			s.Tasks[0].History = append(s.Tasks[0].History, &HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Usage: &Usage{CostUSD: math.NaN()}})
		}, "cost_usd is not a finite number"},
		"unknown source": {func(s *State) {
			s.Tasks[0].History = append(s.Tasks[0].History, &HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Usage: &Usage{CostSource: "guessed"}})
		}, `unknown cost_source "guessed"`},
		"negative budget": {func(s *State) { s.Config.Budgets = &Budgets{TaskTokens: -5} }, "task_tokens -5 is negative"},
		"infinite budget": {func(s *State) { s.Config.Budgets = &Budgets{GoalUSD: math.Inf(1)} }, "goal_usd is not a finite number"},
		"warn share":      {func(s *State) { s.Config.Budgets = &Budgets{WarnShare: 1.5} }, "warn_share 1.5 is past the bound 1"},
		"negative price":  {func(s *State) { s.Config.Prices = map[string]Price{"m": {Output: -1}} }, "config.prices.m: output -1 is negative"},
	} {
		t.Run(name, func(t *testing.T) {
			s := validState()
			tc.edit(s)
			if got := problemText(Validate(s)); !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want one with %q", got, tc.want)
			}
		})
	}
}

// An old board (no usage, no budgets, no prices) stays valid and is written
// back without the new fields; the new fields survive a round trip.
func TestSpendRoundTrip(t *testing.T) {
	s := validState()
	out, err := MarshalState(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"budgets", "prices", "usage", "spend:"} {
		if strings.Contains(string(out), field) {
			t.Fatalf("a board without spend was written with %q:\n%s", field, out)
		}
	}
	u := Usage{Model: "m", InputTokens: 7, CostUSD: 0.125, CostSource: CostReported}
	s.Tasks[0].History = append(s.Tasks[0].History, &HistoryEvent{Time: "2025-01-01T00:00:00Z", Event: "session_ended", Agent: "coder-1", Usage: &u})
	s.Config.Budgets = &Budgets{TaskTokens: 1000, GoalUSD: 12.5}
	s.Config.Prices = map[string]Price{"m": {Input: 1, Output: 2}}
	out, err = MarshalState(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseState(out)
	if err != nil {
		t.Fatal(err)
	}
	if ps := Validate(back); len(ps) != 0 {
		t.Fatalf("problems: %s", problemText(ps))
	}
	got, ok := SessionUsage(back.Tasks[0].History[len(back.Tasks[0].History)-1])
	if !ok || got != u || back.Config.Budgets.TaskTokens != 1000 || back.Config.Prices["m"].Output != 2 {
		t.Fatalf("round trip lost spend: %+v %+v %+v\n%s", got, back.Config.Budgets, back.Config.Prices, out)
	}
	if back.Config.Budgets.Warn() != DefaultWarnShare {
		t.Fatalf("warn share default")
	}
}
