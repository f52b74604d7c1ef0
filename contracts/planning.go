package contracts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// The planner's wake triggers.
const (
	TriggerInitialPlanning     = "INITIAL_PLANNING"     // no task yet and the goal is open
	TriggerHypothesisExhausted = "HYPOTHESIS_EXHAUSTED" // two coders or more failed a live task
	TriggerBlockedTasks        = "BLOCKED_TASKS"        // tasks are BLOCKED
	TriggerIntegrationFailed   = "INTEGRATION_FAILED"   // approved work did not merge
	TriggerImmediateDiscovery  = "IMMEDIATE_DISCOVERY"  // an immediate discovery is not a task yet
	TriggerHumanNotes          = "HUMAN_NOTES"          // the human left notes
)

// WakeTriggers lists the wake triggers, most urgent first. A goal with no
// plan comes first; then a task two coders failed, which needs a rescope
// rather than a third attempt; then blocked tasks, which stop work until
// someone acts; then failed merges, which a coder can fix once claimed;
// then discoveries and notes, which stay on the board once written.
var WakeTriggers = []string{
	TriggerInitialPlanning,
	TriggerHypothesisExhausted,
	TriggerBlockedTasks,
	TriggerIntegrationFailed,
	TriggerImmediateDiscovery,
	TriggerHumanNotes,
}

// KnownTrigger reports whether name is one of WakeTriggers.
func KnownTrigger(name string) bool { return slices.Contains(WakeTriggers, name) }

// The keys of PlanningContext.Counts.
const (
	CountTotal                = "total"
	CountMerged               = "merged"
	CountInProgress           = "in_progress"
	CountUnclaimed            = "unclaimed"
	CountDraft                = "draft"
	CountBlocked              = "blocked"
	CountIntegrationFailed    = "integration_failed"
	CountHypothesisExhausted  = "hypothesis_exhausted"
	CountImmediateDiscoveries = "immediate_discoveries"
	CountHumanNotes           = "human_notes"
)

// CountKeys lists the keys of PlanningContext.Counts in the order a prompt
// shows them.
var CountKeys = []string{
	CountTotal, CountMerged, CountInProgress, CountUnclaimed, CountDraft, CountBlocked,
	CountIntegrationFailed, CountHypothesisExhausted, CountImmediateDiscoveries, CountHumanNotes,
}

// PlanningContext is what wakes the planner, as a pure function of the
// state (see Planning).
type PlanningContext struct {
	// Trigger is the most urgent trigger present, or "" when nothing calls
	// for the planner.
	Trigger string `json:"trigger"`
	// Triggers lists every trigger present, most urgent first.
	Triggers []string `json:"triggers"`
	// Items lists what caused the triggers, one stable string per cause,
	// grouped by trigger in the order of WakeTriggers:
	// "initial:GOAL", "hypothesis_exhausted:TASK", "blocked:TASK",
	// "integration_failed:TASK", "discovery:ID" and "note:N", where N is the
	// note's index in human_notes. An item does not change while its cause
	// stays, whatever else happens on the board.
	Items []string `json:"items"`
	// Details gives a one-line description of some items, for the prompt.
	// Fingerprint ignores it.
	Details map[string]string `json:"details,omitempty"`
	// Counts is the sprint state: tasks by kind (archived tasks included in
	// total and merged), immediate discoveries not converted, human notes.
	Counts map[string]int `json:"counts"`
}

