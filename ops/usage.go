package ops

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// The scopes of a usage report: which sessions it counts.
const (
	ScopeSprint = "sprint" // the sessions that ended since the sprint started
	ScopeGoal   = "goal"   // every session of the goal's tasks and planner
	ScopeSince  = "since"  // the sessions that ended at or after a time
)

// The outcomes spend is counted under: what became of the work a session
// paid for.
const (
	OutcomeMerged     = "merged"     // the iteration that landed, of a MERGED task
	OutcomeRejected   = "rejected"   // an iteration a review rejected (of a task not given up or blocked)
	OutcomeInFlight   = "in_flight"  // work not judged yet
	OutcomeAbandoned  = "abandoned"  // all of an ABANDONED task
	OutcomeSuperseded = "superseded" // all of a SUPERSEDED task
	OutcomeBlocked    = "blocked"    // all of a BLOCKED or INTEGRATION_FAILED task
	OutcomePlanning   = "planning"   // the sessions without a task (a planner's)
)

// outcomeOrder is the order of the outcomes in a report: what landed, then
// what did not.
var outcomeOrder = []string{OutcomeMerged, OutcomeInFlight, OutcomePlanning, OutcomeRejected, OutcomeAbandoned, OutcomeSuperseded, OutcomeBlocked}

// Spend is what a set of sessions cost: the tokens by kind and in all,
// the money, and how many sessions reported it.
type Spend struct {
	Sessions         int     `json:"sessions"`
	Tokens           int64   `json:"tokens"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// Unpriced counts the sessions whose cost is not known: their CLI
	// reported none and their model has no price (config.prices).
	Unpriced int `json:"unpriced_sessions,omitempty"`
}

func (s *Spend) add(u contracts.Usage) {
	s.Sessions++
	if u.CostSource == "" && u.Tokens() > 0 {
		s.Unpriced++
	}
	s.addSum(u)
}

// rounded is s with its cost rounded to a millionth of a dollar, as sums
// of floating-point costs are not exact.
func (s Spend) rounded() Spend {
	s.CostUSD = math.Round(s.CostUSD*1e6) / 1e6
	return s
}

// addSum adds a sum of sessions whose number is not known (a planner's,
// kept on its agent entry).
func (s *Spend) addSum(u contracts.Usage) {
	s.Tokens += u.Tokens()
	s.InputTokens += u.InputTokens
	s.OutputTokens += u.OutputTokens
	s.CacheReadTokens += u.CacheReadTokens
	s.CacheWriteTokens += u.CacheWriteTokens
	s.CostUSD += u.CostUSD
}

// UsageRow is the spend of one task, agent, role, model or outcome; the
// field that names it is the only one of them set (a task's row says its
// status too).
type UsageRow struct {
	Task    string `json:"task,omitempty"`
	Status  string `json:"status,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Role    string `json:"role,omitempty"`
	Model   string `json:"model,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Spend
}

// UsageReport is the spend of the sessions of a scope, in all and broken
// down; Budget, when the goal has one, is the goal's spend against it.
type UsageReport struct {
	Now    string `json:"now"`
	Goal   string `json:"goal"`
	Sprint string `json:"sprint"`
	Scope  string `json:"scope"`
	// Since is when the counted sessions start (the sprint's start, or
	// --since); empty for the whole goal.
	Since string `json:"since,omitempty"`
	Task  string `json:"task,omitempty"`
	Agent string `json:"agent,omitempty"`
	Total Spend  `json:"total"`
	// Unscoped, in a report --since a time, is the spend of the sessions
	// without a task (a planner's), which the board keeps as a sum with no
	// time: a report of the sprint or the goal counts it, this one cannot.
	Unscoped  Spend        `json:"unscoped"`
	Budget    *SpendBudget `json:"budget,omitempty"`
	ByTask    []UsageRow   `json:"by_task"`
	ByAgent   []UsageRow   `json:"by_agent"`
	ByRole    []UsageRow   `json:"by_role"`
	ByModel   []UsageRow   `json:"by_model"`
	ByOutcome []UsageRow   `json:"by_outcome"`
}

// SpendBudget is the goal's spend against its budgets (config.budgets
// goal_tokens and goal_usd; zero: none) and the share of each spent.
type SpendBudget struct {
	Spent       Spend   `json:"spent"`
	GoalTokens  int64   `json:"goal_tokens,omitempty"`
	GoalUSD     float64 `json:"goal_usd,omitempty"`
	TokensShare float64 `json:"tokens_share,omitempty"`
	USDShare    float64 `json:"usd_share,omitempty"`
}

// UsageRequest says whose spend to count, over which sessions.
type UsageRequest struct {
	Rev   string
	Task  string // only this task's sessions
	Agent string // only this agent's sessions
	// Goal counts every session of the goal; Since, when set, those that
	// ended at or after it; neither: those of the sprint.
	Goal  bool
	Since time.Time
}

// Usage is the spend of r's sessions as the board records them (the
// usage of each session_ended event), by task, agent, role, model and
// outcome. An unknown --task or --agent is the caller's mistake.
func (s *Service) Usage(ctx context.Context, r UsageRequest) (*UsageReport, error) {
	if r.Task != "" {
		if err := contracts.ValidTaskID(r.Task); err != nil {
			return nil, err
		}
	}
	snap, err := s.Snapshot(ctx, r.Rev)
	if err != nil {
		return nil, err
	}
	st, err := snap.Header()
	if err != nil {
		return nil, err
	}
	return usageOf(snap, st, r, s.Now(), s.spent)
}

// usageOf is Usage on the board of snap, whose header st holds.
func usageOf(snap *cas.Snapshot, st *contracts.State, r UsageRequest, now time.Time, memo *spendMemo) (*UsageReport, error) {
	rep := &UsageReport{Now: contracts.FormatTime(now), Goal: st.Goal.ID, Sprint: st.Sprint.ID,
		Task: r.Task, Agent: r.Agent, Scope: ScopeSprint,
		ByTask: []UsageRow{}, ByAgent: []UsageRow{}, ByRole: []UsageRow{}, ByModel: []UsageRow{}, ByOutcome: []UsageRow{}}
	var from time.Time
	switch {
	case !r.Since.IsZero():
		rep.Scope, from = ScopeSince, r.Since
	case r.Goal:
		rep.Scope = ScopeGoal
	default:
		from, _ = contracts.ParseTime(st.Sprint.Timeline.Started)
	}
	if !from.IsZero() {
		rep.Since = contracts.FormatTime(from)
	}
	tasks, err := spendTasks(snap, st, r.Task, memo)
	if err != nil {
		return nil, err
	}
	if r.Task != "" && len(tasks) == 0 {
		return nil, contracts.Invalidf("no task %s on the board", r.Task)
	}
	t := newTally()
	goal := Spend{}
	// An agent is known when the board has its entry or one of its
	// sessions, whenever it ran.
	known := r.Agent == "" || st.Agents[r.Agent] != nil
	for _, task := range tasks {
		for _, ses := range task.Sessions {
			goal.add(ses.Usage)
			known = known || ses.Agent == r.Agent
			if (r.Agent == "" || ses.Agent == r.Agent) && endedSince(ses.Time, from) {
				t.add(task, ses.Agent, ses.Usage, sessionOutcome(task.Status, ses.Rejected))
			}
		}
	}
	// The sessions without a task (a planner's) are kept as a sum on
	// the agent's entry, without their times: they count toward the goal,
	// and in the sprint's report as the sprint's metrics count them (since
	// the goal began); a report --since a time cannot place them.
	// A goal that keeps its own figure (contracts.RulesGoalSpend) keeps
	// the agents' part of it too (goal_spend); the goals before are not
	// among them.
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		a := st.Agents[id]
		if a == nil || r.Task != "" {
			continue
		}
		spent := a.Spend
		if st.Goal.Spend != nil {
			spent = (*contracts.Usage)(a.GoalSpend)
		}
		if spent == nil {
			continue
		}
		goal.addSum(*spent)
		known = known || id == r.Agent
		if r.Agent != "" && id != r.Agent {
			continue
		}
		if rep.Scope != ScopeSince {
			t.addSum(id, *spent)
		} else {
			rep.Unscoped.addSum(*spent)
		}
	}
	rep.Unscoped = rep.Unscoped.rounded()
	if !known {
		return nil, contracts.Invalidf("no agent %s on the board", r.Agent)
	}
	t.fill(rep)
	if r.Task == "" && r.Agent == "" {
		// The goal keeps its own figure (contracts.RulesGoalSpend):
		// what its budget holds the team to, the sessions of the
		// goals before not among them.
		if sp := st.Goal.Spend; sp != nil {
			goal = Spend{}
			goal.addSum(contracts.Usage(*sp))
		}
		rep.Budget = goalBudget(st.Config, goal)
	}
	return rep, nil
}

// BoardSpend is what a board shows of spend: the sprint's, and the goal's
// against its budget when it has one.
type BoardSpend struct {
	Sprint Spend        `json:"sprint"`
	Budget *SpendBudget `json:"budget,omitempty"`
}

// boardSpend is the spend of the board of snap, whose header st holds;
// nil when no session recorded any and the goal has no budget, so that a
// board that does not count spend shows nothing of it.
func boardSpend(snap *cas.Snapshot, st *contracts.State, now time.Time, memo *spendMemo) (*BoardSpend, error) {
	rep, err := usageOf(snap, st, UsageRequest{}, now, memo)
	if err != nil {
		return nil, err
	}
	if rep.Total == (Spend{}) && rep.Budget == nil {
		return nil, nil
	}
	return &BoardSpend{Sprint: rep.Total, Budget: rep.Budget}, nil
}

// sessionOutcome is what became of a session's work, as the sprint's
// metrics count it: all of a task given up or blocked is that; on the
// others, a rejected iteration is rejected, the rest merged or in flight.
func sessionOutcome(s contracts.Status, rejected bool) string {
	switch s {
	case contracts.Abandoned:
		return OutcomeAbandoned
	case contracts.Superseded:
		return OutcomeSuperseded
	case contracts.Blocked, contracts.IntegrationFailed:
		return OutcomeBlocked
	}
	switch {
	case rejected:
		return OutcomeRejected
	case s == contracts.Merged:
		return OutcomeMerged
	}
	return OutcomeInFlight
}

func endedSince(at string, from time.Time) bool {
	if from.IsZero() {
		return true
	}
	t, err := contracts.ParseTime(at)
	return err == nil && !t.Before(from)
}

// tally adds sessions up by each breakdown.
type tally struct {
	total                               Spend
	tasks, agents, roles, models, outcs map[string]*UsageRow
}

func newTally() *tally {
	return &tally{tasks: map[string]*UsageRow{}, agents: map[string]*UsageRow{}, roles: map[string]*UsageRow{},
		models: map[string]*UsageRow{}, outcs: map[string]*UsageRow{}}
}

func (t *tally) add(task *taskSessions, agent string, u contracts.Usage, outcome string) {
	t.count(task, agent, u, outcome, (*Spend).add)
}

// addSum adds the task-less sessions of agent, a sum.
func (t *tally) addSum(agent string, u contracts.Usage) {
	t.count(nil, agent, u, OutcomePlanning, (*Spend).addSum)
}

func (t *tally) count(task *taskSessions, agent string, u contracts.Usage, outcome string, add func(*Spend, contracts.Usage)) {
	add(&t.total, u)
	row := func(m map[string]*UsageRow, key string, mk func() UsageRow) {
		r, ok := m[key]
		if !ok {
			v := mk()
			r = &v
			m[key] = r
		}
		add(&r.Spend, u)
	}
	if task != nil {
		row(t.tasks, task.ID, func() UsageRow { return UsageRow{Task: task.ID, Status: string(task.Status)} })
	}
	if agent == "" {
		agent = "unknown"
	}
	role := "unknown"
	if r, err := contracts.ParseAgentID(agent); err == nil {
		role = r.IDPrefix()
	}
	model := u.Model
	if model == "" {
		model = "unknown"
	}
	row(t.agents, agent, func() UsageRow { return UsageRow{Agent: agent} })
	row(t.roles, role, func() UsageRow { return UsageRow{Role: role} })
	row(t.models, model, func() UsageRow { return UsageRow{Model: model} })
	row(t.outcs, outcome, func() UsageRow { return UsageRow{Outcome: outcome} })
}

// fill puts the tally in rep: rows by spend, most first (money, then
// tokens, then name); outcomes in outcomeOrder.
func (t *tally) fill(rep *UsageReport) {
	rep.Total = t.total.rounded()
	for _, m := range []map[string]*UsageRow{t.tasks, t.agents, t.roles, t.models, t.outcs} {
		for _, r := range m {
			r.Spend = r.Spend.rounded()
		}
	}
	rep.ByTask = sortedRows(t.tasks, func(r UsageRow) string { return r.Task })
	rep.ByAgent = sortedRows(t.agents, func(r UsageRow) string { return r.Agent })
	rep.ByRole = sortedRows(t.roles, func(r UsageRow) string { return r.Role })
	rep.ByModel = sortedRows(t.models, func(r UsageRow) string { return r.Model })
	for _, o := range outcomeOrder {
		if r, ok := t.outcs[o]; ok {
			rep.ByOutcome = append(rep.ByOutcome, *r)
		}
	}
}

func sortedRows(m map[string]*UsageRow, name func(UsageRow) string) []UsageRow {
	out := make([]UsageRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b UsageRow) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(b.Tokens, a.Tokens), CompareIDs(name(a), name(b)))
	})
	return out
}

// goalBudget is the goal's spend against config.budgets, nil when the goal
// has no budget.
func goalBudget(c contracts.Config, spent Spend) *SpendBudget {
	bud := c.Budgets
	if bud == nil || bud.GoalTokens <= 0 && bud.GoalUSD <= 0 {
		return nil
	}
	spent = spent.rounded()
	b := &SpendBudget{Spent: spent, GoalTokens: max(bud.GoalTokens, 0), GoalUSD: max(bud.GoalUSD, 0)}
	if b.GoalTokens > 0 {
		b.TokensShare = float64(spent.Tokens) / float64(b.GoalTokens)
	}
	if b.GoalUSD > 0 {
		b.USDShare = spent.CostUSD / b.GoalUSD
	}
	return b
}

// Line is what a board says of its spend on one line that fits 80
// columns: the sprint's tokens and money, then the share of the goal's
// budget spent (git liza usage has the exact counts).
func (b *BoardSpend) Line() string {
	s := fmt.Sprintf("Spend %s tokens %s (sprint)", Compact(b.Sprint.Tokens), contracts.Dollars(b.Sprint.CostUSD))
	bud := b.Budget
	if bud == nil {
		return s + "; no goal budget"
	}
	var parts []string
	if bud.GoalTokens > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% of %s tokens", bud.TokensShare*100, Compact(bud.GoalTokens)))
	}
	if bud.GoalUSD > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% of %s", bud.USDShare*100, contracts.Dollars(bud.GoalUSD)))
	}
	return s + "; goal " + strings.Join(parts, ", ")
}

// Compact writes a count of tokens short: exact up to 99,999, then in
// thousands (k), millions (M) or billions (B) to three figures: 123k,
// 1.23M, 2M.
func Compact(n int64) string {
	if n < 100000 {
		return Thousands(n)
	}
	x, unit := float64(n)/1e3, "k"
	switch {
	case n >= 1e9:
		x, unit = float64(n)/1e9, "B"
	case n >= 1e6:
		x, unit = float64(n)/1e6, "M"
	}
	digits := 2
	switch {
	case x >= 100:
		digits = 0
	case x >= 10:
		digits = 1
	}
	s := strconv.FormatFloat(x, 'f', digits, 64)
	if s == "1000" && unit != "B" { // 999,999,999 is 1B, not 1000M
		s, unit = "1", map[string]string{"k": "M", "M": "B"}[unit]
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + unit
}

// Thousands writes n with a comma between groups of three digits: 4,312.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}
