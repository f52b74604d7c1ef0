package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

var at = time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)

func board() *contracts.State {
	return &contracts.State{
		Goal:   contracts.Goal{ID: "goal-1", Status: "IN_PROGRESS"},
		Config: contracts.Config{LeaseDuration: 60},
		Agents: map[string]*contracts.Agent{},
	}
}

func kinds(evs []Event) string {
	var k []string
	for _, e := range evs {
		k = append(k, e.Kind)
	}
	return strings.Join(k, " ")
}

func TestEventsQuietBoard(t *testing.T) {
	if evs := Events(board(), "c0", at); len(evs) != 0 {
		t.Fatalf("a quiet board: %v", evs)
	}
}

func TestEventsEveryKind(t *testing.T) {
	st := board()
	st.Tasks = []*contracts.Task{
		{ID: "t1", Status: contracts.Blocked, BlockedReason: "spec gap\x1b[2J", BlockedQuestions: []string{"Which codes?"},
			History: []*contracts.HistoryEvent{{Time: "2026-01-17T09:00:00Z", Event: "blocked", To: "BLOCKED"}}},
		{ID: "t2", Status: contracts.IntegrationFailed, AssignedTo: "coder-9",
			History: []*contracts.HistoryEvent{{Time: "2026-01-17T09:10:00Z", Event: "integration_failed", To: "INTEGRATION_FAILED", Reason: "merge conflict"}}},
		{ID: "t3", Status: contracts.ReadyForReview,
			History: []*contracts.HistoryEvent{{Time: "2026-01-17T09:58:00Z", Event: "submitted", To: "READY_FOR_REVIEW"}}},
		{ID: "t4", Status: contracts.ReadyForReview,
			History: []*contracts.HistoryEvent{{Time: "2026-01-17T09:59:30Z", Event: "submitted", To: "READY_FOR_REVIEW"}}},
	}
	st.CircuitBreaker = &contracts.CircuitBreaker{Status: contracts.BreakerTriggered, TriggeredAt: "2026-01-17T09:20:00Z", Severity: "SPEC_FLAW"}
	st.Control = &contracts.Control{Mode: contracts.ModePaused, Since: "2026-01-17T09:30:00Z", By: "human"}
	st.Agents["coder-1"] = &contracts.Agent{Role: "coder", Status: "IDLE", Generation: 3, StopReason: "crash loop: 3 crashes in 10m0s"}
	st.Goal.Status, st.Goal.Completed = "COMPLETED", "2026-01-17T09:40:00Z"
	evs := Events(st, "abc123", at)
	if got, want := kinds(evs), "blocked integration_failed review_waiting breaker_triggered paused supervisor_stopped goal_completed"; got != want {
		t.Fatalf("kinds:\n got %s\nwant %s", got, want)
	}
	b := evs[0]
	if b.Task != "t1" || b.Action != "git liza task unblock t1  (or: git liza note --for t1 MESSAGE)" {
		t.Errorf("blocked: %+v", b)
	}
	if !strings.Contains(b.Body, "Which codes?") || strings.Contains(b.Body, "\x1b") {
		t.Errorf("blocked body %q: the question, no escape", b.Body)
	}
	for _, e := range evs {
		if e.ID == "" || e.Title == "" || e.Action == "" || e.Commit != "abc123" || e.Time != "2026-01-17T10:00:00Z" {
			t.Errorf("incomplete event %+v", e)
		}
	}
	// The ids depend on the board, not on when it is looked at or from
	// which commit.
	// An hour on, t4 waits too; the others keep their ids.
	ids := map[string]bool{}
	for _, e := range Events(st, "def456", at.Add(time.Hour)) {
		ids[e.ID] = true
	}
	for _, e := range evs {
		if !ids[e.ID] {
			t.Errorf("id %s is gone an hour later: %v", e.ID, ids)
		}
	}
	if !ids["review_waiting/t4@2026-01-17T09:59:30Z"] || len(ids) != len(evs)+1 {
		t.Errorf("an hour on: %v", ids)
	}
	// Blocked again later: a new event.
	st.Tasks[0].History = append(st.Tasks[0].History, &contracts.HistoryEvent{Time: "2026-01-17T09:05:00Z", Event: "unblocked", To: "UNCLAIMED"},
		&contracts.HistoryEvent{Time: "2026-01-17T09:06:00Z", Event: "blocked", To: "BLOCKED"})
	if id := Events(st, "abc123", at)[0].ID; id == evs[0].ID {
		t.Errorf("a second block kept the id %s", id)
	}
}

func TestEventsCheckpointAndAbort(t *testing.T) {
	st := board()
	st.Control = &contracts.Control{Mode: contracts.ModeCheckpoint, Since: "2026-01-17T09:30:00Z", By: "human", Reason: "sprint checkpoint"}
	st.Tasks = []*contracts.Task{{ID: "a", Status: contracts.Merged}, {ID: "b", Status: contracts.Unclaimed}}
	if got := kinds(Events(st, "c", at)); got != "checkpoint" {
		t.Fatalf("checkpoint: %s", got)
	}
	// The breaker's own checkpoint is told as the breaker.
	st.CircuitBreaker = &contracts.CircuitBreaker{Status: contracts.BreakerTriggered, TriggeredAt: "2026-01-17T09:30:00Z"}
	if got := kinds(Events(st, "c", at)); got != "breaker_triggered" {
		t.Fatalf("breaker's checkpoint: %s", got)
	}
	st.CircuitBreaker = nil
	st.Control = &contracts.Control{Mode: contracts.ModeAborted, Since: "2026-01-17T09:30:00Z", By: "human"}
	if got := kinds(Events(st, "c", at)); got != "aborted" {
		t.Fatalf("abort: %s", got)
	}
}

func TestEventsBounded(t *testing.T) {
	st := board()
	st.Tasks = []*contracts.Task{{ID: "t1", Status: contracts.Blocked, BlockedReason: strings.Repeat("x", 100000),
		BlockedQuestions: []string{strings.Repeat("q", 100000)}}}
	e := Events(st, "c", at)[0]
	if len(e.Body) > MaxBody || len(e.Title) > MaxTitle {
		t.Fatalf("body %d, title %d bytes", len(e.Body), len(e.Title))
	}
}

// A pause for the goal's budget says what lifts it: raising the budget,
// which resumes the team (resume alone would be paused again).
func TestEventsBudgetPause(t *testing.T) {
	st := board()
	st.Control = &contracts.Control{Mode: contracts.ModePaused, Since: "2026-01-17T09:30:00Z", By: contracts.BudgetBy,
		Reason: "budget_exceeded: goal spent 2,400 tokens of its 2,000 (goal_tokens)"}
	evs := Events(st, "c", at)
	if len(evs) != 1 || evs[0].Kind != KindPaused {
		t.Fatalf("events %+v, want one pause", evs)
	}
	if want := "git liza budget --goal-tokens N (raising the goal's budget resumes the team)"; evs[0].Action != want {
		t.Errorf("action %q, want %q", evs[0].Action, want)
	}
	if !strings.Contains(evs[0].Body, "budget_exceeded: goal spent 2,400 tokens of its 2,000 (goal_tokens)") {
		t.Errorf("body %q does not give the figures", evs[0].Body)
	}
}
