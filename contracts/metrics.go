package contracts

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Metrics are the sprint's metrics, recomputed from the tasks of the
// current goal (SprintTasks: live, and archived ones the sprint planned)
// and their histories. Event counts and times cover the current sprint:
// events at or after sprint.timeline.started. The fields of the original
// update-sprint-metrics.sh come first, then seed 002's, then git-liza's
// own.
type Metrics struct {
	// ComputedAt is when the values were computed.
	ComputedAt string `yaml:"computed_at" json:"computed_at"`

	// TasksDone counts MERGED, ABANDONED and SUPERSEDED tasks; TasksInProgress
	// CLAIMED, READY_FOR_REVIEW, REJECTED and APPROVED ones; TasksBlocked
	// BLOCKED and INTEGRATION_FAILED ones (update-sprint-metrics.sh).
	TasksDone       int `yaml:"tasks_done" json:"tasks_done"`
	TasksInProgress int `yaml:"tasks_in_progress" json:"tasks_in_progress"`
	TasksBlocked    int `yaml:"tasks_blocked" json:"tasks_blocked"`
	// IterationsTotal sums the tasks' iteration counts, ReviewCyclesTotal
	// their review_cycles_total.
	IterationsTotal   int `yaml:"iterations_total" json:"iterations_total"`
	ReviewCyclesTotal int `yaml:"review_cycles_total" json:"review_cycles_total"`
	// The review verdicts: approvals, rejections, both, and the share of
	// approvals in percent (rounded down, as the original's integer
	// arithmetic does).
	ReviewVerdictApprovals           int `yaml:"review_verdict_approvals" json:"review_verdict_approvals"`
	ReviewVerdictRejections          int `yaml:"review_verdict_rejections" json:"review_verdict_rejections"`
	ReviewVerdictCount               int `yaml:"review_verdict_count" json:"review_verdict_count"`
	ReviewVerdictApprovalRatePercent int `yaml:"review_verdict_approval_rate_percent" json:"review_verdict_approval_rate_percent"`
	// TaskSubmittedForReviewCount counts the submissions;
	// TaskOutcomeApprovalRatePercent is approvals over submissions.
	TaskSubmittedForReviewCount    int `yaml:"task_submitted_for_review_count" json:"task_submitted_for_review_count"`
	TaskOutcomeApprovalRatePercent int `yaml:"task_outcome_approval_rate_percent" json:"task_outcome_approval_rate_percent"`

	// CompletionRate is the share of the tasks MERGED (seed 002: "Cycle
	// completion rate"); ApproveToMerge* measure the time from an approval
	// to the merge that follows it (seed 002: "approval latency").
	// ApproveToMergeCount is how many merges they measure.
	CompletionRate            float64 `yaml:"completion_rate" json:"completion_rate"`
	ApproveToMergeMeanSeconds float64 `yaml:"approve_to_merge_mean_seconds" json:"approve_to_merge_mean_seconds"`
	ApproveToMergeMaxSeconds  int64   `yaml:"approve_to_merge_max_seconds" json:"approve_to_merge_max_seconds"`
	ApproveToMergeCount       int     `yaml:"approve_to_merge_count" json:"approve_to_merge_count"`

	// TasksPlanned is the number of tasks in sprint.scope.planned.
	TasksPlanned int `yaml:"tasks_planned" json:"tasks_planned"`
	// TasksTotal counts the tasks; TasksMerged and TasksUnclaimed count
	// them by status, and ByStatus has every status present.
	TasksTotal     int            `yaml:"tasks_total" json:"tasks_total"`
	TasksMerged    int            `yaml:"tasks_merged" json:"tasks_merged"`
	TasksUnclaimed int            `yaml:"tasks_unclaimed" json:"tasks_unclaimed"`
	ByStatus       map[string]int `yaml:"by_status" json:"by_status"`
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
	// FiveLoopPauses counts seed 002's 5-loop pauses in the sprint: each
	// time a rejection made PauseRejections in a row on one task, or a
	// multiple of it (an approval starts the count again): the moment git
	// liza verdict pauses a running team for the human, and again after
	// another five once the human let the loop go on. FiveLoopPauseFrequency is that over
	// the cycles, the tasks claimed at least once (seed 002: "5-loop pause
	// frequency (goal: <10% of cycles)").
	FiveLoopPauses         int     `yaml:"five_loop_pauses" json:"five_loop_pauses"`
	FiveLoopPauseFrequency float64 `yaml:"five_loop_pause_frequency" json:"five_loop_pause_frequency"`

	// Spend is what the sprint's sessions spent (see SprintSpend); none
	// when no session recorded usage.
	Spend *SprintSpend `yaml:"spend,omitempty" json:"spend,omitempty"`

	// Warnings are the original's review quality warnings.
	Warnings []string `yaml:"warnings,omitempty" json:"warnings"`
}

