package contracts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Summary is the sprint summary a checkpoint gives the human, in the
// sections of the original liza-checkpoint.sh.
type Summary struct {
	Sprint     string `yaml:"sprint" json:"sprint"`
	Goal       string `yaml:"goal" json:"goal"`
	GoalSpec   string `yaml:"goal_spec,omitempty" json:"goal_spec,omitempty"`
	Started    string `yaml:"started,omitempty" json:"started,omitempty"`
	Deadline   string `yaml:"deadline,omitempty" json:"deadline,omitempty"`
	Checkpoint string `yaml:"checkpoint" json:"checkpoint"`
	// ElapsedSeconds is the time from the sprint's start to the
	// checkpoint (0 when the start is unknown).
	ElapsedSeconds int64 `yaml:"elapsed_seconds" json:"elapsed_seconds"`
	// Total counts the goal's tasks, Counts them by status; Done,
	// InProgress, Blocked and Unclaimed are the original's groups.
	Total      int            `yaml:"total" json:"total"`
	Counts     map[string]int `yaml:"counts" json:"counts"`
	Done       int            `yaml:"done" json:"done"`
	InProgress int            `yaml:"in_progress" json:"in_progress"`
	Blocked    int            `yaml:"blocked_count" json:"blocked_count"`
	Unclaimed  int            `yaml:"unclaimed" json:"unclaimed"`
	// Tasks are the merged tasks, with how long each took from its
	// creation to its merge.
	Tasks []TaskSpan `yaml:"tasks" json:"tasks"`
	// Anomalies are those logged in the sprint; Patterns what the circuit
	// breaker would find on the board now.
	Anomalies []SummaryAnomaly `yaml:"anomalies" json:"anomalies"`
	Patterns  []PatternMatch   `yaml:"patterns" json:"patterns"`
	// BlockedTasks are the BLOCKED tasks, with what would unblock them.
	BlockedTasks []BlockedTask `yaml:"blocked" json:"blocked"`
	// Breaker is the circuit breaker's status, when it was ever analysed.
	Breaker   string   `yaml:"circuit_breaker,omitempty" json:"circuit_breaker,omitempty"`
	Checklist []string `yaml:"checklist" json:"checklist"`
}

// TaskSpan is how long a merged task took, from its creation to its merge.
type TaskSpan struct {
	ID      string `yaml:"id" json:"id"`
	Created string `yaml:"created" json:"created"`
	Merged  string `yaml:"merged" json:"merged"`
	Seconds int64  `yaml:"seconds" json:"seconds"`
}

// SummaryAnomaly is one anomaly in a summary.
type SummaryAnomaly struct {
	ID      string `yaml:"id" json:"id"`
	Type    string `yaml:"type" json:"type"`
	Task    string `yaml:"task,omitempty" json:"task,omitempty"`
	By      string `yaml:"by" json:"by"`
	Time    string `yaml:"time" json:"time"`
	Details string `yaml:"details,omitempty" json:"details,omitempty"`
}

// BlockedTask is a BLOCKED task with what would unblock it.
type BlockedTask struct {
	ID        string   `yaml:"id" json:"id"`
	Reason    string   `yaml:"reason" json:"reason"`
	Questions []string `yaml:"questions" json:"questions"`
}

