package ops

import (
	"context"
	"fmt"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// The outcomes of an agent session, as SessionEnded records them.
const (
	SessionDone     = "done"     // exited 0 and moved its task on
	SessionIdle     = "idle"     // exited 0 without submitting, blocking or handing off
	SessionRestart  = "restart"  // exited 42: start again at once
	SessionCrash    = "crash"    // any other exit
	SessionTimebox  = "timebox"  // stopped at the end of its timebox
	SessionStopped  = "stopped"  // stopped by its supervisor (ABORT, shutdown, replaced)
	SessionNoStart  = "no_start" // could not be started
	SessionEventTag = "session_ended"
)

// SessionRequest records the end of one agent session on its task.
type SessionRequest struct {
	Call
	Task    string
	Outcome string // one of the Session* outcomes
	Exit    int    // the exit status; -1 when there was none
	Seconds int    // how long it ran
	// Log is the file that holds the session's output.
	Log string
	// Detail says more: why it crashed, its timebox, its last lines.
	Detail string
	// Usage is what the session spent, as its CLI reported it (nil when it
	// reported nothing). Its cost is kept when the CLI reported one
	// (cost_source reported); otherwise the board's price table gives it.
	// A session with no task (a planner's) is recorded only for its
	// usage, on the agent's entry.
	Usage *contracts.Usage
}

// SessionEnded appends a session_ended event to the task's history: which
// agent ran, how it ended, and the log file of its output, so that the
// task's history says what happened in every session, and where to read
// it. It is a supervisor's step, written under its registration.
func (s *Service) SessionEnded(ctx context.Context, r SessionRequest) (Written, error) {
	if s.Agent == "" {
		return Written{}, contracts.Invalidf("a session is recorded for an agent (--agent or LIZA_AGENT_ID)")
	}
	if r.Task != "" || r.Usage == nil {
		if err := contracts.ValidTaskID(r.Task); err != nil {
			return Written{}, err
		}
	}
	in := sessionInput{Task: r.Task, Outcome: r.Outcome, Seconds: max(r.Seconds, 0), Log: r.Log, Detail: clipText(r.Detail, maxSessionDetail), Usage: r.Usage}
	if r.Exit >= 0 {
		exit := r.Exit
		in.Exit = &exit
	}
	res, err := s.write(ctx, r.Call, kindSessionEnded, in, nil)
	if err != nil {
		return Written{}, err
	}
	return written(res), nil
}

// maxSessionDetail is how much of a session's detail (its last lines of
// output, mostly) its event keeps; maxSessionLog bounds the log's name.
const (
	maxSessionDetail = 2000
	maxSessionLog    = 1024
)

// sessionInput is what the end of a session records.
type sessionInput struct {
	Task    string `json:"task"`
	Outcome string `json:"outcome"`
	Exit    *int   `json:"exit,omitempty"` // none when it did not exit by itself
	Seconds int    `json:"seconds,omitempty"`
	Log     string `json:"log,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Usage is absent from the sessions recorded before spend was: they
	// replay as they were made.
	Usage *contracts.Usage `json:"usage,omitempty"`
}

// kindSessionEnded is recorded under the register operation: it is the
// supervisor's, which every agent role has. An agent records sessions only
// on a task it worked on (its history names it), so that nobody annotates
// other agents' tasks under cover of a session.
var kindSessionEnded = def(SessionEventTag, contracts.OpRegister, func(tx *cas.Tx, in *sessionInput) (any, error) {
	agent := tx.Actor
	if agent == "" {
		return nil, contracts.Invalidf("a session is recorded for an agent (--agent or LIZA_AGENT_ID)")
	}
	switch in.Outcome {
	case SessionDone, SessionIdle, SessionRestart, SessionCrash, SessionTimebox, SessionStopped, SessionNoStart:
	default:
		return nil, contracts.Invalidf("unknown session outcome %q", in.Outcome)
	}
	if in.Seconds < 0 || in.Exit != nil && *in.Exit < 0 {
		return nil, contracts.Invalidf("a session's exit status and duration are not negative")
	}
	if len(in.Log) > maxSessionLog || len(in.Detail) > maxSessionDetail+len("…") {
		return nil, contracts.Invalidf("a session's log name is at most %d bytes and its detail %d", maxSessionLog, maxSessionDetail)
	}
	var usage *contracts.Usage
	if in.Usage != nil {
		if err := contracts.ValidSessionUsage(*in.Usage); err != nil {
			return nil, err
		}
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		// Priced here, from the board's table at the time, so that a
		// replay prices it the same and a priced cost cannot be forged.
		u, _ := m.Config.Price(*in.Usage)
		usage = &u
	}
	if usage != nil && tx.Rules >= contracts.RulesGoalSpend {
		if err := addGoalSpend(tx, *usage); err != nil {
			return nil, err
		}
	}
	if in.Task == "" && usage != nil {
		return nil, taskless(tx, agent, in.Outcome, *usage)
	}
	if err := contracts.ValidTaskID(in.Task); err != nil {
		return nil, err
	}
	t, err := tx.MustTask(in.Task)
	if err != nil {
		return nil, err
	}
	if !workedOn(t, agent) {
		return nil, contracts.Invalidf("%s never worked on task %s: a session is recorded on the agent's own task", agent, t.ID)
	}
	ev := &contracts.HistoryEvent{Time: tx.NowString(), Event: SessionEventTag, Agent: agent,
		Reason: in.Detail, Extra: contracts.Extra{"outcome": in.Outcome}}
	if in.Exit != nil {
		ev.Extra["exit"] = *in.Exit
	}
	if in.Seconds > 0 {
		ev.Extra["seconds"] = in.Seconds
	}
	if in.Log != "" {
		ev.Extra["log"] = in.Log
	}
	ev.Usage = usage
	t.History = append(t.History, ev)
	tx.PutTask(t)
	tx.Describe(fmt.Sprintf("session of %s on %s: %s", agent, t.ID, in.Outcome), t.ID)
	return nil, nil
})

// taskless records what a session without a task (a planner's) spent:
// no task's history holds it, so it is added to the agent's own entry,
// which GoalSpend and AgentSpend count.
func taskless(tx *cas.Tx, agent, outcome string, u contracts.Usage) error {
	a, err := tx.Agent(agent)
	if err != nil {
		return err
	}
	if a == nil {
		return contracts.Invalidf("%s is not registered: a session without a task is recorded on the agent's entry", agent)
	}
	sum := contracts.Usage{}
	if a.Spend != nil {
		sum = *a.Spend
	}
	sum.Add(u)
	if msg := contracts.CheckUsage(sum, contracts.MaxSpendTokens, contracts.MaxSpendUSD); msg != "" {
		return contracts.Invalidf("%s's spend: %s", agent, msg)
	}
	a.Spend = &sum
	if tx.Rules >= contracts.RulesGoalSpend {
		// addGoalSpend, before, started the goal's figure, and the
		// agent's part of it, if the goal had none.
		a.GoalSpend = a.GoalSpend.Plus(u)
	}
	tx.PutAgent(agent, a)
	tx.Describe(fmt.Sprintf("session of %s: %s, %d tokens", agent, outcome, u.Tokens()), "")
	return nil
}

// workedOn reports whether agent holds t, or its history names agent.
func workedOn(t *contracts.Task, agent string) bool {
	if t.AssignedTo == agent || t.ReviewingBy == agent {
		return true
	}
	for _, ev := range t.History {
		if ev != nil && ev.Agent == agent {
			return true
		}
	}
	return false
}

// clipText keeps the last n bytes of s, on a rune boundary: the end of an
// agent's output is what explains how it ended.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			return "…" + s[i:]
		}
	}
	return "…" + s
}

// addGoalSpend adds a session's usage to the goal's spend (goal.spend,
// RulesGoalSpend on). A goal that has none yet began under older rules
// (or was imported): its figure starts from what they counted, every
// session the board records, so that an upgrade forgets nothing the goal
// was held to.
func addGoalSpend(tx *cas.Tx, u contracts.Usage) error {
	m, err := tx.Meta()
	if err != nil {
		return err
	}
	if m.Goal.Spend == nil {
		// The older rules counted each agent's task-less sessions
		// whole: so does the goal's part of them, from here.
		if err := startGoalSpends(tx); err != nil {
			return err
		}
	}
	sum, err := goalSpendOf(tx)
	if err != nil {
		return err
	}
	sum.Add(u)
	if msg := contracts.CheckUsage(sum, contracts.MaxSpendTokens, contracts.MaxSpendUSD); msg != "" {
		return contracts.Invalidf("the goal's spend: %s", msg)
	}
	m.Goal.Spend = (*contracts.Sum)(&sum)
	tx.PutMeta(m)
	return nil
}

// startGoalSpends sets each agent's goal_spend to its whole spend: what
// a goal that keeps no figure of its own counts of them.
func startGoalSpends(tx *cas.Tx) error {
	return eachAgent(tx, func(a *contracts.Agent) bool {
		if a.Spend == nil || a.GoalSpend != nil {
			return false
		}
		g := contracts.Sum(*a.Spend)
		a.GoalSpend = &g
		return true
	})
}

// eachAgent calls f on every agent entry, and writes back those f changed.
func eachAgent(tx *cas.Tx, f func(a *contracts.Agent) bool) error {
	ids, err := tx.AgentIDs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		a, err := tx.Agent(id)
		if err != nil {
			return err
		}
		if a != nil && f(a) {
			tx.PutAgent(id, a)
		}
	}
	return nil
}

// goalSpendOf is what the goal of tx's state has spent under tx's rules:
// its own figure when it keeps one, else (older rules, or a goal that has
// recorded no session under the newer) the whole board's sessions, read
// whole.
func goalSpendOf(tx *cas.Tx) (contracts.Usage, error) {
	m, err := tx.Meta()
	if err != nil {
		return contracts.Usage{}, err
	}
	if tx.Rules >= contracts.RulesGoalSpend && m.Goal.Spend != nil {
		return contracts.Usage(*m.Goal.Spend), nil
	}
	st, err := tx.Snap.Load()
	if err != nil {
		return contracts.Usage{}, err
	}
	return contracts.GoalSpendUnder(st, tx.Rules), nil
}
