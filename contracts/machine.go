package contracts

import (
	"reflect"
	"slices"
	"strings"
)

// transitions is the task state machine: seed 004's table plus the
// operational edges the tool's commands need, each marked with its command.
var transitions = map[Status][]Status{
	Draft: {
		Unclaimed,
		Abandoned, // abandon: the planner drops a draft
	},
	Unclaimed: {
		Claimed,
		Blocked,    // block: planner or human blocks work nobody started
		Superseded, // supersede: the planner rescopes work nobody started
		Abandoned,  // abandon: the planner kills work nobody started
	},
	Claimed: {
		Unclaimed, // release: a coder's lease is released or expired
		ReadyForReview,
		Blocked,
	},
	ReadyForReview: {
		Rejected,
		Approved,
		Blocked, // verdict: reject at max review cycles, or review deadlock
		// submit, or a reviewer's check before its session: the commit
		// no longer merges onto the integration tip (issue 28)
		IntegrationFailed,
	},
	Rejected: {
		Claimed,
		Blocked, // block: planner/human block, logic conflict escalation
	},
	Approved: {
		IntegrationFailed,
		Merged,
	},
	Blocked: {
		Unclaimed,
		Superseded,
		Abandoned,
	},
	IntegrationFailed: {
		Claimed,
		Blocked, // block: planner/human block, logic conflict escalation
	},
}