// SprintSummary summarises the sprint at now for a checkpoint.
func SprintSummary(st *State, now time.Time) Summary {
	s := Summary{
		Sprint: st.Sprint.ID, Goal: strings.TrimSpace(st.Goal.ID + ": " + OneLine(st.Goal.Description)),
		GoalSpec: st.Goal.SpecRef, Started: st.Sprint.Timeline.Started, Deadline: st.Sprint.Timeline.Deadline,
		Checkpoint: FormatTime(now), Counts: map[string]int{}, Tasks: []TaskSpan{}, Anomalies: []SummaryAnomaly{},
		BlockedTasks: []BlockedTask{},
	}
	if at, err := ParseTime(s.Started); err == nil && now.After(at) {
		s.ElapsedSeconds = int64(now.Sub(at) / time.Second)
	}
	if st.CircuitBreaker != nil {
		s.Breaker = st.CircuitBreaker.Status
	}
	for _, t := range allTasks(st) {
		s.Total++
		s.Counts[string(t.Status)]++
		switch t.Status {
		case Merged, Abandoned, Superseded:
			s.Done++
		case Claimed, ReadyForReview, Rejected, Approved:
			s.InProgress++
		case Blocked, IntegrationFailed:
			s.Blocked++
		case Unclaimed:
			s.Unclaimed++
		}
		if span, ok := mergeSpan(t); ok {
			s.Tasks = append(s.Tasks, span)
		}
	}
	for _, t := range sortedTasks(st.Tasks) {
		if t.Status == Blocked {
			s.BlockedTasks = append(s.BlockedTasks, BlockedTask{ID: t.ID, Reason: OneLine(t.BlockedReason), Questions: slices.Clone([]string(t.BlockedQuestions))})
		}
	}
	in := sprintWindow(st)
	for _, a := range st.Anomalies {
		if a != nil && in.has(a.Timestamp) {
			s.Anomalies = append(s.Anomalies, SummaryAnomaly{ID: a.ID, Type: a.Type, Task: a.TaskID, By: a.LoggedBy, Time: a.Timestamp, Details: detailsLine(a.Details)})
		}
	}
	s.Patterns = Analyze(st, nil)

	goal := "the goal"
	if st.Goal.ID != "" {
		goal = "goal " + st.Goal.ID
	}
	if s.GoalSpec != "" {
		goal += " (" + s.GoalSpec + ")"
	}
	s.Checklist = []string{
		"Review task progress: `git liza status`",
		"Review the anomalies for patterns: `git liza analyze`",
		"Check that the merged work and the open tasks still serve " + goal,
	}
	for _, b := range s.BlockedTasks {
		s.Checklist = append(s.Checklist, fmt.Sprintf("Answer the questions of task %s with `git liza note --for %s MESSAGE`, then `git liza task unblock %s`", b.ID, b.ID, b.ID))
	}
	if s.Breaker == BreakerTriggered {
		s.Checklist = append(s.Checklist, "Deal with the circuit breaker's report, then `git liza analyze --resolve TEXT`")
	}
	s.Checklist = append(s.Checklist, "Decide: CONTINUE / ADJUST / REPLAN / STOP")
	return s
}

// mergeSpan measures a merged task from its creation to its first merge
// (liza-checkpoint.sh: "Per-task durations (created -> merged, for
// completed tasks)").
func mergeSpan(t *Task) (TaskSpan, bool) {
	if t.Status != Merged {
		return TaskSpan{}, false
	}
	created := t.Created
	merged := ""
	for _, e := range t.History {
		if e == nil {
			continue
		}
		if e.Event == "created" && created == "" {
			created = e.Time
		}
		if e.Event == "merged" && merged == "" {
			merged = e.Time
		}
	}
	from, err1 := ParseTime(created)
	to, err2 := ParseTime(merged)
	if err1 != nil || err2 != nil {
		return TaskSpan{}, false
	}
	return TaskSpan{ID: t.ID, Created: FormatTime(from), Merged: FormatTime(to), Seconds: max(0, int64(to.Sub(from)/time.Second))}, true
}

// detailsLine renders an anomaly's details as key=value pairs in key
// order, on one line.
func detailsLine(d Extra) string {
	keys := slices.Sorted(maps.Keys(d))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+OneLine(fmt.Sprint(d[k])))
	}
	return strings.Join(parts, ", ")
}

// hours renders seconds as hours to a tenth, as the original does ("2.5h").
func hours(secs int64) string {
	return fmt.Sprintf("%.1fh", float64(secs)/3600)
}

