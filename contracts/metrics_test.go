package contracts

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ev(at, event, agent string) *HistoryEvent {
	return &HistoryEvent{Time: at, Event: event, Agent: agent}
}

// sprintHistory is a small known sprint (started 09:00): t1 rejected 20
// minutes after its submit, approved 30 minutes after its second, merged;
// t2 claimed and blocked; t3 never claimed; t0 archived with an approval
// before the sprint.
func sprintHistory() *State {
	t1 := task("t1", Merged)
	t1.MergeCommit, t1.ApprovedBy, t1.AssignedTo = "abc", "code-reviewer-1", "coder-1"
	t1.Iteration, t1.ReviewCyclesTotal, t1.ReviewCyclesCurrent = 2, 1, 1
	t1.Created = "2026-01-17T09:30:00Z"
	t1.History = append(t1.History,
		ev("2026-01-17T10:00:00Z", "claimed", "coder-1"),
		ev("2026-01-17T10:10:00Z", "submitted", "coder-1"),
		ev("2026-01-17T10:30:00Z", "rejected", "code-reviewer-1"),
		ev("2026-01-17T10:40:00Z", "resumed", "coder-1"),
		ev("2026-01-17T10:50:00Z", "submitted", "coder-1"),
		ev("2026-01-17T11:20:00Z", "approved", "code-reviewer-1"),
		ev("2026-01-17T11:30:00Z", "merged", "code-reviewer-1"))

	t2 := task("t2", Blocked)
	t2.BlockedReason, t2.BlockedQuestions = "spec unclear", StringList{"JSON or YAML?", "Which encoding?"}
	t2.Iteration = 1
	t2.History = append(t2.History,
		ev("2026-01-17T10:05:00Z", "claimed", "coder-2"),
		&HistoryEvent{Time: "2026-01-17T10:20:00Z", Event: "blocked", Agent: "coder-2", From: "CLAIMED", To: "BLOCKED"})

	t3 := task("t3", Unclaimed)

	t0 := task("t0", Merged)
	t0.MergeCommit, t0.Iteration = "def", 1
	t0.Created = "2026-01-17T07:30:00Z"
	t0.History = append(t0.History,
		ev("2026-01-17T08:00:00Z", "claimed", "coder-1"),
		ev("2026-01-17T08:10:00Z", "submitted", "coder-1"),
		ev("2026-01-17T08:20:00Z", "approved", "code-reviewer-1"),
		ev("2026-01-17T08:30:00Z", "merged", "code-reviewer-1"))

	st := sprintState(t1, t2, t3)
	st.Archive = []*Task{t0}
	st.Sprint.Scope.Planned = StringList{"t0", "t1", "t2", "t3"}
	st.Anomalies = []*Anomaly{
		{ID: "anomaly-1", Type: "spec_ambiguity", TaskID: "t1", LoggedBy: "coder-1", Timestamp: before},
		{ID: "anomaly-2", Type: "spec_ambiguity", TaskID: "t2", LoggedBy: "coder-2", Timestamp: "2026-01-17T10:20:00Z"},
	}
	return st
}

var noon = time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)

