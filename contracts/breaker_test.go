package contracts

import (
	"slices"
	"strings"
	"testing"
)

const (
	sprintStart = "2026-01-17T09:00:00Z"
	before      = "2026-01-17T08:00:00Z"
	during      = "2026-01-17T10:00:00Z"
)

// sprintState returns a valid state whose sprint started at sprintStart,
// with the given tasks.
func sprintState(tasks ...*Task) *State {
	return &State{
		Version: 1,
		Goal:    Goal{ID: "goal-1", Description: "build it", Status: "IN_PROGRESS"},
		Config:  DefaultConfig(),
		Sprint:  Sprint{ID: "sprint-1", GoalRef: "goal-1", Status: "IN_PROGRESS", Timeline: SprintTimeline{Started: sprintStart}},
		Agents:  map[string]*Agent{},
		Tasks:   tasks,
	}
}

// rejectedTimes returns a REJECTED task with n submit/reject cycles at time at.
func rejectedTimes(id string, n int, at string) *Task {
	t := task(id, Rejected)
	t.AssignedTo, t.RejectionReason = "coder-1", "still wrong"
	for i := 0; i < n; i++ {
		t.History = append(t.History,
			&HistoryEvent{Time: at, Event: "submitted", Agent: "coder-1"},
			&HistoryEvent{Time: at, Event: "rejected", Agent: "code-reviewer-1", Reason: "reason " + string(rune('a'+i))})
	}
	t.ReviewCyclesTotal, t.ReviewCyclesCurrent = n, n
	return t
}

func integrationFailed(id, at string) *Task {
	t := task(id, IntegrationFailed)
	t.AssignedTo, t.ReviewCommit = "coder-1", "abc"
	t.History = append(t.History, &HistoryEvent{Time: at, Event: "integration_failed", Agent: "code-reviewer-1"})
	return t
}

func exhausted(id string) *Task {
	t := task(id, Unclaimed)
	t.FailedBy = StringList{"coder-1", "coder-2"}
	return t
}

func blockedTask(id string) *Task {
	t := task(id, Blocked)
	t.BlockedReason, t.BlockedQuestions = "unclear", StringList{"which?"}
	return t
}

func crashAnomaly(id, by, at string) *Anomaly {
	return &Anomaly{ID: id, Type: "retry_loop", TaskID: "t1", LoggedBy: by, Timestamp: at,
		Details: Extra{"count": 3, "error_pattern": "crash loop: exit status 1"}}
}

func patterns(ms []PatternMatch) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Pattern + ":" + strings.Join(m.Tasks, ",") + ":" + strings.Join(m.Agents, ",")
	}
	return out
}

