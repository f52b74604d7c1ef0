package ops

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// RegisterRequest registers the service's agent id for a supervisor.
type RegisterRequest struct {
	Call
	// Replace takes the id from a supervisor that still holds it.
	Replace bool
	// ReplaceGone takes the id from the supervisor that holds it only if
	// the board names it by this host string ("HOSTNAME pid N"): one the
	// caller has seen end on this host without unregistering (killed
	// outright), whose lease has not run out yet. Unlike Replace, it
	// never takes the id from another supervisor that registered since.
	ReplaceGone string
	// Host says where the supervisor runs; empty for this machine and
	// process ("HOSTNAME pid N").
	Host string
}

// Registration is what a registration reports.
type Registration struct {
	Agent      string `json:"agent"`
	Generation int    `json:"generation"`
	Replaced   string `json:"replaced,omitempty"`
	Lease      string `json:"supervisor_lease"`
	Written    `json:"-"`
}

// Register gives the agent id to a new supervisor with the next
// generation. A supervisor that still holds the id (its supervisor lease
// has not ended) keeps it unless Replace is set; the replaced one is then
// stale and every write it tries is refused.
func (s *Service) Register(ctx context.Context, r RegisterRequest) (*Registration, error) {
	if s.Agent == "" {
		return nil, contracts.Invalidf("supervise register needs an agent id (--agent or LIZA_AGENT_ID)")
	}
	host := r.Host
	if host == "" {
		name, _ := os.Hostname()
		host = fmt.Sprintf("%s pid %d", name, os.Getpid())
	}
	return writeAs[Registration](ctx, s, r.Call, kindRegister, registerInput{Replace: r.Replace, ReplaceGone: r.ReplaceGone, Host: host}, nil)
}

type registerInput struct {
	Replace     bool   `json:"replace,omitempty"`
	ReplaceGone string `json:"replace_gone,omitempty"`
	Host        string `json:"host"`
}

var kindRegister = def("register", contracts.OpRegister, func(tx *cas.Tx, r *registerInput) (any, error) {
	agent, host := tx.Actor, r.Host
	if agent == "" {
		return nil, contracts.Invalidf("supervise register needs an agent id (--agent or LIZA_AGENT_ID)")
	}
	role, _ := contracts.ParseAgentID(agent)
	_, lease, err := tx.Lease()
	if err != nil {
		return nil, err
	}
	a, err := tx.Agent(agent)
	if err != nil {
		return nil, err
	}
	out := Registration{Agent: agent, Lease: lease}
	if a == nil {
		a = &contracts.Agent{Role: string(role), Status: "IDLE"}
	} else if a.SupervisorLease != "" {
		if !tx.LeaseEnded(a.SupervisorLease) {
			gone := tx.Rules >= contracts.RulesSupervisorGone && r.ReplaceGone != "" && r.ReplaceGone == a.Host
			if !r.Replace && !gone {
				return nil, contracts.Invalidf("%s is already supervised (generation %d on %s, until %s%s); stop that supervisor, or take the id with --replace", agent, a.Generation, a.Host, a.SupervisorLease, tx.Held(a.SupervisorLease))
			}
			out.Replaced = fmt.Sprintf("generation %d on %s", a.Generation, a.Host)
		}
	}
	// A supervisor that stopped cleanly retired its generation on the way
	// out (see Unregister) and left no host: the next registration takes
	// the number it moved on to. Otherwise the generation moves on now,
	// so that whatever still runs under the old one is refused.
	if a.Generation == 0 || a.Host != "" {
		a.Generation++
	}
	a.Started, a.Heartbeat = tx.NowString(), tx.NowString()
	a.Host = host
	a.StopReason = "" // the last stop was seen to
	if tx.Rules < contracts.RulesWhole {
		a.SupervisorLease, a.LeaseExpires = lease, lease
	} else {
		// The supervisor's lease says it is alive; the agent's own
		// lease_expires is for the work it holds, and an idle agent
		// holds none. An entry an older git-liza left is put right.
		a.SupervisorLease = lease
		if _, err := settleAgent(tx, agent, a); err != nil {
			return nil, err
		}
	}
	if a.Status == "" {
		a.Status = "IDLE"
	}
	tx.PutAgent(agent, a)
	out.Generation = a.Generation
	subject := fmt.Sprintf("register %s (generation %d)", agent, a.Generation)
	if out.Replaced != "" {
		subject += ", replacing " + out.Replaced
	}
	tx.Describe(subject, "")
	return out, nil
})

