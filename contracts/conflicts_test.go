package contracts

import "testing"

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