// The rubber-stamp warning of update-sprint-metrics.sh: "Flag suspiciously
// high approval rates (potential rubber-stamping). Threshold: >95%
// approval with at least 5 reviews."
const (
	RubberStampPercent = 95
	RubberStampReviews = 5
)

// claimEvents are the history events that give a task to a coder.
var claimEvents = []string{"claimed", "resumed", "taken_over", "reclaimed"}

// SprintMetrics computes the sprint's metrics at now. Ratios are rounded
// to three decimals, mean times to one.
func SprintMetrics(st *State, now time.Time) Metrics {
	m := Metrics{ComputedAt: FormatTime(now), ByStatus: map[string]int{}, Warnings: []string{}}
	in := sprintWindow(st)
	m.TasksPlanned = len(st.Sprint.Scope.Planned)
	tasks := allTasks(st)
	m.TasksTotal = len(tasks)

	claimed, iterations := 0, 0
	var waits, merges []int64
	for _, t := range tasks {
		m.ByStatus[string(t.Status)]++
		switch t.Status {
		case Merged:
			m.TasksMerged++
			m.TasksDone++
		case Abandoned, Superseded:
			m.TasksDone++
		case Claimed, ReadyForReview, Rejected, Approved:
			m.TasksInProgress++
		case Blocked, IntegrationFailed:
			m.TasksBlocked++
		case Unclaimed:
			m.TasksUnclaimed++
		}
		m.ReviewCyclesTotal += t.ReviewCyclesTotal
		m.IterationsTotal += t.Iteration
		if t.Iteration > 0 {
			claimed++
			iterations += t.Iteration
		}

		everBlocked := t.Status == Blocked
		var submitted, approved time.Time
		inRow := 0 // rejections since the last approval
		for _, e := range t.History {
			if e == nil {
				continue
			}
			at, atErr := ParseTime(e.Time)
			switch e.Event {
			case "submitted":
				submitted = at
				if in.has(e.Time) {
					m.TaskSubmittedForReviewCount++
				}
			case "approved", "rejected":
				if e.Event == "approved" {
					inRow = 0
				} else if inRow++; inRow%PauseRejections == 0 && in.has(e.Time) {
					m.FiveLoopPauses++
				}
				if in.has(e.Time) {
					if e.Event == "approved" {
						m.Approvals++
					} else {
						m.Rejections++
					}
					if atErr == nil && !submitted.IsZero() && !at.Before(submitted) {
						waits = append(waits, int64(at.Sub(submitted)/time.Second))
					}
				}
				submitted = time.Time{}
				if e.Event == "approved" && atErr == nil {
					approved = at
				}
			case "merged":
				if in.has(e.Time) && atErr == nil && !approved.IsZero() && !at.Before(approved) {
					merges = append(merges, int64(at.Sub(approved)/time.Second))
				}
				approved = time.Time{}
			case "integration_failed":
				approved = time.Time{}
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
		m.FiveLoopPauseFrequency = round(float64(m.FiveLoopPauses)/float64(claimed), 1000)
	}
	m.ReviewVerdictApprovals, m.ReviewVerdictRejections = m.Approvals, m.Rejections
	m.ReviewVerdictCount = m.Approvals + m.Rejections
	if v := m.ReviewVerdictCount; v > 0 {
		m.ApprovalRate = round(float64(m.Approvals)/float64(v), 1000)
		m.ReviewVerdictApprovalRatePercent = m.Approvals * 100 / v
	}
	if n := m.TaskSubmittedForReviewCount; n > 0 {
		m.TaskOutcomeApprovalRatePercent = m.Approvals * 100 / n
	}
	m.SubmitToVerdictMeanSeconds, m.SubmitToVerdictMaxSeconds = meanMax(waits)
	m.ApproveToMergeMeanSeconds, m.ApproveToMergeMaxSeconds = meanMax(merges)
	m.ApproveToMergeCount = len(merges)
	if m.TasksTotal > 0 {
		m.BlockedShare = round(float64(m.TasksEverBlocked)/float64(m.TasksTotal), 1000)
		m.CompletionRate = round(float64(m.TasksMerged)/float64(m.TasksTotal), 1000)
	}
	m.Spend = sprintSpend(st, tasks, in, m.TasksMerged)
	if m.ReviewVerdictCount >= RubberStampReviews && m.ReviewVerdictApprovalRatePercent > RubberStampPercent {
		m.Warnings = append(m.Warnings, fmt.Sprintf("high approval rate: %d%% over %d reviews; the code reviewers may be rubber-stamping: spot-check recently merged tasks and the reviewers' rejection rationale",
			m.ReviewVerdictApprovalRatePercent, m.ReviewVerdictCount))
	}
	return m
}

// MetricsAfterMerge adds the merge of t, now MERGED with its merged event
// last in its history, to stored, the sprint.metrics that git liza sprint
// metrics computed: the counts by status, the completion rate and the
// approve-to-merge latency move as that merge moves them, and every other
// value stays as computed. It is what a merge recorded under rule sets 2
// and 3, and what their commits replay: it is wrong as soon as anything
// else moved since the metrics were computed (a task added, a verdict), and
// a merge from rule set 4 recomputes them from the whole board as
// update-sprint-metrics.sh does after each merge. It reports false, and
// stored unchanged, when there are no computed metrics to add to.
func MetricsAfterMerge(stored Extra, t *Task, started string) (Extra, bool) {
	need := []string{"tasks_done", "tasks_merged", "tasks_in_progress", "tasks_total", "by_status",
		"approve_to_merge_count", "approve_to_merge_mean_seconds", "approve_to_merge_max_seconds"}
	for _, k := range need {
		if _, ok := stored[k]; !ok {
			return stored, false
		}
	}
	byStatus, ok := stored["by_status"].(Extra)
	if !ok {
		return stored, false
	}
	num := func(k string) float64 {
		switch v := stored[k].(type) {
		case int:
			return float64(v)
		case int64:
			return float64(v)
		case float64:
			return v
		}
		return 0
	}
	out := maps.Clone(stored)
	by := maps.Clone(byStatus)
	count := func(status string) int {
		if n, ok := by[status].(int); ok {
			return n
		}
		return 0
	}
	if n := count(string(Approved)) - 1; n > 0 {
		by[string(Approved)] = n
	} else {
		delete(by, string(Approved))
	}
	by[string(Merged)] = count(string(Merged)) + 1
	out["by_status"] = by
	merged := int(num("tasks_merged")) + 1
	out["tasks_merged"] = merged
	out["tasks_done"] = int(num("tasks_done")) + 1
	out["tasks_in_progress"] = max(int(num("tasks_in_progress"))-1, 0)
	if total := num("tasks_total"); total > 0 {
		out["completion_rate"] = round(float64(merged)/total, 1000)
	}
	if secs, ok := lastMergeLatency(t, windowFrom(started)); ok {
		n := num("approve_to_merge_count")
		out["approve_to_merge_mean_seconds"] = round((num("approve_to_merge_mean_seconds")*n+float64(secs))/(n+1), 10)
		out["approve_to_merge_max_seconds"] = max(int64(num("approve_to_merge_max_seconds")), secs)
		out["approve_to_merge_count"] = int(n) + 1
	}
	if sp, ok := out["spend"]; ok {
		if moved, ok := spendAfterMerge(sp, t, started, merged); ok {
			out["spend"] = moved
		}
	}
	return out, true
}

// lastMergeLatency is the time from t's last approval to its last merge,
// as SprintMetrics measures it: the merge in the sprint, the approval not
// undone by a failed integration.
func lastMergeLatency(t *Task, in window) (int64, bool) {
	var approved time.Time
	secs, ok := int64(0), false
	for _, e := range t.History {
		if e == nil {
			continue
		}
		at, err := ParseTime(e.Time)
		switch e.Event {
		case "approved":
			if err == nil {
				approved = at
			}
		case "integration_failed":
			approved = time.Time{}
		case "merged":
			ok = in.has(e.Time) && err == nil && !approved.IsZero() && !at.Before(approved)
			if ok {
				secs = int64(at.Sub(approved) / time.Second)
			}
			approved = time.Time{}
		}
	}
	return secs, ok
}

// meanMax is the mean (to a tenth) and the maximum of durations in seconds.
func meanMax(secs []int64) (float64, int64) {
	if len(secs) == 0 {
		return 0, 0
	}
	var sum, most int64
	for _, w := range secs {
		sum += w
		most = max(most, w)
	}
	return round(float64(sum)/float64(len(secs)), 10), most
}

// Extra renders m as the map sprint.metrics holds once read back from YAML.
func (m Metrics) Extra() (Extra, error) { return asExtra(m) }

// Extra renders m as the map sprint.metrics holds once read back from YAML.
func (m MetricsFirst) Extra() (Extra, error) { return asExtra(m) }

func asExtra(v any) (Extra, error) {
	var out Extra
	b, err := EncodeYAML(v)
	if err != nil {
		return nil, err
	}
	if err := DecodeYAML(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// MergeMetrics returns sprint.metrics with the fresh values in place of
// stored ones, keeping the keys fresh does not compute, and whether any
// value other than computed_at changed. When nothing changed, stored is
// returned as it is, computed_at included.
func MergeMetrics(stored, fresh Extra) (Extra, bool) {
	changed := false
	for k, v := range fresh {
		if k == "computed_at" {
			continue
		}
		if old, ok := stored[k]; !ok || !sameYAML(old, v) {
			changed = true
		}
	}
	// A warning that no longer holds goes.
	_, warned := stored["warnings"]
	_, warns := fresh["warnings"]
	changed = changed || warned && !warns
	if !changed {
		return stored, false
	}
	out := maps.Clone(stored)
	if out == nil {
		out = Extra{}
	}
	maps.Copy(out, fresh)
	if !warns {
		delete(out, "warnings")
	}
	return out, true
}

func sameYAML(a, b any) bool {
	x, err1 := EncodeYAML(a)
	y, err2 := EncodeYAML(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func round(x, scale float64) float64 { return math.Round(x*scale) / scale }

// allTasks returns the tasks of the current goal in natural id order (see
// SprintTasks).
func allTasks(st *State) []*Task {
	return sortedTasks(SprintTasks(st))
}

// SprintTasks are the tasks of the current goal and sprint: the live tasks
// and the archived ones the sprint's scope names. The tasks of a goal
// finished before git liza goal new stay in the archive, out of the new
// sprint's counts.
func SprintTasks(st *State) []*Task {
	out := slices.Clone(st.Tasks)
	for _, t := range st.Archive {
		if t != nil && st.Sprint.InScope(t.ID) {
			out = append(out, t)
		}
	}
	return out
}

// InScope reports whether the sprint plans the task, as planned or
// stretch work.
func (sp Sprint) InScope(id string) bool {
	return sp.Scope.Planned.Contains(id) || sp.Scope.Stretch.Contains(id)
}
