package contracts

import "testing"

// A checkpoint counts for the iteration it was written in: the claim that
// begins the next (a resumption after a rejection, a takeover, a reclaim)
// asks for a new one; a handoff, which begins none, keeps it.
func TestCurrentCheckpoint(t *testing.T) {
	cp := func(agent string) *HistoryEvent {
		return &HistoryEvent{Event: "pre_execution_checkpoint", Agent: agent, Checkpoint: &Checkpoint{Intent: "i"}}
	}
	claim := func(event, agent string) *HistoryEvent {
		return &HistoryEvent{Event: event, Agent: agent, To: string(Claimed)}
	}
	for _, c := range []struct {
		name    string
		history []*HistoryEvent
		want    bool
	}{
		{"none", []*HistoryEvent{claim("claimed", "coder-1")}, false},
		{"after the claim", []*HistoryEvent{claim("claimed", "coder-1"), cp("coder-1")}, true},
		{"then a handoff", []*HistoryEvent{claim("claimed", "coder-1"), cp("coder-1"), {Event: "handoff", Agent: "coder-1"}}, true},
		{"before a rejection and resumption", []*HistoryEvent{claim("claimed", "coder-1"), cp("coder-1"), {Event: "submitted", To: string(ReadyForReview)},
			{Event: "rejected", To: string(Rejected)}, claim("resumed", "coder-1")}, false},
		{"the displaced coder's, before a reclaim", []*HistoryEvent{claim("claimed", "coder-1"), cp("coder-1"), claim("reclaimed", "coder-2")}, false},
		{"a checkpoint field on another event", []*HistoryEvent{claim("claimed", "coder-1"), {Event: "note", Checkpoint: &Checkpoint{Intent: "i"}}}, false},
	} {
		got := CurrentCheckpoint(&Task{ID: "t", Iteration: 1, History: c.history}) != nil
		if got != c.want {
			t.Errorf("%s: checkpointed %v, want %v", c.name, got, c.want)
		}
		if err := CheckCheckpointed(&Task{ID: "t", Iteration: 1, History: c.history}); (err == nil) != c.want {
			t.Errorf("%s: CheckCheckpointed = %v", c.name, err)
		}
	}
}

// A review ends routinely with its reviewer's verdict; one whose reviewer
// only claimed it (and died) does not, nor one claimed again since.
func TestReviewEndedByVerdict(t *testing.T) {
	ev := func(event, agent string) *HistoryEvent { return &HistoryEvent{Event: event, Agent: agent} }
	for _, c := range []struct {
		name    string
		history []*HistoryEvent
		want    bool
	}{
		{"approved", []*HistoryEvent{ev("review_claimed", "code-reviewer-1"), ev("approved", "code-reviewer-1")}, true},
		{"rejected", []*HistoryEvent{ev("review_claimed", "code-reviewer-1"), ev("rejected", "code-reviewer-1")}, true},
		{"abandoned", []*HistoryEvent{ev("review_claimed", "code-reviewer-1"), ev("review_claimed", "code-reviewer-2"), ev("approved", "code-reviewer-2")}, false},
		{"claimed again since its verdict", []*HistoryEvent{ev("review_claimed", "code-reviewer-1"), ev("rejected", "code-reviewer-1"), ev("review_claimed", "code-reviewer-1")}, false},
		{"never reviewed", []*HistoryEvent{ev("approved", "code-reviewer-2")}, false},
	} {
		if got := ReviewEndedByVerdict(&Task{History: c.history}, "code-reviewer-1"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
