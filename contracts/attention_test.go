package contracts

import "testing"

func TestAttentionOrderHasEveryStatus(t *testing.T) {
	if len(AttentionOrder) != len(Statuses) {
		t.Fatalf("AttentionOrder has %d statuses, Statuses %d", len(AttentionOrder), len(Statuses))
	}
	for _, s := range Statuses {
		if AttentionRank(s) == 0 {
			t.Errorf("%s is not in AttentionOrder", s)
		}
	}
	if AttentionRank("BOGUS") != 0 || AttentionRank(Blocked) >= AttentionRank(Claimed) || AttentionRank(Claimed) >= AttentionRank(Unclaimed) {
		t.Error("ranks out of order")
	}
}

func TestReasonOf(t *testing.T) {
	for _, tc := range []struct {
		task Task
		want string
	}{
		{Task{Status: Blocked, BlockedReason: "spec gap"}, "spec gap"},
		{Task{Status: Rejected, RejectionReason: "no tests"}, "no tests"},
		{Task{Status: IntegrationFailed, History: []*HistoryEvent{{To: "INTEGRATION_FAILED", Reason: "conflict"}, {Event: "note"}}}, "conflict"},
		{Task{Status: Claimed, BlockedReason: "old"}, ""},
	} {
		if got := ReasonOf(&tc.task); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.task.Status, got, tc.want)
		}
	}
}
