package ops

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// BudgetKeys are the budgets of config.budgets a command sets, in the
// order they are shown.
var BudgetKeys = []string{
	"session_tokens", "task_tokens", "task_usd", "agent_tokens", "agent_usd",
	"goal_tokens", "goal_usd", "warn_share",
}

// BudgetRequest sets or clears budgets.
type BudgetRequest struct {
	Call
	// Set are the budgets to set, by their key in config.budgets (tokens
	// as whole numbers, money in USD, warn_share a share in (0,1)).
	Set map[string]float64
	// Clear clears every budget first: with nothing in Set, no budget is
	// left; with Set, only those are in force.
	Clear bool
}

// BudgetResult is what a budget change reports.
type BudgetResult struct {
	Budgets *contracts.Budgets `json:"budgets"`
	Changed bool               `json:"changed"`
	// Unblocked are the tasks BLOCKED for their budget that the new
	// budgets let go back to UNCLAIMED; Resumed says a pause for the
	// goal's budget was lifted.
	Unblocked []string `json:"unblocked,omitempty"`
	Resumed   bool     `json:"resumed,omitempty"`
	Written   `json:"-"`
}

type budgetInput struct {
	Set   map[string]float64 `json:"set,omitempty"`
	Clear bool               `json:"clear,omitempty"`
}

// SetBudgets records a change of config.budgets. The values are checked
// here and again where the change is applied, since a recorded input is
// replayed as it is.
func (s *Service) SetBudgets(ctx context.Context, r BudgetRequest) (*BudgetResult, error) {
	if len(r.Set) == 0 && !r.Clear {
		return nil, contracts.Invalidf("budget needs a budget to set (--session-tokens N, ...) or --clear")
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range r.Set {
			if !yield(k) {
				return
			}
		}
	}) {
		if err := checkBudget(k, r.Set[k]); err != nil {
			return nil, err
		}
	}
	return writeAs[BudgetResult](ctx, s, r.Call, kindBudget, budgetInput{Set: r.Set, Clear: r.Clear}, nil)
}

// checkBudget refuses a value a budget cannot take.
func checkBudget(key string, v float64) error {
	flag := "--" + strings.ReplaceAll(key, "_", "-")
	if key == "warn_share" {
		flag = "--warn"
	}
	switch {
	case !slices.Contains(BudgetKeys, key):
		return contracts.Invalidf("unknown budget %q", key)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return contracts.Invalidf("%s must be a finite number", flag)
	case key == "warn_share":
		if v <= 0 || v >= 1 {
			return contracts.Invalidf("--warn must be a share between 0 and 1 (0.8 warns at 80%%), not %g", v)
		}
	case v <= 0:
		return contracts.Invalidf("%s must be positive (--clear removes a budget), not %g", flag, v)
	case strings.HasSuffix(key, "_tokens"):
		if v != math.Trunc(v) || v > float64(contracts.MaxSpendTokens) {
			return contracts.Invalidf("%s must be a whole number of tokens up to %d, not %g", flag, contracts.MaxSpendTokens, v)
		}
	case v > contracts.MaxSpendUSD:
		return contracts.Invalidf("%s must be at most %g USD, not %g", flag, contracts.MaxSpendUSD, v)
	}
	return nil
}

// setBudget sets one budget of b.
func setBudget(b *contracts.Budgets, key string, v float64) {
	switch key {
	case "session_tokens":
		b.SessionTokens = int64(v)
	case "task_tokens":
		b.TaskTokens = int64(v)
	case "task_usd":
		b.TaskUSD = v
	case "agent_tokens":
		b.AgentTokens = int64(v)
	case "agent_usd":
		b.AgentUSD = v
	case "goal_tokens":
		b.GoalTokens = int64(v)
	case "goal_usd":
		b.GoalUSD = v
	case "warn_share":
		b.WarnShare = v
	}
}