func TestAnalyze(t *testing.T) {
	withAnomalies := func(st *State, as ...*Anomaly) *State {
		st.Anomalies = as
		return st
	}
	cases := []struct {
		name     string
		st       *State
		problems []string
		want     []string
	}{
		{"clear", sprintState(task("t1", Unclaimed)), nil, []string{}},

		{"three rejections", sprintState(rejectedTimes("t1", 3, during)), nil,
			[]string{"repeated_rejection:t1:code-reviewer-1,coder-1"}},
		{"two rejections are below the threshold", sprintState(rejectedTimes("t1", 2, during)), nil, []string{}},
		{"rejections before the sprint do not count", sprintState(rejectedTimes("t1", 3, before)), nil, []string{}},
		{"without a sprint start review_cycles_total counts",
			func() *State {
				st := sprintState(rejectedTimes("t1", 0, during))
				st.Tasks[0].ReviewCyclesTotal = 3
				st.Sprint.Timeline.Started = ""
				return st
			}(), nil, []string{"repeated_rejection:t1:"}},
		{"every rejected task is reported",
			sprintState(rejectedTimes("t2", 4, during), rejectedTimes("t10", 3, during), rejectedTimes("t3", 2, during)), nil,
			[]string{"repeated_rejection:t2:code-reviewer-1,coder-1", "repeated_rejection:t10:code-reviewer-1,coder-1"}},
		{"a terminal task is no longer a problem",
			func() *State {
				tk := rejectedTimes("t1", 3, during)
				tk.Status, tk.MergeCommit, tk.AssignedTo = Merged, "abc", ""
				return sprintState(tk)
			}(), nil, []string{}},

		{"crash loops, one per agent, both forms",
			withAnomalies(sprintState(task("t1", Unclaimed)),
				crashAnomaly("a1", "coder-2", during),
				crashAnomaly("a2", "coder-10", during),
				crashAnomaly("a3", "coder-2", during),
				&Anomaly{ID: "a4", Type: "system_ambiguity", TaskID: "t1", LoggedBy: "planner-1", Timestamp: during,
					Details: Extra{"protocol_section": "supervisor", "question": "Crash loop: exited 3 times"}}),
			// Three retry_loop anomalies, the same crash-loop pattern twice:
			// a retry cluster too.
			nil, []string{"crash_loop:t1:coder-2", "crash_loop:t1:coder-10", "crash_loop:t1:planner-1", "retry_cluster:t1:coder-2,coder-10"}},
		{"a retry loop that is not a crash loop",
			withAnomalies(sprintState(task("t1", Unclaimed)),
				&Anomaly{ID: "a1", Type: "retry_loop", TaskID: "t1", LoggedBy: "coder-1", Timestamp: during,
					Details: Extra{"count": 5, "error_pattern": "flaky test"}},
				&Anomaly{ID: "a2", Type: "system_ambiguity", TaskID: "t1", LoggedBy: "planner-1", Timestamp: during,
					Details: Extra{"protocol_section": "roles", "question": "crash loop?"}}),
			nil, []string{}},
		{"a crash loop before the sprint",
			withAnomalies(sprintState(task("t1", Unclaimed)), crashAnomaly("a1", "coder-1", before)), nil, []string{}},

		{"invalid state", sprintState(task("t1", Unclaimed)), []string{"tasks[t1]: bad", "tasks[t2]: worse"},
			[]string{"invalid_state::"}},

		{"integration cascade",
			sprintState(integrationFailed("t1", during), integrationFailed("t2", during)), nil,
			[]string{"integration_cascade:t1,t2:code-reviewer-1"}},
		{"one integration failure is below the threshold",
			sprintState(integrationFailed("t1", during), integrationFailed("t2", before)), nil, []string{}},
		{"conflicts caught before review are no cascade",
			func() *State {
				a, b := integrationFailed("t1", during), integrationFailed("t2", during)
				a.History[len(a.History)-1].Extra = Extra{ConflictChecked: CheckedSubmit}
				b.History[len(b.History)-1].Extra = Extra{ConflictChecked: CheckedReview}
				return sprintState(a, b, integrationFailed("t3", during))
			}(), nil, []string{}},
		{"archived tasks count toward the cascade",
			func() *State {
				st := sprintState(integrationFailed("t1", during))
				old := integrationFailed("t0", during)
				old.Status, old.MergeCommit = Merged, "abc"
				st.Archive = []*Task{old}
				return st
			}(), nil, []string{"integration_cascade:t0,t1:code-reviewer-1"}},

		{"hypothesis exhaustion", sprintState(exhausted("t1"), exhausted("t2"), task("t3", Unclaimed)), nil,
			[]string{"hypothesis_exhaustion:t1,t2:coder-1,coder-2"}},
		{"one exhausted task is below the threshold", sprintState(exhausted("t1"), task("t2", Unclaimed)), nil, []string{}},
		{"one coder failing is not exhaustion",
			func() *State {
				a, b := exhausted("t1"), exhausted("t2")
				b.FailedBy = StringList{"coder-3"}
				return sprintState(a, b)
			}(), nil, []string{}},

		{"blocked majority: half of the open tasks",
			sprintState(blockedTask("t1"), blockedTask("t2"), task("t3", Unclaimed), task("t4", Draft), mergedTask("t5")), nil,
			[]string{"blocked_majority:t1,t2:"}},
		{"blocked below half",
			sprintState(blockedTask("t1"), blockedTask("t2"), task("t3", Unclaimed), task("t4", Unclaimed), task("t5", Unclaimed)), nil,
			[]string{}},
		{"one blocked task is never a majority", sprintState(blockedTask("t1"), mergedTask("t2")), nil, []string{}},

		{"several patterns in table order",
			withAnomalies(sprintState(blockedTask("b1"), blockedTask("b2"), rejectedTimes("r1", 3, during)),
				crashAnomaly("a1", "coder-1", during)),
			[]string{"problem"},
			[]string{"repeated_rejection:r1:code-reviewer-1,coder-1", "crash_loop:t1:coder-1", "invalid_state::", "blocked_majority:b1,b2:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := patterns(Analyze(c.st, c.problems))
			if !slices.Equal(got, c.want) {
				t.Errorf("Analyze:\n got %q\nwant %q", got, c.want)
			}
			again := patterns(Analyze(c.st, c.problems))
			if !slices.Equal(got, again) {
				t.Errorf("Analyze is not deterministic: %q then %q", got, again)
			}
		})
	}
}

