package contracts

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Usage is what one agent session spent, or a sum of sessions: tokens by
// kind and money. The tokens are what the agent CLI reported for its
// model's turns; the cost is the CLI's own figure when it reports one
// (CostReported) or the price table's (CostPriced, see Config.Price).
type Usage struct {
	Model            string  `yaml:"model,omitempty" json:"model,omitempty"`
	InputTokens      int64   `yaml:"input_tokens" json:"input_tokens"`
	OutputTokens     int64   `yaml:"output_tokens" json:"output_tokens"`
	CacheReadTokens  int64   `yaml:"cache_read_tokens" json:"cache_read_tokens"`
	CacheWriteTokens int64   `yaml:"cache_write_tokens" json:"cache_write_tokens"`
	CostUSD          float64 `yaml:"cost_usd" json:"cost_usd"`
	CostSource       string  `yaml:"cost_source,omitempty" json:"cost_source,omitempty"`
}

// The sources of a Usage's cost.
const (
	CostReported = "reported" // the agent CLI said what the session cost
	CostPriced   = "priced"   // the price table (config.prices) did
)

// Bounds on what one session may claim to have spent, and on a sum of
// sessions: a session_ended event past them is refused. A real session
// spends millions of tokens at most; these leave room for years of work
// while keeping every sum far from overflowing.
const (
	MaxSessionTokens = int64(1) << 40 // per kind of token, ~1.1e12
	MaxSessionUSD    = 1e6
	MaxSpendTokens   = int64(1) << 52 // a sum (an agent's task-less sessions)
	MaxSpendUSD      = 1e12
	maxModelName     = 200
	maxPrice         = 1e6 // USD per million tokens
)

// Tokens is every token the usage counts: input, output, cache reads and
// cache writes.
func (u Usage) Tokens() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// IsZero reports whether the usage counts nothing.
func (u Usage) IsZero() bool { return u.Tokens() == 0 && u.CostUSD == 0 }

// Add adds v to u. The model stays u's when they differ and u has one (a
// sum over models names none: it is cleared); the cost source becomes
// "priced" as soon as one part of the sum was priced.
func (u *Usage) Add(v Usage) {
	switch {
	case u.IsZero() && u.Model == "":
		u.Model = v.Model
	case v.Model != "" && v.Model != u.Model:
		u.Model = ""
	}
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CacheReadTokens += v.CacheReadTokens
	u.CacheWriteTokens += v.CacheWriteTokens
	u.CostUSD += v.CostUSD
	switch {
	case u.CostSource == "":
		u.CostSource = v.CostSource
	case v.CostSource == CostPriced:
		u.CostSource = CostPriced
	}
}

// CheckUsage says what is wrong with a usage whose token counts may be at
// most maxTokens each and whose cost at most maxUSD, or "" when nothing is:
// counts and cost not negative, the cost finite, the source known.
func CheckUsage(u Usage, maxTokens int64, maxUSD float64) string {
	for _, f := range []struct {
		name string
		n    int64
	}{
		{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens},
		{"cache_read_tokens", u.CacheReadTokens}, {"cache_write_tokens", u.CacheWriteTokens},
	} {
		if f.n < 0 {
			return fmt.Sprintf("%s %d is negative", f.name, f.n)
		}
		if f.n > maxTokens {
			return fmt.Sprintf("%s %d is past the bound %d", f.name, f.n, maxTokens)
		}
	}
	switch {
	case math.IsNaN(u.CostUSD) || math.IsInf(u.CostUSD, 0):
		return "cost_usd is not a finite number"
	case u.CostUSD < 0:
		return fmt.Sprintf("cost_usd %g is negative", u.CostUSD)
	case u.CostUSD > maxUSD:
		return fmt.Sprintf("cost_usd %g is past the bound %g", u.CostUSD, maxUSD)
	}
	switch u.CostSource {
	case "", CostReported, CostPriced:
	default:
		return fmt.Sprintf("unknown cost_source %q (want %s or %s)", u.CostSource, CostReported, CostPriced)
	}
	if len(u.Model) > maxModelName {
		return fmt.Sprintf("model name is longer than %d bytes", maxModelName)
	}
	return ""
}

// ValidSessionUsage checks what one session claims to have spent.
func ValidSessionUsage(u Usage) error {
	if msg := CheckUsage(u, MaxSessionTokens, MaxSessionUSD); msg != "" {
		return Invalidf("session usage: %s", msg)
	}
	return nil
}