// BudgetPairs are b's budgets in force, by key, in BudgetKeys' order,
// written as a person reads them ("10,000", "$3.00", "80%").
func BudgetPairs(b *contracts.Budgets) []string {
	if b == nil {
		return nil
	}
	var out []string
	add := func(key string, v float64) {
		switch {
		case v == 0:
		case key == "warn_share":
			out = append(out, fmt.Sprintf("%s %g%%", key, v*100))
		case strings.HasSuffix(key, "_usd"):
			out = append(out, key+" "+contracts.Dollars(v))
		default:
			out = append(out, key+" "+contracts.Thousands(int64(v)))
		}
	}
	add("session_tokens", float64(b.SessionTokens))
	add("task_tokens", float64(b.TaskTokens))
	add("task_usd", b.TaskUSD)
	add("agent_tokens", float64(b.AgentTokens))
	add("agent_usd", b.AgentUSD)
	add("goal_tokens", float64(b.GoalTokens))
	add("goal_usd", b.GoalUSD)
	add("warn_share", b.WarnShare)
	return out
}

// kindBudget changes config.budgets. Raising a budget lifts what it put
// in place, in the same commit: a task BLOCKED with a budget_exceeded
// reason whose spend is within the new task budgets goes back to
// UNCLAIMED, and a pause the goal's budget set is lifted once the goal is
// within its new budgets.
var kindBudget = since(contracts.RulesContained, def("budget", contracts.OpBudget, func(tx *cas.Tx, in *budgetInput) (any, error) {
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	var b contracts.Budgets
	if old := m.Config.Budgets; old != nil && !in.Clear {
		b = *old
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range in.Set {
			if !yield(k) {
				return
			}
		}
	}) {
		if err := checkBudget(k, in.Set[k]); err != nil {
			return nil, err
		}
		setBudget(&b, k, in.Set[k])
	}
	nb := &b
	if b == (contracts.Budgets{}) {
		nb = nil
	}
	out := BudgetResult{Budgets: nb}
	old := m.Config.Budgets
	if old == nil && nb == nil || old != nil && nb != nil && *old == *nb {
		return out, nil
	}
	out.Changed = true
	m.Config.Budgets = nb
	actor := contracts.ActorName(tx.Actor)
	if out.Unblocked, err = budgetUnblock(tx, nb); err != nil {
		return nil, err
	}
	if contracts.BudgetPaused(m.Control) {
		spent, err := goalSpendOf(tx)
		if err != nil {
			return nil, err
		}
		if _, over := contracts.FirstOver(contracts.GoalBudgetOf(nb, spent, contracts.Usage{})); !over {
			m.Control, out.Resumed = nil, true
		}
	}
	tx.PutMeta(m)
	what := "cleared"
	if pairs := BudgetPairs(nb); len(pairs) > 0 {
		what = strings.Join(pairs, ", ")
	}
	tx.Describe(fmt.Sprintf("budget: %s (%s)", what, actor), "")
	return out, nil
}))

// budgetUnblock returns to UNCLAIMED the tasks BLOCKED for their budget
// that b no longer holds them to.
func budgetUnblock(tx *cas.Tx, b *contracts.Budgets) ([]string, error) {
	idx, err := tx.Index()
	if err != nil {
		return nil, err
	}
	var ids []string
	for id, sum := range idx {
		if sum.Status == contracts.Blocked {
			ids = append(ids, id)
		}
	}
	contracts.SortIDs(ids)
	var out []string
	for _, id := range ids {
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if !contracts.BudgetBlocked(t) {
			continue
		}
		if _, over := contracts.FirstOver(contracts.TaskBudget(b, t, contracts.Usage{})); over {
			continue
		}
		t.Status = contracts.Unclaimed
		t.BlockedReason, t.BlockedQuestions = "", nil
		if t.AssignedTo != "" {
			t.PreviousAssignee = t.AssignedTo
		}
		t.AssignedTo, t.LeaseExpires = "", ""
		t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "unblocked",
			Agent: contracts.ActorName(tx.Actor), From: string(contracts.Blocked), To: string(contracts.Unclaimed),
			Reason: "the task's budget was raised"})
		tx.PutTask(t)
		out = append(out, id)
	}
	return out, nil
}

// OverBudgetResult is what pausing the team for the goal's budget reports.
type OverBudgetResult struct {
	Reason  string `json:"reason"`
	Changed bool   `json:"changed"`
	Written `json:"-"`
}

type overBudgetInput struct{}

