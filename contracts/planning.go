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
	// note's number (1 for the first). An item does not change while its cause
	// stays, whatever else happens on the board.
	Items []string `json:"items"`
	// Details gives a one-line description of some items, for the prompt.
	// Fingerprint ignores it.
	Details map[string]string `json:"details,omitempty"`
	// Counts is the sprint state: tasks by kind (archived tasks included in
	// total and merged), immediate discoveries not converted, pending human
	// notes.
	Counts map[string]int `json:"counts"`
}

// Planning computes the planner's wake triggers from st:
//
//   - INITIAL_PLANNING: the goal has no task, live or archived (archived
//     tasks count when the sprint's scope names them: those of a goal
//     finished before git liza goal new do not), and it is not completed;
//   - HYPOTHESIS_EXHAUSTED: a task that is not terminal has two coders or
//     more in failed_by;
//   - BLOCKED_TASKS: tasks are BLOCKED;
//   - INTEGRATION_FAILED: tasks are INTEGRATION_FAILED;
//   - IMMEDIATE_DISCOVERY: a discovery of urgency immediate has no
//     converted_to_task;
//   - HUMAN_NOTES: notes are pending (see PendingNotes).
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
		if t == nil || !st.Sprint.InScope(t.ID) {
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
	for _, n := range PendingNotes(st) {
		p.Counts[CountHumanNotes]++
		add(TriggerHumanNotes, fmt.Sprintf("note:%d", n.N), n.Message)
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

// GoalComplete reports whether the goal's work is done (see TasksComplete),
// over the goal's tasks, live and archived (SprintTasks).
func GoalComplete(st *State) bool {
	if st == nil {
		return false
	}
	var statuses []Status
	for _, t := range SprintTasks(st) {
		if t != nil {
			statuses = append(statuses, t.Status)
		}
	}
	return TasksComplete(statuses)
}

// TasksComplete is the rule that completes a goal, given the status of
// every task, live and archived: there is at least one task, every task is
// terminal (MERGED, SUPERSEDED or ABANDONED) and at least one is MERGED.
func TasksComplete(statuses []Status) bool {
	merged := false
	for _, s := range statuses {
		if !s.Terminal() {
			return false
		}
		merged = merged || s == Merged
	}
	return merged
}

// NumberedNote is a human note with its number, as git liza note prints it
// (1 for the first).
type NumberedNote struct {
	N int
	*HumanNote
}

// PendingNotes lists the notes a planner has to deal with: every human note,
// whoever it is for, except those a planner wrote (its answers to coders) and
// those a planner has marked processed (git liza note --done).
func PendingNotes(st *State) []NumberedNote {
	if st == nil {
		return nil
	}
	done := map[int]bool{}
	for id, a := range st.Agents {
		if r, err := ParseAgentID(id); err == nil && r == RolePlanner && a != nil {
			for _, n := range a.NotesProcessed {
				done[n] = true
			}
		}
	}
	var out []NumberedNote
	for i, n := range st.HumanNotes {
		if n == nil || done[i+1] {
			continue
		}
		if r, err := ParseAgentID(n.By); err == nil && r == RolePlanner {
			continue
		}
		out = append(out, NumberedNote{N: i + 1, HumanNote: n})
	}
	return out
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
