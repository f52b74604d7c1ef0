package contracts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The sprint reports of the first rules (RulesFirst), as an older
// git-liza wrote them: the sprint.metrics values and the checkpoint's
// summary. A sprint_metrics or sprint_checkpoint commit records what they
// computed, so the commits made under those rules are replayed with these
// to verify; new operations use SprintMetrics and SprintSummary.

// MetricsFirst are the sprint's metrics, recomputed from the tasks (live and
// archived) and their histories. Event counts and times cover the current
// sprint: events at or after sprint.timeline.started.
type MetricsFirst struct {
	// ComputedAt is when the values were computed.
	ComputedAt string `yaml:"computed_at" json:"computed_at"`
	// TasksPlanned is the number of tasks in sprint.scope.planned.
	TasksPlanned int `yaml:"tasks_planned" json:"tasks_planned"`
	// TasksTotal counts the tasks on the board and in the archive.
	TasksTotal int `yaml:"tasks_total" json:"tasks_total"`
	// TasksMerged, TasksInProgress (CLAIMED, READY_FOR_REVIEW, REJECTED,
	// APPROVED), TasksBlocked and TasksUnclaimed count tasks by status;
	// ByStatus has every status present.
	TasksMerged     int            `yaml:"tasks_merged" json:"tasks_merged"`
	TasksInProgress int            `yaml:"tasks_in_progress" json:"tasks_in_progress"`
	TasksBlocked    int            `yaml:"tasks_blocked" json:"tasks_blocked"`
	TasksUnclaimed  int            `yaml:"tasks_unclaimed" json:"tasks_unclaimed"`
	ByStatus        map[string]int `yaml:"by_status" json:"by_status"`
	// ReviewCyclesTotal sums the tasks' review_cycles_total.
	ReviewCyclesTotal int `yaml:"review_cycles_total" json:"review_cycles_total"`
	// AvgIterations is the mean iteration count of the tasks that were
	// claimed at least once.
	AvgIterations float64 `yaml:"avg_iterations" json:"avg_iterations"`
	// Approvals and Rejections count the verdicts; ApprovalRate is
	// approvals / verdicts (0 when there was no verdict).
	Approvals    int     `yaml:"approvals" json:"approvals"`
	Rejections   int     `yaml:"rejections" json:"rejections"`
	ApprovalRate float64 `yaml:"approval_rate" json:"approval_rate"`
	// SubmitToVerdictMeanSeconds and SubmitToVerdictMaxSeconds measure
	// the time from a submit to the verdict that follows it.
	SubmitToVerdictMeanSeconds float64 `yaml:"submit_to_verdict_mean_seconds" json:"submit_to_verdict_mean_seconds"`
	SubmitToVerdictMaxSeconds  int64   `yaml:"submit_to_verdict_max_seconds" json:"submit_to_verdict_max_seconds"`
	// TasksEverBlocked counts the tasks that were BLOCKED at some point
	// of the sprint; BlockedShare is that over TasksTotal.
	TasksEverBlocked int     `yaml:"tasks_ever_blocked" json:"tasks_ever_blocked"`
	BlockedShare     float64 `yaml:"blocked_share" json:"blocked_share"`
}

// SprintMetricsFirst computes the sprint's metrics at now. Ratios are rounded
// to three decimals, the mean time to one.
func SprintMetricsFirst(st *State, now time.Time) MetricsFirst {
	m := MetricsFirst{ComputedAt: FormatTime(now), ByStatus: map[string]int{}}
	in := sprintWindow(st)
	m.TasksPlanned = len(st.Sprint.Scope.Planned)
	tasks := allTasksFirst(st)
	m.TasksTotal = len(tasks)

	claimed, iterations := 0, 0
	var waits []int64
	for _, t := range tasks {
		m.ByStatus[string(t.Status)]++
		switch t.Status {
		case Merged:
			m.TasksMerged++
		case Claimed, ReadyForReview, Rejected, Approved:
			m.TasksInProgress++
		case Blocked:
			m.TasksBlocked++
		case Unclaimed:
			m.TasksUnclaimed++
		}
		m.ReviewCyclesTotal += t.ReviewCyclesTotal
		if t.Iteration > 0 {
			claimed++
			iterations += t.Iteration
		}

		everBlocked := t.Status == Blocked
		var submitted time.Time
		for _, e := range t.History {
			if e == nil {
				continue
			}
			switch e.Event {
			case "submitted":
				submitted, _ = ParseTime(e.Time)
			case "approved", "rejected":
				if in.has(e.Time) {
					if e.Event == "approved" {
						m.Approvals++
					} else {
						m.Rejections++
					}
					if at, err := ParseTime(e.Time); err == nil && !submitted.IsZero() && !at.Before(submitted) {
						waits = append(waits, int64(at.Sub(submitted)/time.Second))
					}
				}
				submitted = time.Time{}
			}
			if (e.Event == "blocked" || e.To == string(Blocked)) && in.has(e.Time) {
				everBlocked = true
			}
		}
		if everBlocked {
			m.TasksEverBlocked++
		}
	}
	if claimed > 0 {
		m.AvgIterations = round(float64(iterations)/float64(claimed), 1000)
	}
	if v := m.Approvals + m.Rejections; v > 0 {
		m.ApprovalRate = round(float64(m.Approvals)/float64(v), 1000)
	}
	if len(waits) > 0 {
		var sum int64
		for _, w := range waits {
			sum += w
			m.SubmitToVerdictMaxSeconds = max(m.SubmitToVerdictMaxSeconds, w)
		}
		m.SubmitToVerdictMeanSeconds = round(float64(sum)/float64(len(waits)), 10)
	}
	if m.TasksTotal > 0 {
		m.BlockedShare = round(float64(m.TasksEverBlocked)/float64(m.TasksTotal), 1000)
	}
	return m
}

