package contracts

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BudgetExceeded starts the blocked_reason of a task over its budget, and
// the reason of a pause for the goal's.
const BudgetExceeded = "budget_exceeded"

// BudgetBy is the control section's "by" when a supervisor paused the team
// because the goal went over its budget.
const BudgetBy = "budget"

// BudgetLine is one budget in force and what is spent against it.
type BudgetLine struct {
	// Key is the budget's name in config.budgets ("task_tokens").
	Key string `json:"key"`
	// Of names what the budget holds: "session", "task t3",
	// "agent coder-1", "goal".
	Of    string  `json:"of"`
	Limit float64 `json:"limit"`
	Spent float64 `json:"spent"`
}

// USD reports whether the budget is in money rather than tokens.
func (l BudgetLine) USD() bool { return strings.HasSuffix(l.Key, "_usd") }

// Over reports whether more than the budget is spent.
func (l BudgetLine) Over() bool { return l.Limit > 0 && l.Spent > l.Limit }

// Share is the part of the budget spent (1 when all of it).
func (l BudgetLine) Share() float64 {
	if l.Limit <= 0 {
		return 0
	}
	return l.Spent / l.Limit
}

// Figures says what is spent of the budget: "12,400 tokens of its 10,000"
// or "$3.20 of its $3.00".
func (l BudgetLine) Figures() string {
	spent, limit := l.Amounts()
	if l.USD() {
		return fmt.Sprintf("%s of its %s", spent, limit)
	}
	return fmt.Sprintf("%s tokens of its %s", spent, limit)
}

// Amounts are what is spent and the budget, written for a person:
// "12,400" and "10,000", or "$3.20" and "$3.00".
func (l BudgetLine) Amounts() (spent, limit string) {
	if l.USD() {
		return Dollars(l.Spent), Dollars(l.Limit)
	}
	return Thousands(int64(l.Spent)), Thousands(int64(l.Limit))
}

// Exceeded is the reason that names a budget gone over, with its figures:
// "budget_exceeded: task t3 spent 12,400 tokens of its 10,000
// (task_tokens)".
func (l BudgetLine) Exceeded() string {
	return fmt.Sprintf("%s: %s spent %s (%s)", BudgetExceeded, l.Of, l.Figures(), l.Key)
}

// Thousands writes n with commas between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Dollars writes an amount of money to the cent, and below a dollar to a
// hundredth of a cent where it has one (a session often costs a few
// cents): $12.50, $0.0421, $0.55. budget, usage and the alarms all write
// money so.
func Dollars(x float64) string {
	if math.Abs(x) >= 1 {
		return "$" + strconv.FormatFloat(x, 'f', 2, 64)
	}
	s := strconv.FormatFloat(x, 'f', 4, 64)
	for i := 0; i < 2 && strings.HasSuffix(s, "0"); i++ {
		s = s[:len(s)-1]
	}
	return "$" + s
}

// budgetLines are the budgets of one scope in force, tokens then money,
// with spent against each.
func budgetLines(of, prefix string, tokens int64, usd float64, spent Usage) []BudgetLine {
	var out []BudgetLine
	if tokens > 0 {
		out = append(out, BudgetLine{Key: prefix + "_tokens", Of: of, Limit: float64(tokens), Spent: float64(spent.Tokens())})
	}
	if usd > 0 {
		out = append(out, BudgetLine{Key: prefix + "_usd", Of: of, Limit: usd, Spent: spent.CostUSD})
	}
	return out
}

// SessionBudget is the session budget held against what one session
// spent.
func SessionBudget(b *Budgets, spent Usage) []BudgetLine {
	if b == nil {
		return nil
	}
	return budgetLines("session", "session", b.SessionTokens, 0, spent)
}

// TaskBudget is the task's budgets held against what its recorded sessions
// spent (every iteration) and live, what a running session adds.
func TaskBudget(b *Budgets, t *Task, live Usage) []BudgetLine {
	if b == nil || t == nil {
		return nil
	}
	spent := TaskSpend(t)
	spent.Add(live)
	return budgetLines("task "+t.ID, "task", b.TaskTokens, b.TaskUSD, spent)
}

// AgentBudget is an agent's budgets held against what its recorded
// sessions spent and live.
func AgentBudget(b *Budgets, st *State, agent string, live Usage) []BudgetLine {
	if b == nil {
		return nil
	}
	spent := AgentSpend(st, agent)
	spent.Add(live)
	return budgetLines("agent "+agent, "agent", b.AgentTokens, b.AgentUSD, spent)
}

// GoalBudget is the goal's budgets held against what the goal's sessions
// spent (the planner's included; see GoalSpend) and live.
func GoalBudget(b *Budgets, st *State, live Usage) []BudgetLine {
	return GoalBudgetOf(b, GoalSpend(st), live)
}

// GoalBudgetOf is the goal's budgets held against spent and live.
func GoalBudgetOf(b *Budgets, spent, live Usage) []BudgetLine {
	if b == nil {
		return nil
	}
	spent.Add(live)
	return budgetLines("goal", "goal", b.GoalTokens, b.GoalUSD, spent)
}

// FirstOver is the first of lines over its budget.
func FirstOver(lines []BudgetLine) (BudgetLine, bool) {
	for _, l := range lines {
		if l.Over() {
			return l, true
		}
	}
	return BudgetLine{}, false
}

// BudgetBlocked reports whether a task is BLOCKED for its budget.
func BudgetBlocked(t *Task) bool {
	return t != nil && t.Status == Blocked && strings.HasPrefix(t.BlockedReason, BudgetExceeded)
}

// BudgetPaused reports whether the team is paused for the goal's budget.
func BudgetPaused(c *Control) bool {
	return c != nil && c.Mode == ModePaused && c.By == BudgetBy
}
