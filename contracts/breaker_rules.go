package contracts

import (
	"fmt"
	"slices"
	"strings"
)

// repeatedRejection counts the rejections of t in the sprint. The coders
// named are those whose submission was rejected, the reviewers those who
// rejected it. With no sprint start, review_cycles_total counts as well, for
// states whose history was not kept.
func repeatedRejection(t *Task, in window) (PatternMatch, bool) {
	n := 0
	last := ""
	submitter := ""
	agents := map[string]bool{}
	for _, e := range t.History {
		if e == nil {
			continue
		}
		switch e.Event {
		case "submitted":
			submitter = e.Agent
		case "rejected":
			if !in.has(e.Time) {
				continue
			}
			n++
			last = e.Reason
			for _, a := range []string{e.Agent, submitter} {
				if a != "" {
					agents[a] = true
				}
			}
		}
	}
	if !in.bounded && t.ReviewCyclesTotal > n {
		n = t.ReviewCyclesTotal
		if last == "" {
			last = t.RejectionReason
		}
	}
	if n < RejectionThreshold {
		return PatternMatch{}, false
	}
	detail := fmt.Sprintf("task %s rejected %d times in this sprint", t.ID, n)
	if last = OneLine(last); last != "" {
		detail += " (last reason: " + last + ")"
	}
	return PatternMatch{Pattern: PatternRepeatedRejection, Tasks: []string{t.ID}, Agents: sortedSet(agents), Count: n, Detail: detail}, true
}

// crashLoops returns one match per agent whose supervisor logged a crash
// loop in the sprint.
func crashLoops(anomalies []*Anomaly, in window) []PatternMatch {
	type loop struct {
		tasks   map[string]bool
		n       int
		crashes int
		what    string
	}
	loops := map[string]*loop{}
	for _, a := range anomalies {
		if a == nil || !in.has(a.Timestamp) {
			continue
		}
		var what string
		switch a.Type {
		case "retry_loop":
			what = detailText(a.Details, "error_pattern")
		case "system_ambiguity":
			if detailText(a.Details, "protocol_section") != "supervisor" {
				continue
			}
			what = detailText(a.Details, "question")
		default:
			continue
		}
		if !strings.HasPrefix(strings.ToLower(what), crashLoopPrefix) {
			continue
		}
		l := loops[a.LoggedBy]
		if l == nil {
			l = &loop{tasks: map[string]bool{}}
			loops[a.LoggedBy] = l
		}
		l.n++
		l.what = what
		if a.TaskID != "" {
			l.tasks[a.TaskID] = true
		}
		var c int
		if _, err := fmt.Sscan(detailText(a.Details, "count"), &c); err == nil && c > 0 {
			l.crashes += c
		}
	}
	ids := make([]string, 0, len(loops))
	for id := range loops {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareNatural)
	out := make([]PatternMatch, 0, len(ids))
	for _, id := range ids {
		l := loops[id]
		who := id
		if who == "" {
			who = "an unnamed agent"
		}
		detail := "the supervisor of " + who + " stopped on a crash loop"
		if l.n > 1 {
			detail += fmt.Sprintf(" %d times", l.n)
		}
		if l.crashes > 0 {
			detail += fmt.Sprintf(" (%d crashes)", l.crashes)
		}
		detail += ": " + l.what
		count := l.crashes
		if count == 0 {
			count = l.n
		}
		var agents []string
		if id != "" {
			agents = []string{id}
		}
		out = append(out, PatternMatch{Pattern: PatternCrashLoop, Tasks: sortedSet(l.tasks), Agents: agents, Count: count, Detail: detail})
	}
	return out
}