// Planning computes the planner's wake triggers from st:
//
//   - INITIAL_PLANNING: there is no task, live or archived, and the goal is
//     not completed;
//   - HYPOTHESIS_EXHAUSTED: a task that is not terminal has two coders or
//     more in failed_by;
//   - BLOCKED_TASKS: tasks are BLOCKED;
//   - INTEGRATION_FAILED: tasks are INTEGRATION_FAILED;
//   - IMMEDIATE_DISCOVERY: a discovery of urgency immediate has no
//     converted_to_task;
//   - HUMAN_NOTES: human_notes is not empty. Every note counts; a supervisor
//     that remembers the items it has shown wakes the planner for new ones.
func Planning(st *State) PlanningContext {
	p := PlanningContext{Triggers: []string{}, Items: []string{}, Details: map[string]string{}, Counts: map[string]int{}}
	for _, k := range CountKeys {
		p.Counts[k] = 0
	}
	if st == nil {
		return p
	}
	groups := map[string][]string{}
	add := func(trigger, item, detail string) {
		groups[trigger] = append(groups[trigger], item)
		if detail != "" {
			p.Details[item] = detail
		}
	}

	for _, t := range st.Archive {
		if t == nil {
			continue
		}
		p.Counts[CountTotal]++
		if t.Status == Merged {
			p.Counts[CountMerged]++
		}
	}
	for _, t := range st.Tasks {
		if t == nil {
			continue
		}
		p.Counts[CountTotal]++
		switch t.Status {
		case Merged:
			p.Counts[CountMerged]++
		case Claimed, ReadyForReview, Rejected, Approved:
			p.Counts[CountInProgress]++
		case Unclaimed:
			p.Counts[CountUnclaimed]++
		case Draft:
			p.Counts[CountDraft]++
		case Blocked:
			p.Counts[CountBlocked]++
			add(TriggerBlockedTasks, "blocked:"+t.ID, blockedDetail(t))
		case IntegrationFailed:
			p.Counts[CountIntegrationFailed]++
			add(TriggerIntegrationFailed, "integration_failed:"+t.ID, lastReason(t, "integration_failed"))
		}
		if len(t.FailedBy) >= 2 && !t.Status.Terminal() {
			p.Counts[CountHypothesisExhausted]++
			add(TriggerHypothesisExhausted, "hypothesis_exhausted:"+t.ID,
				fmt.Sprintf("%s, failed by %s", t.Status, strings.Join(t.FailedBy, ", ")))
		}
	}
	if p.Counts[CountTotal] == 0 && !goalClosed(st.Goal) {
		add(TriggerInitialPlanning, "initial:"+st.Goal.ID, st.Goal.Description)
	}
	for i, d := range st.Discovered {
		if d == nil || d.Urgency != "immediate" || d.ConvertedToTask != "" {
			continue
		}
		p.Counts[CountImmediateDiscoveries]++
		id := d.ID
		if id == "" {
			id = fmt.Sprintf("#%d", i)
		}
		detail := d.Description
		if d.Severity != "" {
			detail = d.Severity + ": " + detail
		}
		if d.During != "" {
			detail += " (during " + d.During + ")"
		}
		add(TriggerImmediateDiscovery, "discovery:"+id, detail)
	}
	for i, n := range st.HumanNotes {
		if n == nil {
			continue
		}
		p.Counts[CountHumanNotes]++
		add(TriggerHumanNotes, fmt.Sprintf("note:%d", i), n.Message)
	}

	for _, trig := range WakeTriggers {
		items := groups[trig]
		if len(items) == 0 {
			continue
		}
		if trig != TriggerHumanNotes && trig != TriggerImmediateDiscovery {
			slices.SortFunc(items, compareNatural)
		}
		p.Triggers = append(p.Triggers, trig)
		p.Items = append(p.Items, items...)
	}
	if len(p.Triggers) > 0 {
		p.Trigger = p.Triggers[0]
	}
	return p
}

// Fingerprint identifies the items of p: two contexts have the same
// fingerprint exactly when they list the same items in the same order. It is
// "" when there is no item.
func (p PlanningContext) Fingerprint() string {
	if len(p.Items) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(p.Items, "\n")))
	return hex.EncodeToString(sum[:])
}

// GoalComplete reports whether the goal's work is done: there is at least
// one task, live or archived, every task is terminal (MERGED, SUPERSEDED or
// ABANDONED) and at least one of them is MERGED.
func GoalComplete(st *State) bool {
	if st == nil {
		return false
	}
	n, merged := 0, false
	for _, list := range [][]*Task{st.Tasks, st.Archive} {
		for _, t := range list {
			if t == nil {
				continue
			}
			n++
			if !t.Status.Terminal() {
				return false
			}
			if t.Status == Merged {
				merged = true
			}
		}
	}
	return n > 0 && merged
}

// goalClosed reports whether the goal is marked completed.
func goalClosed(g Goal) bool {
	return strings.EqualFold(g.Status, "COMPLETED") || g.Completed != ""
}

// blockedDetail is the reason and questions of a blocked task on one line.
func blockedDetail(t *Task) string {
	s := t.BlockedReason
	if len(t.BlockedQuestions) > 0 {
		s += " | questions: " + strings.Join(t.BlockedQuestions, " / ")
	}
	return s
}

// lastReason is the reason of the task's latest history event named event.
func lastReason(t *Task, event string) string {
	for i := len(t.History) - 1; i >= 0; i-- {
		if ev := t.History[i]; ev != nil && ev.Event == event {
			return ev.Reason
		}
	}
	return ""
}
