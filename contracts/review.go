package contracts

import (
	"fmt"
	"strings"
)

// PauseRejections is how many rejections of one task in a row pause the
// team for the human (seed 002: "After 5 consecutive Judge INSUFFICIENT:
// Judge pauses loop, summarizes blocks, Human reviews").
const PauseRejections = 5

// SprintRejections counts t's rejections at or after started, the start of
// the sprint (all of them when it is unset or unreadable).
func SprintRejections(t *Task, started string) int {
	in := windowFrom(started)
	n := 0
	for _, e := range t.History {
		if e != nil && e.Event == "rejected" && in.has(e.Time) {
			n++
		}
	}
	return n
}

// ConsecutiveRejections counts t's rejections since its last approval: an
// approved task whose merge failed starts the count again.
func ConsecutiveRejections(t *Task) int {
	n := 0
	for _, e := range t.History {
		switch {
		case e == nil:
		case e.Event == "approved":
			n = 0
		case e.Event == "rejected":
			n++
		}
	}
	return n
}

// RejectionSummary summarises for the human the blockers of a task whose
// rejections paused the team: each rejection since its last approval, with
// its reason and feedback, then why the task is blocked and what would
// unblock it.
func RejectionSummary(t *Task) string {
	var b strings.Builder
	n := ConsecutiveRejections(t)
	fmt.Fprintf(&b, "Task %s was rejected %d times in a row: the team is paused for the human.\n\nBlockers:\n", t.ID, n)
	from := 0
	for i, e := range t.History {
		if e != nil && e.Event == "approved" {
			from = i + 1
		}
	}
	i := 0
	for _, e := range t.History[from:] {
		if e == nil || e.Event != "rejected" {
			continue
		}
		i++
		fmt.Fprintf(&b, "%d. %s by %s: %s\n", i, e.Time, ActorName(e.Agent), OneLine(e.Reason))
		if f := detailText(e.Extra, "feedback"); f != "" {
			fmt.Fprintf(&b, "   feedback: %s\n", OneLine(f))
		}
	}
	if t.Status == Blocked {
		fmt.Fprintf(&b, "\nBlocked: %s\n", OneLine(t.BlockedReason))
		for _, q := range t.BlockedQuestions {
			fmt.Fprintf(&b, "- %s\n", OneLine(q))
		}
	}
	b.WriteString("\nResume with `git liza resume` once the planner or the human has decided what comes next.\n")
	return b.String()
}

// ReviewEndedByVerdict reports whether agent's latest review of t ended
// with its own verdict (approved or rejected after its review_claimed),
// rather than being abandoned.
func ReviewEndedByVerdict(t *Task, agent string) bool {
	for i := len(t.History) - 1; i >= 0; i-- {
		ev := t.History[i]
		if ev == nil || ev.Agent != agent {
			continue
		}
		switch ev.Event {
		case "approved", "rejected":
			return true
		case "review_claimed":
			return false
		}
	}
	return false
}