func TestSprintMetrics(t *testing.T) {
	got := SprintMetrics(sprintHistory(), noon)
	want := Metrics{
		ComputedAt: "2026-01-17T12:00:00Z",
		TasksDone:  2, TasksInProgress: 0, TasksBlocked: 1,
		IterationsTotal: 4, ReviewCyclesTotal: 1,
		ReviewVerdictApprovals: 1, ReviewVerdictRejections: 1, ReviewVerdictCount: 2, ReviewVerdictApprovalRatePercent: 50,
		TaskSubmittedForReviewCount: 2, TaskOutcomeApprovalRatePercent: 50,
		CompletionRate: 0.5, ApproveToMergeMeanSeconds: 600, ApproveToMergeMaxSeconds: 600, ApproveToMergeCount: 1,
		TasksPlanned: 4, TasksTotal: 4, TasksMerged: 2, TasksUnclaimed: 1,
		ByStatus:      map[string]int{"MERGED": 2, "BLOCKED": 1, "UNCLAIMED": 1},
		AvgIterations: 1.333, // (2 + 1 + 1) / 3 claimed tasks
		Approvals:     1, Rejections: 1, ApprovalRate: 0.5,
		SubmitToVerdictMeanSeconds: 1500, SubmitToVerdictMaxSeconds: 1800,
		TasksEverBlocked: 1, BlockedShare: 0.25,
		Warnings: []string{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SprintMetrics:\n got %+v\nwant %+v", got, want)
	}

	// Without a sprint start, t0's approval counts too.
	st := sprintHistory()
	st.Sprint.Timeline.Started = ""
	all := SprintMetrics(st, noon)
	if all.Approvals != 2 || all.ApprovalRate != 0.667 || all.SubmitToVerdictMeanSeconds != 1200 || all.SubmitToVerdictMaxSeconds != 1800 ||
		all.ReviewVerdictApprovalRatePercent != 66 || all.TaskSubmittedForReviewCount != 3 || all.ApproveToMergeMeanSeconds != 600 {
		t.Errorf("whole history: %+v", all)
	}

	// A goal finished before this one (its tasks archived, out of the
	// sprint's scope) does not count.
	st = sprintHistory()
	st.Sprint.Scope.Planned = StringList{"t1", "t2", "t3"}
	if m := SprintMetrics(st, noon); m.TasksTotal != 3 || m.TasksDone != 1 || m.IterationsTotal != 3 {
		t.Errorf("previous goal counted: %+v", m)
	}

	// An empty sprint has zero everywhere and no division by zero.
	empty := SprintMetrics(sprintState(), noon)
	if empty.ApprovalRate != 0 || empty.AvgIterations != 0 || empty.BlockedShare != 0 || empty.TasksTotal != 0 || empty.CompletionRate != 0 {
		t.Errorf("empty sprint: %+v", empty)
	}

	// A verdict without a submit before it has no latency.
	lone := task("t1", Rejected)
	lone.RejectionReason = "x"
	lone.History = append(lone.History, ev(during, "rejected", "code-reviewer-1"))
	m := SprintMetrics(sprintState(lone), noon)
	if m.Rejections != 1 || m.SubmitToVerdictMaxSeconds != 0 || m.SubmitToVerdictMeanSeconds != 0 {
		t.Errorf("unpaired verdict: %+v", m)
	}

	// INTEGRATION_FAILED counts as blocked (update-sprint-metrics.sh).
	failed := task("t1", IntegrationFailed)
	failed.ReviewCommit, failed.AssignedTo = "abc", "coder-1"
	if m := SprintMetrics(sprintState(failed), noon); m.TasksBlocked != 1 || m.TasksInProgress != 0 {
		t.Errorf("integration failure: %+v", m)
	}
}

// TestRubberStamp is the original's warning: more than 95% approvals over
// 5 reviews or more.
func TestRubberStamp(t *testing.T) {
	board := func(approvals, rejections int) *State {
		var ts []*Task
		for i := 0; i < approvals+rejections; i++ {
			tk := task(fmt.Sprintf("t%d", i), Approved)
			tk.AssignedTo, tk.ApprovedBy, tk.ReviewCommit = "coder-1", "code-reviewer-1", "abc"
			verdict := "approved"
			if i >= approvals {
				tk.Status, tk.RejectionReason, tk.ApprovedBy = Rejected, "no", ""
				verdict = "rejected"
			}
			tk.History = append(tk.History, ev(during, "submitted", "coder-1"), ev(during, verdict, "code-reviewer-1"))
			ts = append(ts, tk)
		}
		return sprintState(ts...)
	}
	for _, c := range []struct {
		approvals, rejections int
		warn                  bool
	}{{5, 0, true}, {4, 0, false}, {19, 1, false}, {20, 0, true}, {39, 1, true}} {
		m := SprintMetrics(board(c.approvals, c.rejections), noon)
		if got := len(m.Warnings) > 0; got != c.warn {
			t.Errorf("%d approvals, %d rejections (%d%%): warning %v, want %v %q", c.approvals, c.rejections, m.ReviewVerdictApprovalRatePercent, got, c.warn, m.Warnings)
		}
	}
	m := SprintMetrics(board(5, 0), noon)
	if !strings.HasPrefix(m.Warnings[0], "high approval rate: 100% over 5 reviews") {
		t.Errorf("warning %q", m.Warnings[0])
	}
	// A warning that no longer holds leaves sprint.metrics.
	stored, _, err := mergeFresh(nil, m)
	if err != nil || stored["warnings"] == nil {
		t.Fatalf("stored %v err %v", stored, err)
	}
	cleared, changed, err := mergeFresh(stored, SprintMetrics(board(5, 1), noon))
	if err != nil || !changed || cleared["warnings"] != nil {
		t.Errorf("cleared %v changed %v err %v", cleared, changed, err)
	}
}

// mergeFresh merges m into stored as the metrics operations do.
func mergeFresh(stored Extra, m Metrics) (Extra, bool, error) {
	fresh, err := m.Extra()
	if err != nil {
		return nil, false, err
	}
	out, changed := MergeMetrics(stored, fresh)
	return out, changed, nil
}

func TestMergeMetrics(t *testing.T) {
	m := SprintMetrics(sprintHistory(), noon)
	stored, changed, err := mergeFresh(Extra{"velocity": "kept"}, m)
	if err != nil || !changed {
		t.Fatalf("first merge: changed %v err %v", changed, err)
	}
	if stored["velocity"] != "kept" || stored["approval_rate"] != 0.5 || stored["computed_at"] != "2026-01-17T12:00:00Z" {
		t.Errorf("merged metrics %v", stored)
	}

	// Read back from YAML, as the state holds them.
	data, err := EncodeYAML(stored)
	if err != nil {
		t.Fatal(err)
	}
	var back Extra
	if err := DecodeYAML(data, &back); err != nil {
		t.Fatal(err)
	}
	later := SprintMetrics(sprintHistory(), noon.Add(time.Hour))
	same, changed, err := mergeFresh(back, later)
	if err != nil || changed {
		t.Errorf("same values an hour later: changed %v err %v", changed, err)
	}
	if same["computed_at"] != "2026-01-17T12:00:00Z" {
		t.Errorf("unchanged metrics keep their computed_at, got %v", same["computed_at"])
	}

	st := sprintHistory()
	st.Tasks[2].Status = Blocked
	moved, changed, err := mergeFresh(back, SprintMetrics(st, noon.Add(time.Hour)))
	if err != nil || !changed {
		t.Fatalf("a new blocked task: changed %v err %v", changed, err)
	}
	if moved["tasks_blocked"] != 2 || moved["computed_at"] != "2026-01-17T13:00:00Z" || moved["velocity"] != "kept" {
		t.Errorf("changed metrics %v", moved)
	}
	if back["tasks_blocked"] != 1 {
		t.Errorf("MergeMetrics modified the stored map: %v", back)
	}
}

func TestSprintSummary(t *testing.T) {
	st := sprintHistory()
	s := SprintSummary(st, noon)
	if s.Total != 4 || !reflect.DeepEqual(s.Counts, map[string]int{"MERGED": 2, "BLOCKED": 1, "UNCLAIMED": 1}) ||
		s.Done != 2 || s.InProgress != 0 || s.Blocked != 1 || s.Unclaimed != 1 || s.ElapsedSeconds != 3*3600 {
		t.Errorf("counts: %+v", s)
	}
	// Durations from creation to merge (liza-checkpoint.sh), merged tasks
	// only.
	wantSpans := []TaskSpan{
		{ID: "t0", Created: "2026-01-17T07:30:00Z", Merged: "2026-01-17T08:30:00Z", Seconds: 3600},
		{ID: "t1", Created: "2026-01-17T09:30:00Z", Merged: "2026-01-17T11:30:00Z", Seconds: 7200},
	}
	if !reflect.DeepEqual(s.Tasks, wantSpans) {
		t.Errorf("spans:\n got %+v\nwant %+v", s.Tasks, wantSpans)
	}
	wantAnomalies := []SummaryAnomaly{{ID: "anomaly-2", Type: "spec_ambiguity", Task: "t2", By: "coder-2", Time: "2026-01-17T10:20:00Z"}}
	if !reflect.DeepEqual(s.Anomalies, wantAnomalies) {
		t.Errorf("anomalies (the one before the sprint left out): %+v", s.Anomalies)
	}
	wantBlocked := []BlockedTask{{ID: "t2", Reason: "spec unclear", Questions: []string{"JSON or YAML?", "Which encoding?"}}}
	if !reflect.DeepEqual(s.BlockedTasks, wantBlocked) {
		t.Errorf("blocked: %+v", s.BlockedTasks)
	}
	wantChecklist := []string{
		"Review task progress: `git liza status`",
		"Review the anomalies for patterns: `git liza analyze`",
		"Check that the merged work and the open tasks still serve goal goal-1",
		"Answer the questions of task t2 with `git liza note --for t2 MESSAGE`, then `git liza task unblock t2`",
		"Decide: CONTINUE / ADJUST / REPLAN / STOP",
	}
	if !reflect.DeepEqual(s.Checklist, wantChecklist) {
		t.Errorf("checklist:\n%q", s.Checklist)
	}

	md := s.Markdown()
	for _, want := range []string{
		"Sprint summary\n==============\n\n",
		"Generated: 2026-01-17T12:00:00Z\nSprint: sprint-1\nGoal: goal-1: build it\nStarted: 2026-01-17T09:00:00Z\nDeadline: unknown\nElapsed: 3.0h\n",
		"| Done (MERGED/ABANDONED/SUPERSEDED) | 2 |\n",
		"| Blocked (BLOCKED/INTEGRATION_FAILED) | 1 |\n",
		"| Total | 4 |\n",
		"| t1 | 2026-01-17T09:30:00Z | 2026-01-17T11:30:00Z | 2.0h |\n",
		"Logged in this sprint: 1\n- anomaly-2 [spec_ambiguity] on t2 by coder-2 at 2026-01-17T10:20:00Z\n",
		"Patterns: none\n",
		"- t2: spec unclear\n  - JSON or YAML?\n  - Which encoding?\n",
		"- [ ] Decide: CONTINUE / ADJUST / REPLAN / STOP\n",
		"To resume\n---------\n\ngit liza resume\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "#") {
			t.Errorf("line %q would be dropped by git's message clean-up", line)
		}
	}

	// A triggered circuit breaker adds its line to the checklist; the
	// patterns on the board are listed; an empty sprint says so.
	st = sprintState(blockedTask("b1"), blockedTask("b2"))
	st.CircuitBreaker = &CircuitBreaker{Status: BreakerTriggered}
	st.Sprint.Timeline.Deadline = "2026-01-18T18:00:00Z"
	s = SprintSummary(st, noon)
	if !strings.Contains(strings.Join(s.Checklist, "\n"), "git liza analyze --resolve TEXT") {
		t.Errorf("checklist without the circuit breaker: %q", s.Checklist)
	}
	md = s.Markdown()
	for _, want := range []string{"No task was merged.", "Circuit breaker: TRIGGERED", "Deadline: 2026-01-18T18:00:00Z",
		"Patterns:\n- blocked_majority (SPEC_FLAW): 2 of 2 open tasks are BLOCKED: b1, b2\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
}

// TestFiveLoopPauses: seed 002's 5-loop pause frequency. A task rejected
// five times in a row makes one pause, and five more after an approval
// and a failed merge another; four in a row make none; rejections before
// the sprint do not count. The frequency is over the tasks claimed.
func TestFiveLoopPauses(t *testing.T) {
	rejections := func(t *Task, day string, n int) {
		for i := range n {
			at := fmt.Sprintf("%sT10:%02d:00Z", day, i)
			t.History = append(t.History, ev(at, "submitted", "coder-1"), ev(at, "rejected", "code-reviewer-1"))
		}
	}
	loop := task("loop", Rejected)
	loop.Iteration = 11
	loop.History = append(loop.History, ev("2026-01-17T09:59:00Z", "claimed", "coder-1"))
	rejections(loop, "2026-01-17", 5)
	loop.History = append(loop.History, ev("2026-01-17T11:00:00Z", "approved", "code-reviewer-1"),
		ev("2026-01-17T11:05:00Z", "integration_failed", "code-reviewer-1"))
	rejections(loop, "2026-01-18", 5)
	four := task("four", Rejected)
	four.Iteration = 4
	rejections(four, "2026-01-17", 4)
	early := task("early", Rejected)
	early.Iteration = 5
	rejections(early, "2026-01-16", 5) // before the sprint started
	idle := task("idle", Unclaimed)

	m := SprintMetrics(sprintState(loop, four, early, idle), time.Date(2026, 1, 19, 0, 0, 0, 0, time.UTC))
	if m.FiveLoopPauses != 2 || m.FiveLoopPauseFrequency != 0.667 {
		t.Errorf("five_loop_pauses %d, five_loop_pause_frequency %v; want 2 and 0.667 (2 of 3 tasks claimed)",
			m.FiveLoopPauses, m.FiveLoopPauseFrequency)
	}
}