// Markdown renders the summary for a person, for the checkpoint's commit
// message and for the summary file. Headings are underlined rather than
// marked with '#', so that git's message clean-up keeps them.
func (s Summary) Markdown() string {
	var b strings.Builder
	heading := func(text, rule string) {
		fmt.Fprintf(&b, "%s\n%s\n\n", text, strings.Repeat(rule, len(text)))
	}
	orUnknown := func(v string) string {
		if v == "" {
			return "unknown"
		}
		return v
	}
	heading("Sprint summary", "=")
	fmt.Fprintf(&b, "Generated: %s\n", s.Checkpoint)
	fmt.Fprintf(&b, "Sprint: %s\n", s.Sprint)
	fmt.Fprintf(&b, "Goal: %s\n", s.Goal)
	fmt.Fprintf(&b, "Started: %s\n", orUnknown(s.Started))
	fmt.Fprintf(&b, "Deadline: %s\n", orUnknown(s.Deadline))
	if s.Started != "" {
		fmt.Fprintf(&b, "Elapsed: %s\n", hours(s.ElapsedSeconds))
	} else {
		b.WriteString("Elapsed: unknown\n")
	}
	if s.Breaker != "" {
		fmt.Fprintf(&b, "Circuit breaker: %s\n", s.Breaker)
	}
	b.WriteString("\n")

	heading("Task status", "-")
	b.WriteString("| status | count |\n|---|---|\n")
	fmt.Fprintf(&b, "| Done (MERGED/ABANDONED/SUPERSEDED) | %d |\n", s.Done)
	fmt.Fprintf(&b, "| In progress (CLAIMED/READY_FOR_REVIEW/REJECTED/APPROVED) | %d |\n", s.InProgress)
	fmt.Fprintf(&b, "| Blocked (BLOCKED/INTEGRATION_FAILED) | %d |\n", s.Blocked)
	fmt.Fprintf(&b, "| Unclaimed | %d |\n", s.Unclaimed)
	if n := s.Counts[string(Draft)]; n > 0 {
		fmt.Fprintf(&b, "| Draft | %d |\n", n)
	}
	fmt.Fprintf(&b, "| Total | %d |\n\n", s.Total)

	heading("Task durations (created to merged)", "-")
	if len(s.Tasks) == 0 {
		b.WriteString("No task was merged.\n\n")
	} else {
		b.WriteString("| task | created | merged | duration |\n|---|---|---|---|\n")
		for _, t := range s.Tasks {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.ID, t.Created, t.Merged, hours(t.Seconds))
		}
		b.WriteString("\n")
	}

	heading("Anomalies", "-")
	fmt.Fprintf(&b, "Logged in this sprint: %d\n", len(s.Anomalies))
	for _, a := range s.Anomalies {
		on := ""
		if a.Task != "" {
			on = " on " + a.Task
		}
		fmt.Fprintf(&b, "- %s [%s]%s by %s at %s", a.ID, a.Type, on, a.By, a.Time)
		if a.Details != "" {
			fmt.Fprintf(&b, ": %s", a.Details)
		}
		b.WriteString("\n")
	}
	if len(s.Patterns) == 0 {
		b.WriteString("Patterns: none\n\n")
	} else {
		b.WriteString("Patterns:\n")
		for _, m := range s.Patterns {
			fmt.Fprintf(&b, "- %s (%s): %s\n", m.Pattern, m.Severity, m.Detail)
		}
		b.WriteString("\n")
	}

	heading("Blocked tasks", "-")
	if len(s.BlockedTasks) == 0 {
		b.WriteString("None.\n\n")
	} else {
		for _, t := range s.BlockedTasks {
			fmt.Fprintf(&b, "- %s: %s\n", t.ID, t.Reason)
			for _, q := range t.Questions {
				fmt.Fprintf(&b, "  - %s\n", OneLine(q))
			}
		}
		b.WriteString("\n")
	}

	heading("Human review checklist", "-")
	for _, c := range s.Checklist {
		fmt.Fprintf(&b, "- [ ] %s\n", c)
	}
	b.WriteString("\n")
	heading("To resume", "-")
	b.WriteString("git liza resume\n")
	return b.String()
}