// SessionUsage is the usage a session_ended event recorded, if any (events
// written before spend was recorded have none).
func SessionUsage(ev *HistoryEvent) (Usage, bool) {
	if ev == nil || ev.Event != "session_ended" || ev.Usage == nil {
		return Usage{}, false
	}
	return *ev.Usage, true
}

// TaskSpend is the sum of the usage of every session recorded on t, over
// all its iterations.
func TaskSpend(t *Task) Usage {
	var sum Usage
	if t == nil {
		return sum
	}
	for _, ev := range t.History {
		if u, ok := SessionUsage(ev); ok {
			sum.Add(u)
		}
	}
	return sum
}

// agentTaskSpend is what agent's sessions recorded on t spent.
func agentTaskSpend(t *Task, agent string) Usage {
	var sum Usage
	for _, ev := range t.History {
		if u, ok := SessionUsage(ev); ok && ev.Agent == agent {
			sum.Add(u)
		}
	}
	return sum
}

// GoalSpend is what the goal has cost so far, under the current rules
// (see GoalSpendUnder).
func GoalSpend(st *State) Usage { return GoalSpendUnder(st, Rules) }

// GoalSpendUnder is what the goal has cost so far under a rule set: from
// RulesGoalSpend, the goal's own figure (goal.spend) once it has one;
// before, and for a goal that has none yet, every session the board
// records: every task's, the archived tasks' included (a goal's before
// too), and those that had no task (a planner's, recorded on its agent
// entry as spend).
func GoalSpendUnder(st *State, rules int) Usage {
	if st != nil && rules >= RulesGoalSpend && st.Goal.Spend != nil {
		return Usage(*st.Goal.Spend)
	}
	return boardSpend(st)
}

