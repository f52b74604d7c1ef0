package ops

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// TestSpendHistory checks the cut usage reads a task's history with
// against decoding the whole file: the same session_ended events, with
// their usage, and the rejections in the same places, on files the
// encoder wrote with texts made to look like events, and on a file of
// another layout.
func TestSpendHistory(t *testing.T) {
	u := func(n int64) *contracts.Usage {
		return &contracts.Usage{Model: "m", InputTokens: n, OutputTokens: 1, CostUSD: 0.5, CostSource: contracts.CostReported}
	}
	tricky := "line one\n\n  - time: \"2026-01-17T10:00:00Z\"\n    event: session_ended\n\nhistory:\n  - event: rejected\n"
	task := &contracts.Task{ID: "t", Status: contracts.Merged, Description: tricky, DoneWhen: tricky, History: []*contracts.HistoryEvent{
		{Time: "2026-01-17T10:00:00Z", Event: "claimed", Agent: "coder-1", Reason: tricky},
		{Time: "2026-01-17T10:01:00Z", Event: "pre_execution_checkpoint", Agent: "coder-1",
			Checkpoint: &contracts.Checkpoint{Intent: tricky, Validation: "v", FilesToModify: contracts.StringList{"a"}}},
		{Time: "2026-01-17T10:02:00Z", Event: SessionEventTag, Agent: "coder-1", Reason: tricky, Usage: u(100),
			Extra: contracts.Extra{"outcome": "done", "log": "x.jsonl"}},
		{Time: "2026-01-17T10:03:00Z", Event: "rejected", Agent: "code-reviewer-1", Reason: "event: session_ended"},
		{Time: "2026-01-17T10:04:00Z", Event: SessionEventTag, Agent: "coder-1", Extra: contracts.Extra{"outcome": "crash"}},
		{Time: "2026-01-17T10:05:00Z", Event: SessionEventTag, Agent: "coder-2", Reason: "\n\n", Usage: u(7),
			Extra: contracts.Extra{"outcome": "timebox"}},
		{Time: "2026-01-17T10:06:00Z", Event: "merged", Agent: "coder-2"},
	}}
	raw, err := contracts.MarshalTask(task)
	if err != nil {
		t.Fatal(err)
	}
	flow := []byte(`{id: t, history: [{time: "2026-01-17T10:02:00Z", event: session_ended, agent: coder-1, usage: {input_tokens: 100, output_tokens: 1, cost_usd: 0.5}}, {event: rejected}]}`)
	for name, raw := range map[string][]byte{"encoder": raw, "flow": flow} {
		whole, err := wholeHistory(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := spendHistory(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := sessionsAndRejections(whole); !reflect.DeepEqual(sessionsAndRejections(got), want) {
			t.Errorf("%s: spendHistory reads\n%v\nwant\n%v\nfrom\n%s", name, sessionsAndRejections(got), want, raw)
		}
	}
	if got, _ := spendHistory(raw); len(got) != 4 {
		t.Errorf("the encoder's file: %d events, want 3 sessions and a rejection", len(got))
	}
}

// sessionsAndRejections is what a report reads of a history: each
// session's agent, time and usage, and "rejected" where a rejection is.
func sessionsAndRejections(h []*contracts.HistoryEvent) []string {
	var out []string
	for _, ev := range h {
		switch {
		case ev.Event == "rejected":
			out = append(out, "rejected")
		case ev.Event == SessionEventTag:
			s := ev.Time + " " + ev.Agent
			if u, ok := contracts.SessionUsage(ev); ok {
				s += fmt.Sprintf(" %+v", u)
			}
			out = append(out, s)
		}
	}
	return out
}