// Unregistered is what ending a registration released.
type Unregistered struct {
	Agent    string   `json:"agent"`
	Released []string `json:"released"`
	Written  `json:"-"`
}

// Unregister ends a supervisor's registration. What its agent held is let
// go without losing work: a coder's claim keeps its worktree and branch
// but its lease ends now, so any coder may take the task over; a review is
// released. The generation moves on, so that an agent process the
// supervisor left behind can no longer write as the agent.
func (s *Service) Unregister(ctx context.Context, r UnregisterRequest) (*Unregistered, error) {
	if s.Agent == "" {
		return nil, contracts.Invalidf("supervise exit needs an agent id (--agent or LIZA_AGENT_ID)")
	}
	return writeAs[Unregistered](ctx, s, r.Call, kindUnregister, unregisterInput{Reason: r.Reason}, nil)
}

// UnregisterRequest ends a supervisor's registration.
type UnregisterRequest struct {
	Call
	// Reason, when the supervisor stopped for something a person must see
	// to (a crash loop, an environment failure), says what; empty for a
	// clean stop. It is kept on the board as the agent's stop_reason until
	// the next registration, cut to MaxStopReason bytes and made one
	// printable line.
	Reason string
}

// MaxStopReason bounds an agent's stop_reason, in bytes.
const MaxStopReason = 500

// unregisterInput is what an unregister records. A clean stop records {},
// as every unregister did before the reason existed: its commit, and the
// replay of the older ones, are unchanged.
type unregisterInput struct {
	Reason string `json:"reason,omitempty"`
}

var kindUnregister = def("unregister", contracts.OpRegister, func(tx *cas.Tx, in *unregisterInput) (any, error) {
	agent := tx.Actor
	a, err := tx.Agent(agent)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, contracts.Invalidf("%s is not registered", agent)
	}
	idx, err := tx.Index()
	if err != nil {
		return nil, err
	}
	var released []string
	for _, sum := range idx {
		coder := sum.AssignedTo == agent && sum.Status == contracts.Claimed
		reviewer := sum.ReviewingBy == agent && sum.Status == contracts.ReadyForReview
		if !coder && !reviewer {
			continue
		}
		t, err := tx.MustTask(sum.ID)
		if err != nil {
			return nil, err
		}
		ev := &contracts.HistoryEvent{Time: tx.NowString(), Agent: agent}
		if coder {
			t.LeaseExpires = tx.NowString()
			ev.Event, ev.Reason = "lease_released", "supervisor of "+agent+" stopped; the task may be taken over with its work"
		} else {
			t.ReviewingBy, t.ReviewLeaseExpires = "", ""
			ev.Event, ev.Reason = "review_released", "supervisor of "+agent+" stopped"
		}
		t.History = append(t.History, ev)
		tx.PutTask(t)
		released = append(released, t.ID)
	}
	ended := a.Generation
	a.Status, a.CurrentTask = "IDLE", ""
	a.SupervisorLease, a.LeaseExpires, a.Host = "", "", ""
	a.Generation++
	a.StopReason = stopReason(in.Reason)
	tx.PutAgent(agent, a)
	subject := fmt.Sprintf("supervisor of %s stopped (generation %d)", agent, ended)
	if a.StopReason != "" {
		subject += ": " + a.StopReason
	}
	tx.Describe(subject, "")
	if released == nil {
		released = []string{}
	}
	return map[string]any{"agent": agent, "released": released}, nil
})

// Complete marks the goal and the sprint COMPLETED (see GoalComplete); the
// planner's supervisor calls it once every task is terminal and one was
// merged (contracts.GoalComplete).
func (s *Service) Complete(ctx context.Context, call Call) (Written, error) {
	res, err := s.write(ctx, call, kindComplete, struct{}{}, nil)
	if err != nil {
		return Written{}, err
	}
	return written(res), nil
}

