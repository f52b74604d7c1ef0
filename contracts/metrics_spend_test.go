package contracts

import (
	"testing"
)

func sessionEv(at, agent string, in int64, usd float64) *HistoryEvent {
	return &HistoryEvent{Time: at, Event: "session_ended", Agent: agent,
		Usage: &Usage{InputTokens: in, CostUSD: usd, CostSource: CostPriced}}
}

// The sprint's metrics gain spend: the total, the landed work of merged
// tasks and its mean per merged task, and what did not land (the rejected
// iterations, abandoned, superseded and blocked tasks); in-flight work
// apart; the planner's sessions counted as planning. A sprint with no
// usage recorded has no spend section.
func TestSprintSpend(t *testing.T) {
	st := sprintHistory()
	if m := SprintMetrics(st, noon); m.Spend != nil {
		t.Fatalf("a sprint without usage has spend %+v", m.Spend)
	}
	t1 := findTask(st, "t1")
	// t1: the first iteration (coder 100, the rejecting review 10) did not
	// land; the second (coder 200, review 20) did.
	t1.History = []*HistoryEvent{t1.History[0],
		ev("2026-01-17T10:00:00Z", "claimed", "coder-1"),
		ev("2026-01-17T10:10:00Z", "submitted", "coder-1"),
		sessionEv("2026-01-17T10:11:00Z", "coder-1", 100, 1),
		ev("2026-01-17T10:30:00Z", "rejected", "code-reviewer-1"),
		sessionEv("2026-01-17T10:31:00Z", "code-reviewer-1", 10, 0.1),
		ev("2026-01-17T10:40:00Z", "resumed", "coder-1"),
		ev("2026-01-17T10:50:00Z", "submitted", "coder-1"),
		sessionEv("2026-01-17T10:51:00Z", "coder-1", 200, 2),
		ev("2026-01-17T11:20:00Z", "approved", "code-reviewer-1"),
		sessionEv("2026-01-17T11:21:00Z", "code-reviewer-1", 20, 0.2),
		ev("2026-01-17T11:30:00Z", "merged", "code-reviewer-1")}
	t2 := findTask(st, "t2") // BLOCKED
	t2.History = append(t2.History, sessionEv("2026-01-17T10:21:00Z", "coder-2", 1000, 10))
	// Before the sprint: not counted.
	t2.History = append(t2.History, sessionEv("2026-01-17T08:00:00Z", "coder-2", 99999, 99))
	t4 := task("t4", Claimed)
	t4.History = append(t4.History, sessionEv("2026-01-17T11:00:00Z", "coder-3", 5000, 50))
	t5 := task("t5", Superseded)
	t5.History = append(t5.History, sessionEv("2026-01-17T11:00:00Z", "coder-3", 7, 0.07))
	st.Tasks = append(st.Tasks, t4, t5)
	st.Agents = map[string]*Agent{"planner-1": {Role: "planner", Status: "IDLE", Spend: &Usage{InputTokens: 3, CostUSD: 0.03, CostSource: CostPriced}}}

	sp := SprintMetrics(st, noon).Spend
	if sp == nil {
		t.Fatal("no spend")
	}
	for _, c := range []struct {
		name string
		got  Usage
		in   int64
	}{
		{"total", sp.Total, 100 + 10 + 200 + 20 + 1000 + 5000 + 7 + 3},
		{"planning", sp.Planning, 3},
		{"merged", sp.Merged, 220},
		// Two merged tasks (t0, archived, recorded none).
		{"per_merged_task", sp.PerMergedTask, 110},
		{"rejected_iterations", sp.RejectedIterations, 110},
		{"blocked", sp.Blocked, 1000},
		{"superseded", sp.Superseded, 7},
		{"abandoned", sp.Abandoned, 0},
		{"in_flight", sp.InFlight, 5000},
		{"not_landed", sp.NotLanded, 110 + 1000 + 7},
	} {
		if c.got.InputTokens != c.in {
			t.Errorf("%s: %d input tokens, want %d (%+v)", c.name, c.got.InputTokens, c.in, c.got)
		}
	}
	if sp.NotLanded.CostUSD < 11.169 || sp.NotLanded.CostUSD > 11.171 {
		t.Errorf("not landed cost %v, want 11.17", sp.NotLanded.CostUSD)
	}

	// A merge moves its task's spend from in flight to merged and
	// rejected, as a recomputation would.
	m := SprintMetrics(st, noon)
	stored, err := m.Extra()
	if err != nil {
		t.Fatal(err)
	}
	t4.Status = Merged
	t4.History = append(t4.History, ev("2026-01-17T11:40:00Z", "approved", "code-reviewer-1"), ev("2026-01-17T11:50:00Z", "merged", "code-reviewer-1"))
	after, ok := MetricsAfterMerge(stored, t4, st.Sprint.Timeline.Started)
	if !ok {
		t.Fatal("no metrics after merge")
	}
	want, _ := SprintMetrics(st, noon).Extra()
	if !sameYAML(after["spend"], want["spend"]) {
		t.Errorf("spend after the merge:\n%v\nwant\n%v", after["spend"], want["spend"])
	}
}