// allTasksFirst returns the live and archived tasks in natural id order.
func allTasksFirst(st *State) []*Task {
	return sortedTasks(append(slices.Clone(st.Tasks), st.Archive...))
}

// SummaryFirst is the sprint summary a checkpoint gives the human.
type SummaryFirst struct {
	Sprint     string `yaml:"sprint" json:"sprint"`
	Goal       string `yaml:"goal" json:"goal"`
	GoalSpec   string `yaml:"goal_spec,omitempty" json:"goal_spec,omitempty"`
	Started    string `yaml:"started,omitempty" json:"started,omitempty"`
	Checkpoint string `yaml:"checkpoint" json:"checkpoint"`
	// Total counts the tasks on the board and in the archive, Counts
	// them by status.
	Total  int            `yaml:"total" json:"total"`
	Counts map[string]int `yaml:"counts" json:"counts"`
	// Tasks are the tasks that were claimed, with how long they took.
	Tasks []TaskSpanFirst `yaml:"tasks" json:"tasks"`
	// Anomalies are those logged in the sprint.
	Anomalies []SummaryAnomaly `yaml:"anomalies" json:"anomalies"`
	Blocked   []BlockedTask    `yaml:"blocked" json:"blocked"`
	// Breaker is the circuit breaker's status, when it was ever tripped.
	Breaker   string   `yaml:"circuit_breaker,omitempty" json:"circuit_breaker,omitempty"`
	Checklist []string `yaml:"checklist" json:"checklist"`
}

// TaskSpanFirst is how long a task took: from its first claim to its merge (or
// to the event that ended it), or to the checkpoint while it is open.
type TaskSpanFirst struct {
	ID      string `yaml:"id" json:"id"`
	Status  Status `yaml:"status" json:"status"`
	Started string `yaml:"started" json:"started"`
	Ended   string `yaml:"ended,omitempty" json:"ended,omitempty"`
	Seconds int64  `yaml:"seconds" json:"seconds"`
	Open    bool   `yaml:"open" json:"open"`
}

// SprintSummaryFirst summarises the sprint at now for a checkpoint.
func SprintSummaryFirst(st *State, now time.Time) SummaryFirst {
	s := SummaryFirst{
		Sprint: st.Sprint.ID, Goal: strings.TrimSpace(st.Goal.ID + ": " + OneLine(st.Goal.Description)),
		GoalSpec: st.Goal.SpecRef, Started: st.Sprint.Timeline.Started, Checkpoint: FormatTime(now),
		Counts: map[string]int{}, Tasks: []TaskSpanFirst{}, Anomalies: []SummaryAnomaly{}, Blocked: []BlockedTask{},
	}
	if st.CircuitBreaker != nil {
		s.Breaker = st.CircuitBreaker.Status
	}
	for _, t := range allTasksFirst(st) {
		s.Total++
		s.Counts[string(t.Status)]++
		if span, ok := taskSpanFirst(t, now); ok {
			s.Tasks = append(s.Tasks, span)
		}
	}
	for _, t := range sortedTasks(st.Tasks) {
		if t.Status == Blocked {
			s.Blocked = append(s.Blocked, BlockedTask{ID: t.ID, Reason: OneLine(t.BlockedReason), Questions: slices.Clone([]string(t.BlockedQuestions))})
		}
	}
	in := sprintWindow(st)
	for _, a := range st.Anomalies {
		if a != nil && in.has(a.Timestamp) {
			s.Anomalies = append(s.Anomalies, SummaryAnomaly{ID: a.ID, Type: a.Type, Task: a.TaskID, By: a.LoggedBy, Time: a.Timestamp})
		}
	}

	for _, b := range s.Blocked {
		s.Checklist = append(s.Checklist, fmt.Sprintf("Answer the questions of task %s with `git liza note --for %s MESSAGE`, then `git liza task unblock %s`", b.ID, b.ID, b.ID))
	}
	if len(s.Anomalies) > 0 {
		s.Checklist = append(s.Checklist, "Review the anomalies: `git liza show --json | jq .anomalies`")
	}
	if s.Breaker == BreakerTriggered {
		s.Checklist = append(s.Checklist, "Deal with the circuit breaker's report (`git liza show --json | jq .circuit_breaker`), then `git liza analyze --resolve TEXT`")
	}
	goal := "the goal"
	if st.Goal.ID != "" {
		goal = "goal " + st.Goal.ID
	}
	if s.GoalSpec != "" {
		goal += " (" + s.GoalSpec + ")"
	}
	s.Checklist = append(s.Checklist,
		"Check that the merged work and the open tasks still serve "+goal,
		"Resume the team: `git liza resume`")
	return s
}