// GoalCompleteResult is what git liza goal complete did.
type GoalCompleteResult struct {
	Goal   string `json:"goal"`
	Sprint string `json:"sprint"`
	// Already is set when the goal was COMPLETED before: nothing was
	// written.
	Already bool `json:"already,omitempty"`
	Written `json:"-"`
}

// GoalComplete is git liza goal complete: a human or a planner marks the
// goal and its sprint COMPLETED once every task of the goal, live and
// archived, is terminal (MERGED, SUPERSEDED or ABANDONED), as the
// planner's supervisor does on its own. It is refused, naming the live
// tasks, while one is not, and for a goal with no task at all; a goal
// already COMPLETED is left as it is. After it, the goal takes no new work
// and goal new starts the next one.
func (s *Service) GoalComplete(ctx context.Context, call Call) (*GoalCompleteResult, error) {
	// The goal's lifecycle is goal new's (OpGoal); the operation recorded
	// is the supervisor's, whose permission is the same.
	if err := contracts.Permit(s.Agent, contracts.OpGoal); err != nil {
		return nil, err
	}
	return writeAs[GoalCompleteResult](ctx, s, call, kindComplete, struct{}{}, nil)
}

var kindComplete = def("complete", contracts.OpSprint, func(tx *cas.Tx, _ *struct{}) (any, error) {
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	whole := tx.Rules >= contracts.RulesWhole
	closed := tx.Rules >= contracts.RulesGoalClosed
	if m.Goal.Status == "COMPLETED" {
		if closed {
			return GoalCompleteResult{Goal: m.Goal.ID, Sprint: m.Sprint.ID, Already: true}, nil
		}
		return nil, nil
	}
	idx, err := tx.Index()
	if err != nil {
		return nil, err
	}
	var statuses []contracts.Status
	var live []string
	ids := slices.Collect(maps.Keys(idx))
	sort.Slice(ids, func(i, j int) bool { return contracts.NaturalLess(ids[i], ids[j]) })
	for _, id := range ids {
		t := idx[id]
		if !t.Status.Terminal() {
			if !closed {
				return nil, contracts.Invalidf("task %s is %s: the goal is not complete", t.ID, t.Status)
			}
			live = append(live, fmt.Sprintf("%s (%s)", t.ID, t.Status))
		}
		statuses = append(statuses, t.Status)
	}
	if len(live) > 0 {
		return nil, contracts.LiveTasksError(m.Goal, live)
	}
	archived, err := tx.ArchivedIDs()
	if err != nil {
		return nil, err
	}
	var sprint contracts.Sprint
	if whole {
		sprint = m.Sprint
		if sprint.Scope.Planned, err = tx.Planned(); err != nil {
			return nil, err
		}
	}
	for _, id := range archived {
		if whole && !sprint.InScope(id) {
			continue // a task of a goal before this one (git liza goal new)
		}
		t, err := tx.ArchivedTask(id)
		if err != nil {
			return nil, err
		}
		if t != nil {
			statuses = append(statuses, t.Status)
		}
	}
	switch {
	case closed && len(statuses) == 0:
		return nil, contracts.Invalidf("goal %s has no task: nothing to complete", m.Goal.ID)
	case closed:
		// Every task is terminal: whoever completes the goal by hand
		// (a human, a planner) judges it done, merged or not; the
		// planner's supervisor waits for a merge (contracts.GoalComplete).
	case !contracts.TasksComplete(statuses):
		return nil, contracts.Invalidf("no task was merged: the goal is not complete")
	}
	now := tx.NowString()
	m.Goal.Status, m.Goal.Completed = "COMPLETED", now
	m.Sprint.Status, m.Sprint.Timeline.Ended = "COMPLETED", now
	tx.PutMeta(m)
	tx.Describe(fmt.Sprintf("goal %s completed", m.Goal.ID), "")
	if closed {
		return GoalCompleteResult{Goal: m.Goal.ID, Sprint: m.Sprint.ID}, nil
	}
	return nil, nil
})

// stopReason makes a recorded stop reason one printable line of at most
// MaxStopReason bytes, cut on a character boundary.
func stopReason(s string) string {
	s = contracts.Printable(strings.Join(strings.Fields(s), " "))
	if len(s) <= MaxStopReason {
		return s
	}
	cut := MaxStopReason - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