// PauseOverBudget pauses the team because the goal has spent more than
// its budget. Any agent's supervisor may write it, but only when the board
// shows the goal over its budget: the operation reads the figures from the
// state it builds on, so a replay finds the same, and an agent cannot
// pause a team within its budget this way. A team already paused or
// aborted stays as it is.
func (s *Service) PauseOverBudget(ctx context.Context, r Call) (*OverBudgetResult, error) {
	return writeAs[OverBudgetResult](ctx, s, r, kindOverBudget, overBudgetInput{}, nil)
}

var kindOverBudget = since(contracts.RulesContained, def("over_budget", contracts.OpOverBudget, func(tx *cas.Tx, _ *overBudgetInput) (any, error) {
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	spent, err := goalSpendOf(tx)
	if err != nil {
		return nil, err
	}
	line, over := contracts.FirstOver(contracts.GoalBudgetOf(m.Config.Budgets, spent, contracts.Usage{}))
	if !over {
		return nil, contracts.Invalidf("the goal is within its budgets: nothing to pause for")
	}
	out := OverBudgetResult{Reason: line.Exceeded()}
	if modeOf(m.Control) != contracts.ModeRunning {
		return out, nil
	}
	m.Control = &contracts.Control{Mode: contracts.ModePaused, Since: tx.NowString(), By: contracts.BudgetBy, Reason: out.Reason}
	out.Changed = true
	tx.PutMeta(m)
	tx.Describe(fmt.Sprintf("pause: %s (%s)", out.Reason, contracts.ActorName(tx.Actor)), "")
	return out, nil
}))

// SessionSpend is one recorded session's spend.
type SessionSpend struct {
	Time   string `json:"time"`
	Task   string `json:"task"`
	Agent  string `json:"agent"`
	Tokens int64  `json:"tokens"`
	// Over says it spent more than the session budget now in force.
	Over bool `json:"over,omitempty"`
}

// BudgetStatus is the budgets in force and what is spent against each.
type BudgetStatus struct {
	Budgets *contracts.Budgets `json:"budgets"`
	Warn    float64            `json:"warn_share"`
	// Sessions are the last sessions recorded on tasks, newest first.
	Sessions []SessionSpend `json:"sessions"`
	// Lines are each budget in force and what is spent against it: the
	// live tasks' (those with spend), the registered agents', the goal's.
	Lines []contracts.BudgetLine `json:"lines"`
}

// lastSessions is how many sessions BudgetStatus lists.
const lastSessions = 5

// Budgets reads the budgets in force and what is spent against each.
func (s *Service) Budgets(ctx context.Context) (*BudgetStatus, error) {
	st, err := s.State(ctx, "")
	if err != nil {
		return nil, err
	}
	return BudgetsOf(st), nil
}

// BudgetsOf is what Budgets reports of st.
func BudgetsOf(st *contracts.State) *BudgetStatus {
	b := st.Config.Budgets
	out := &BudgetStatus{Budgets: b, Warn: b.Warn(), Sessions: []SessionSpend{}, Lines: []contracts.BudgetLine{}}
	for _, list := range [][]*contracts.Task{st.Tasks, st.Archive} {
		for _, t := range list {
			if t == nil {
				continue
			}
			for _, ev := range t.History {
				if u, ok := contracts.SessionUsage(ev); ok {
					out.Sessions = append(out.Sessions, SessionSpend{Time: ev.Time, Task: t.ID, Agent: ev.Agent, Tokens: u.Tokens(),
						Over: b != nil && b.SessionTokens > 0 && u.Tokens() > b.SessionTokens})
				}
			}
		}
	}
	slices.SortStableFunc(out.Sessions, func(a, b SessionSpend) int { return cmp.Compare(b.Time, a.Time) })
	out.Sessions = out.Sessions[:min(len(out.Sessions), lastSessions)]
	if b == nil {
		return out
	}
	for _, t := range st.Tasks {
		if t != nil && !contracts.TaskSpend(t).IsZero() {
			out.Lines = append(out.Lines, contracts.TaskBudget(b, t, contracts.Usage{})...)
		}
	}
	ids := make([]string, 0, len(st.Agents))
	for id := range st.Agents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out.Lines = append(out.Lines, contracts.AgentBudget(b, st, id, contracts.Usage{})...)
	}
	out.Lines = append(out.Lines, contracts.GoalBudget(b, st, contracts.Usage{})...)
	return out
}