func mergedTask(id string) *Task {
	t := task(id, Merged)
	t.MergeCommit = "abc"
	return t
}

func TestAnalyzeDetails(t *testing.T) {
	st := sprintState(rejectedTimes("t1", 3, during), blockedTask("b1"), blockedTask("b2"))
	st.Anomalies = []*Anomaly{crashAnomaly("a1", "coder-1", during), crashAnomaly("a2", "coder-1", during)}
	ms := Analyze(st, []string{"first problem", "second", "third"})
	want := map[string]struct {
		count  int
		detail string
	}{
		PatternRepeatedRejection: {3, "task t1 rejected 3 times in this sprint (last reason: reason c)"},
		PatternCrashLoop:         {6, "the supervisor of coder-1 stopped on a crash loop 2 times (6 crashes): crash loop: exit status 1"},
		PatternInvalidState:      {3, "the state fails validation: first problem (and 2 more problems)"},
		PatternBlockedMajority:   {2, "2 of 3 open tasks are BLOCKED: b1, b2"},
	}
	if len(ms) != len(want) {
		t.Fatalf("got %d matches, want %d: %q", len(ms), len(want), patterns(ms))
	}
	for _, m := range ms {
		w := want[m.Pattern]
		if m.Count != w.count || m.Detail != w.detail {
			t.Errorf("%s: count %d detail %q, want %d %q", m.Pattern, m.Count, m.Detail, w.count, w.detail)
		}
		if m.Tasks == nil || m.Agents == nil {
			t.Errorf("%s: nil tasks or agents (JSON null)", m.Pattern)
		}
	}
}

func TestBreakerReportAndPatterns(t *testing.T) {
	st := sprintState(integrationFailed("t1", during), integrationFailed("t2", during))
	ms := Analyze(st, nil)
	report := BreakerReport(ms)
	for _, want := range []string{
		"Circuit breaker: 1 pattern matched\n",
		"- integration_cascade: 2 tasks failed to integrate in this sprint: t1, t2\n",
		"  tasks: t1, t2; agents: code-reviewer-1\n",
		"  severity: ARCHITECTURE_FLAW\n",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// Evidence, not remedies: the breaker observes, the human decides.
	if strings.Contains(report, "next:") {
		t.Errorf("report proposes a remedy:\n%s", report)
	}
	if got := BreakerReport(nil); got != "Circuit breaker: no pattern matched\n" {
		t.Errorf("empty report %q", got)
	}

	stored := StorePatterns(ms)
	if !SamePatterns(stored, ms) {
		t.Errorf("stored patterns differ from the matches they came from: %v", stored)
	}
	// Read back from YAML, as the state holds them.
	cb := &CircuitBreaker{Status: BreakerTriggered, Patterns: stored}
	data, err := EncodeYAML(cb)
	if err != nil {
		t.Fatal(err)
	}
	var back CircuitBreaker
	if err := DecodeYAML(data, &back); err != nil {
		t.Fatal(err)
	}
	if !SamePatterns(back.Patterns, ms) {
		t.Errorf("patterns read back from YAML differ:\n%s", data)
	}
	more := Analyze(sprintState(integrationFailed("t1", during), integrationFailed("t2", during), integrationFailed("t3", during)), nil)
	if SamePatterns(back.Patterns, more) {
		t.Error("a third failed task should make the patterns differ")
	}
	if SamePatterns(nil, ms) || !SamePatterns(nil, nil) {
		t.Error("SamePatterns with no stored patterns")
	}
	if got := PatternNames(append(Analyze(sprintState(), []string{"x"}), ms...)); !slices.Equal(got, []string{PatternInvalidState, PatternIntegrationCascade}) {
		t.Errorf("PatternNames = %q", got)
	}
}

func TestValidateCircuitBreaker(t *testing.T) {
	for _, c := range []struct {
		cb   *CircuitBreaker
		want string
	}{
		{&CircuitBreaker{Status: BreakerTriggered, TriggeredAt: during}, ""},
		{&CircuitBreaker{Status: BreakerResolved, TriggeredAt: during, ResolvedAt: during, Resolution: "done"}, ""},
		{&CircuitBreaker{Status: "OPEN"}, `circuit_breaker: unknown status "OPEN"`},
		{&CircuitBreaker{Status: BreakerTriggered, TriggeredAt: "yesterday"}, "circuit_breaker: triggered_at: invalid timestamp"},
	} {
		st := sprintState()
		st.CircuitBreaker = c.cb
		got := problemText(Validate(st))
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: problems %q, want %q", c.cb, got, c.want)
		}
	}
}