// boardSpend is every session the board records: the goal's figure of
// the rules before RulesGoalSpend.
func boardSpend(st *State) Usage {
	var sum Usage
	if st == nil {
		return sum
	}
	for _, list := range [][]*Task{st.Tasks, st.Archive} {
		for _, t := range list {
			sum.Add(TaskSpend(t))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		if a := st.Agents[id]; a != nil && a.Spend != nil {
			sum.Add(*a.Spend)
		}
	}
	return sum
}

// AgentSpend is what one agent's sessions have cost: those on tasks (live
// and archived) and those without one.
func AgentSpend(st *State, agent string) Usage {
	var sum Usage
	if st == nil {
		return sum
	}
	for _, list := range [][]*Task{st.Tasks, st.Archive} {
		for _, t := range list {
			if t != nil {
				sum.Add(agentTaskSpend(t, agent))
			}
		}
	}
	if a := st.Agents[agent]; a != nil && a.Spend != nil {
		sum.Add(*a.Spend)
	}
	return sum
}

// Budgets are the hard budgets of config.budgets. Each is optional: zero
// means no budget.
type Budgets struct {
	SessionTokens int64   `yaml:"session_tokens,omitempty" json:"session_tokens,omitempty"`
	TaskTokens    int64   `yaml:"task_tokens,omitempty" json:"task_tokens,omitempty"`
	TaskUSD       float64 `yaml:"task_usd,omitempty" json:"task_usd,omitempty"`
	AgentTokens   int64   `yaml:"agent_tokens,omitempty" json:"agent_tokens,omitempty"`
	AgentUSD      float64 `yaml:"agent_usd,omitempty" json:"agent_usd,omitempty"`
	GoalTokens    int64   `yaml:"goal_tokens,omitempty" json:"goal_tokens,omitempty"`
	GoalUSD       float64 `yaml:"goal_usd,omitempty" json:"goal_usd,omitempty"`
	// WarnShare is the share of a budget past which a warning is raised;
	// zero means DefaultWarnShare.
	WarnShare float64 `yaml:"warn_share,omitempty" json:"warn_share,omitempty"`
}

// DefaultWarnShare is the share of a budget spent that raises a warning.
const DefaultWarnShare = 0.8

// Warn is the warn share, or its default when none is set.
func (b *Budgets) Warn() float64 {
	if b == nil || b.WarnShare == 0 {
		return DefaultWarnShare
	}
	return b.WarnShare
}

// Price is what a model costs, in USD per million tokens of each kind.
type Price struct {
	Input      float64 `yaml:"input" json:"input"`
	Output     float64 `yaml:"output" json:"output"`
	CacheRead  float64 `yaml:"cache_read" json:"cache_read"`
	CacheWrite float64 `yaml:"cache_write" json:"cache_write"`
}

// Cost is what u's tokens cost at p.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}

// DefaultPrices are the prices git-liza ships, in USD per million tokens,
// from the vendors' list prices (standard tier, short context) when this
// release was made. config.prices overrides them model by model. A key
// also prices the models whose name starts with it ("claude-sonnet-4-5"
// prices "claude-sonnet-4-5-20250929"); the longest such key wins.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		"claude-opus-4":         {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-opus-4-5":       {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		"claude-sonnet-4":       {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":      {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"claude-3-5-haiku":      {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
		"gpt-5":                 {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":            {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano":            {Input: 0.05, Output: 0.4, CacheRead: 0.005},
		"gpt-4.1":               {Input: 2, Output: 8, CacheRead: 0.5},
		"o4-mini":               {Input: 1.1, Output: 4.4, CacheRead: 0.275},
		"gemini-2.5-pro":        {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gemini-2.5-flash":      {Input: 0.3, Output: 2.5, CacheRead: 0.03},
		"gemini-2.5-flash-lite": {Input: 0.1, Output: 0.4, CacheRead: 0.01},
		"gemini-3-pro":          {Input: 2, Output: 12, CacheRead: 0.2},
	}
}

// PriceOf is the price of model: config.prices' entry for it, else the
// shipped default; an exact name first, else the longest key the name
// starts with, in the state's table before the defaults.
func (c Config) PriceOf(model string) (Price, bool) {
	if model == "" {
		return Price{}, false
	}
	for _, table := range []map[string]Price{c.Prices, DefaultPrices()} {
		if p, ok := table[model]; ok {
			return p, true
		}
		best := ""
		for k := range table {
			if k != "" && strings.HasPrefix(model, k) && len(k) > len(best) {
				best = k
			}
		}
		if best != "" {
			return table[best], true
		}
	}
	return Price{}, false
}

// Price fills u's cost from the price table when the CLI did not report
// one, and reports whether u has a cost: a reported cost is kept as it is;
// otherwise the model's price gives it (cost_source priced); a model
// without a price leaves it zero with no source.
func (c Config) Price(u Usage) (Usage, bool) {
	if u.CostSource == CostReported {
		return u, true
	}
	p, ok := c.PriceOf(u.Model)
	if !ok {
		u.CostUSD, u.CostSource = 0, ""
		return u, false
	}
	u.CostUSD, u.CostSource = p.Cost(u), CostPriced
	return u, true
}

// validateSpendConfig checks config.budgets and config.prices.
func validateSpendConfig(ps *problems, c Config) {
	finite := func(where, name string, v, limit float64) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			ps.addf(where, "%s is not a finite number", name)
		case v < 0:
			ps.addf(where, "%s %g is negative", name, v)
		case v > limit:
			ps.addf(where, "%s %g is past the bound %g", name, v, limit)
		}
	}
	if b := c.Budgets; b != nil {
		const where = "config.budgets"
		for _, f := range []struct {
			name string
			n    int64
		}{{"session_tokens", b.SessionTokens}, {"task_tokens", b.TaskTokens}, {"agent_tokens", b.AgentTokens}, {"goal_tokens", b.GoalTokens}} {
			if f.n < 0 {
				ps.addf(where, "%s %d is negative", f.name, f.n)
			}
		}
		finite(where, "task_usd", b.TaskUSD, MaxSpendUSD)
		finite(where, "agent_usd", b.AgentUSD, MaxSpendUSD)
		finite(where, "goal_usd", b.GoalUSD, MaxSpendUSD)
		finite(where, "warn_share", b.WarnShare, 1)
	}
	for _, model := range slices.Sorted(maps.Keys(c.Prices)) {
		where := "config.prices"
		if model == "" || len(model) > maxModelName {
			ps.addf(where, "a model name is 1 to %d bytes", maxModelName)
			continue
		}
		where += "." + model
		p := c.Prices[model]
		finite(where, "input", p.Input, maxPrice)
		finite(where, "output", p.Output, maxPrice)
		finite(where, "cache_read", p.CacheRead, maxPrice)
		finite(where, "cache_write", p.CacheWrite, maxPrice)
	}
}
