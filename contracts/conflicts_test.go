package contracts

import "testing"

func TestMergeQueueOrder(t *testing.T) {
	approvedAt := func(id string, prio int, at string) *Task {
		return &Task{ID: id, Priority: prio, Status: Approved, History: []*HistoryEvent{{Time: at, Event: "approved"}}}
	}
	q := MergeQueue([]*Task{
		approvedAt("late", 1, "2026-01-17T10:05:00Z"),
		approvedAt("low", 2, "2026-01-17T10:00:00Z"),
		approvedAt("early", 1, "2026-01-17T10:01:00Z"),
	})
	if q[0].ID != "early" || q[1].ID != "late" || q[2].ID != "low" {
		t.Fatalf("queue %s, %s, %s: want early, late, low (priority, then approval time)", q[0].ID, q[1].ID, q[2].ID)
	}
}

func TestEarlyConflicts(t *testing.T) {
	st := &State{Tasks: []*Task{
		{ID: "a", History: []*HistoryEvent{
			{Event: "integration_failed", From: string(ReadyForReview), Reason: "merge conflict in x with integration"},
			{Event: "integration_failed", From: string(Approved), Reason: "merge conflict in x"},
			{Event: "integration_failed", From: string(Approved), Reason: "scripts/integration-test.sh failed (exit 1)"},
		}},
	}, Archive: []*Task{{ID: "b", History: []*HistoryEvent{{Event: "integration_failed", From: string(ReadyForReview)}}}}}
	caught, spent := EarlyConflicts(st)
	if caught != 2 || spent != 1 {
		t.Fatalf("caught %d, spent %d: want 2 and 1 (a failing test is not a conflict)", caught, spent)
	}
}