// taskSpanFirst measures a task that was claimed.
func taskSpanFirst(t *Task, now time.Time) (TaskSpanFirst, bool) {
	var start, end time.Time
	last := time.Time{}
	for _, e := range t.History {
		if e == nil {
			continue
		}
		at, err := ParseTime(e.Time)
		if err != nil {
			continue
		}
		last = at
		switch {
		case start.IsZero() && slices.Contains(claimEvents, e.Event):
			start = at
		case !start.IsZero() && end.IsZero() && e.Event == "merged":
			end = at
		}
	}
	if start.IsZero() {
		return TaskSpanFirst{}, false
	}
	span := TaskSpanFirst{ID: t.ID, Status: t.Status, Started: FormatTime(start)}
	switch {
	case !end.IsZero():
	case t.Status.Terminal():
		end = last
	default:
		end, span.Open = now, true
	}
	if !span.Open {
		span.Ended = FormatTime(end)
	}
	span.Seconds = max(0, int64(end.Sub(start)/time.Second))
	return span, true
}

// Markdown renders the summary for a person and for the checkpoint's
// commit message. Headings are underlined rather than marked with '#', so
// that git's message clean-up keeps them.
func (s SummaryFirst) Markdown() string {
	var b strings.Builder
	heading := func(text, rule string) {
		fmt.Fprintf(&b, "%s\n%s\n\n", text, strings.Repeat(rule, len(text)))
	}
	heading(fmt.Sprintf("Sprint %s checkpoint, %s", s.Sprint, s.Checkpoint), "=")
	fmt.Fprintf(&b, "Goal %s\n", s.Goal)
	if s.Started != "" {
		fmt.Fprintf(&b, "Sprint started %s\n", s.Started)
	}
	if s.Breaker != "" {
		fmt.Fprintf(&b, "Circuit breaker %s\n", s.Breaker)
	}
	var counts []string
	for _, st := range Statuses {
		if n := s.Counts[string(st)]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", st, n))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Counts)) {
		if !Status(k).Known() {
			counts = append(counts, fmt.Sprintf("%s %d", k, s.Counts[k]))
		}
	}
	fmt.Fprintf(&b, "\nTasks: %d", s.Total)
	if len(counts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(counts, ", "))
	}
	b.WriteString("\n\n")

	heading("Durations", "-")
	if len(s.Tasks) == 0 {
		b.WriteString("No task was claimed.\n\n")
	} else {
		b.WriteString("| task | status | first claim | end | duration |\n|---|---|---|---|---|\n")
		for _, t := range s.Tasks {
			end := t.Ended
			if t.Open {
				end = "open"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", t.ID, t.Status, t.Started, end, (time.Duration(t.Seconds) * time.Second).String())
		}
		b.WriteString("\n")
	}

	heading("Anomalies", "-")
	if len(s.Anomalies) == 0 {
		b.WriteString("None.\n\n")
	} else {
		for _, a := range s.Anomalies {
			on := ""
			if a.Task != "" {
				on = " on " + a.Task
			}
			fmt.Fprintf(&b, "- %s %s%s by %s at %s\n", a.ID, a.Type, on, a.By, a.Time)
		}
		b.WriteString("\n")
	}

	heading("Blocked tasks", "-")
	if len(s.Blocked) == 0 {
		b.WriteString("None.\n\n")
	} else {
		for _, t := range s.Blocked {
			fmt.Fprintf(&b, "- %s: %s\n", t.ID, t.Reason)
			for _, q := range t.Questions {
				fmt.Fprintf(&b, "  - %s\n", OneLine(q))
			}
		}
		b.WriteString("\n")
	}

	heading("Human checklist", "-")
	for _, c := range s.Checklist {
		fmt.Fprintf(&b, "- [ ] %s\n", c)
	}
	return b.String()
}