// CanTransition reports whether a task may move from one status to another.
// Staying in the same non-terminal status (a field update) is allowed;
// nothing leaves a terminal status.
func CanTransition(from, to Status) bool {
	if from == to {
		return from.Known() && !from.Terminal()
	}
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Next lists the statuses a task may move to from the given one, in
// lifecycle order, not counting from itself.
func Next(from Status) []Status {
	var next []Status
	for _, s := range Statuses {
		if s != from && CanTransition(from, s) {
			next = append(next, s)
		}
	}
	return next
}

// CheckTransition returns an error (exit 1) when task id may not move from
// one status to another.
func CheckTransition(id string, from, to Status) error {
	switch {
	case CanTransition(from, to):
		return nil
	case !from.Known():
		return Invalidf("%s: unknown status %q", id, from)
	case !to.Known():
		return Invalidf("%s: unknown status %q", id, to)
	case from.Terminal():
		return Invalidf("%s: illegal transition %s -> %s (%s is terminal)", id, from, to, from)
	}
	return Invalidf("%s: illegal transition %s -> %s (allowed: %s)", id, from, to, joinStatuses(Next(from)))
}

func joinStatuses(ss []Status) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// CheckStateTransition checks that next may follow prev in the state log:
// every task makes an allowed move; terminal and archived tasks do not
// change; tasks leave the board only into the archive and only when
// terminal; new tasks appear as DRAFT or UNCLAIMED; and task histories, the
// goal's alignment history, anomalies, human notes, spec changes and
// discoveries are append-only. Task ids used twice in either state are
// skipped: Validate reports them.
func CheckStateTransition(prev, next *State) []Problem {
	if prev == nil || next == nil {
		return nil
	}
	var ps problems
	prevTasks, prevArchive := taskIndex(prev.Tasks), taskIndex(prev.Archive)
	nextTasks, nextArchive := taskIndex(next.Tasks), taskIndex(next.Archive)
	ambiguous := duplicateIDs(prev, next)

	for _, p := range prev.Tasks {
		if p == nil || ambiguous[p.ID] {
			continue
		}
		where := "tasks[" + p.ID + "]"
		n, archived := nextTasks[p.ID], false
		if n == nil {
			n, archived = nextArchive[p.ID], true
		}
		switch {
		case n == nil:
			ps.add(where, "task disappeared (tasks leave the board only into the archive)")
			continue
		case archived && !n.Status.Terminal():
			ps.addf(where, "archived while %s (only terminal tasks may be archived)", n.Status)
		}
		switch {
		case p.Status.Terminal():
			if !same(p, n) {
				ps.addf(where, "%s task changed (terminal tasks are frozen)", p.Status)
			}
		case p.Status != n.Status && !CanTransition(p.Status, n.Status):
			ps.addf(where, "illegal transition %s -> %s", p.Status, n.Status)
		}
		if !isPrefix(p.History, n.History, same) {
			ps.add(where, "history was rewritten (task history is append-only)")
		}
	}

	for _, p := range prev.Archive {
		if p == nil || ambiguous[p.ID] {
			continue
		}
		where := "archive[" + p.ID + "]"
		switch n := nextArchive[p.ID]; {
		case n != nil:
			if !same(p, n) {
				ps.add(where, "archived task changed (the archive is frozen)")
			}
		case nextTasks[p.ID] != nil:
			ps.add(where, "archived task moved back to the board")
		default:
			ps.add(where, "archived task disappeared")
		}
	}

	for _, n := range next.Tasks {
		if n != nil && !ambiguous[n.ID] && prevTasks[n.ID] == nil && prevArchive[n.ID] == nil && n.Status != Draft && n.Status != Unclaimed {
			ps.addf("tasks["+n.ID+"]", "new task appears as %s (new tasks start DRAFT or UNCLAIMED)", n.Status)
		}
	}
	for _, n := range next.Archive {
		if n != nil && !ambiguous[n.ID] && prevTasks[n.ID] == nil && prevArchive[n.ID] == nil {
			ps.add("archive["+n.ID+"]", "task appears in the archive without having been on the board")
		}
	}

	appendOnly := func(where string, ok bool) {
		if !ok {
			ps.add(where, "entries were changed or removed (this section is append-only)")
		}
	}
	appendOnly("goal.alignment_history", isPrefix(prev.Goal.AlignmentHistory, next.Goal.AlignmentHistory, same))
	appendOnly("anomalies", isPrefix(prev.Anomalies, next.Anomalies, same))
	appendOnly("human_notes", isPrefix(prev.HumanNotes, next.HumanNotes, same))
	appendOnly("spec_changes", isPrefix(prev.SpecChanges, next.SpecChanges, same))
	appendOnly("discovered", isPrefix(prev.Discovered, next.Discovered, sameDiscovery))
	return ps
}

func taskIndex(tasks []*Task) map[string]*Task {
	m := make(map[string]*Task, len(tasks))
	for _, t := range tasks {
		if t != nil && m[t.ID] == nil {
			m[t.ID] = t
		}
	}
	return m
}

// duplicateIDs returns the task ids used twice within prev or within next.
// Validate reports those; CheckStateTransition cannot pair them and skips
// them.
func duplicateIDs(states ...*State) map[string]bool {
	dup := map[string]bool{}
	for _, s := range states {
		seen := map[string]bool{}
		for _, t := range append(slices.Clone(s.Tasks), s.Archive...) {
			if t != nil {
				dup[t.ID] = dup[t.ID] || seen[t.ID]
				seen[t.ID] = true
			}
		}
	}
	return dup
}

// isPrefix reports whether prev is a prefix of next under eq.
func isPrefix[T any](prev, next []T, eq func(a, b T) bool) bool {
	if len(prev) > len(next) {
		return false
	}
	for i := range prev {
		if !eq(prev[i], next[i]) {
			return false
		}
	}
	return true
}

// same reports whether a and b hold the same data: deeply equal, or equal
// once rendered, which forgives nil versus empty lists and maps.
func same[T any](a, b T) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	ya, errA := EncodeYAML(a)
	yb, errB := EncodeYAML(b)
	return errA == nil && errB == nil && string(ya) == string(yb)
}

// sameDiscovery is same, except that a discovery may gain converted_to_task.
func sameDiscovery(a, b *Discovery) bool {
	if a != nil && b != nil && a.ConvertedToTask == "" && b.ConvertedToTask != "" {
		c := *b
		c.ConvertedToTask = ""
		b = &c
	}
	return same(a, b)
}
