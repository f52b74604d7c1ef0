package ops

import (
	"fmt"
	"reflect"
	"strings"
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
	if got, _ := spendHistory(raw); len(got) != len(task.History) {
		t.Errorf("the encoder's file: %d events, want %d", len(got), len(task.History))
	}
}

// sessionsAndRejections is what a report reads of a history: each
// session's time, agent and usage, and whether its iteration was rejected.
func sessionsAndRejections(h []*contracts.HistoryEvent) []string {
	var out []string
	for _, s := range sessionsOf(h) {
		out = append(out, fmt.Sprintf("%s %s %+v rejected=%v", s.Time, s.Agent, s.Usage, s.Rejected))
	}
	return out
}

// TestSessionsOf checks which sessions count as a rejected iteration: the
// ones before a rejection, and the rejecting reviewer's own session, which
// ends after its verdict; not a later one of the same reviewer after
// another event, nor the coder's next iteration.
func TestSessionsOf(t *testing.T) {
	u := &contracts.Usage{InputTokens: 1}
	ses := func(at, agent string) *contracts.HistoryEvent {
		return &contracts.HistoryEvent{Time: at, Event: SessionEventTag, Agent: agent, Usage: u}
	}
	h := []*contracts.HistoryEvent{
		{Event: "claimed", Agent: "coder-1"},
		ses("1", "coder-1"),
		{Event: "submitted", Agent: "coder-1"},
		ses("2", "coder-1"),
		{Event: "rejected", Agent: "code-reviewer-1"},
		ses("3", "code-reviewer-1"), // the rejecting review's session
		ses("4", "coder-1"),         // the next iteration
		{Event: "submitted", Agent: "coder-1"},
		{Event: "approved", Agent: "code-reviewer-1"},
		ses("5", "code-reviewer-1"),
		{Time: "6", Event: SessionEventTag, Agent: "coder-1"}, // no usage: not counted
	}
	var got []string
	for _, s := range sessionsOf(h) {
		got = append(got, fmt.Sprintf("%s %s %v", s.Time, s.Agent, s.Rejected))
	}
	want := []string{"1 coder-1 true", "2 coder-1 true", "3 code-reviewer-1 true", "4 coder-1 false", "5 code-reviewer-1 false"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sessionsOf:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSpendHistoryHandWritten: a task file in the encoder's layout whose
// events are spelled another way (quoted, tagged, with a comment), as an
// import commit may carry it and the guard and validate --history decode
// it, is read as the whole decode reads it: a session_ended event spelled
// "session_ended" is a session that the goal's budget counts, and usage
// and the spend line of status counted nothing for it.
func TestSpendHistoryHandWritten(t *testing.T) {
	head := "id: t\nstatus: MERGED\nhistory:\n"
	claimed := "  - time: \"2026-01-17T10:00:00Z\"\n    event: claimed\n    agent: coder-1\n"
	session := func(spelled string) string {
		return "  - time: \"2026-01-17T10:02:00Z\"\n    event: " + spelled + "\n    agent: coder-1\n    usage:\n      model: m\n      input_tokens: 100\n      output_tokens: 1\n      cost_usd: 0.5\n      cost_source: reported\n"
	}
	rejected := func(spelled string) string {
		return "  - time: \"2026-01-17T10:03:00Z\"\n    event: " + spelled + "\n    agent: code-reviewer-1\n"
	}
	for _, c := range []struct{ name, session, rejected string }{
		{"double-quoted", `"session_ended"`, `"rejected"`},
		{"single-quoted", `'session_ended'`, `'rejected'`},
		{"tagged", `!!str session_ended`, `!!str rejected`},
		{"commented", `session_ended # the end`, `rejected # no`},
		{"escaped", `"session\u005fended"`, `"reject\x65d"`},
	} {
		raw := []byte(head + claimed + session(c.session) + rejected(c.rejected) + session(c.session))
		whole, err := wholeHistory(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := sessionsAndRejections(whole)
		if len(want) != 2 {
			t.Fatalf("%s: the whole decode reads %v", c.name, want)
		}
		got, err := spendHistory(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(sessionsAndRejections(got), want) {
			t.Errorf("%s: spendHistory reads\n%v\nwant\n%v\nfrom\n%s", c.name, sessionsAndRejections(got), want, raw)
		}
	}
}

// TestMayHoldSessions: the spend cache takes a task file without the
// words session_ended for one with no session, unread. Every spelling by
// which the decoder reads a session_ended event (quoted, tagged, escaped,
// a double-quoted string broken across lines) must be one the check lets
// through to be read.
func TestMayHoldSessions(t *testing.T) {
	head := "id: t\nstatus: MERGED\nhistory:\n"
	for _, spelled := range []string{
		`session_ended`, `"session_ended"`, `'session_ended'`, `!!str session_ended`,
		`"session\u005fended"`, `"session\x5fended"`, `"sessio\u006e_ended"`, "\"session_\\\n      ended\"",
	} {
		raw := []byte(head + "  - time: \"2026-01-17T10:02:00Z\"\n    event: " + spelled + "\n    agent: coder-1\n    usage:\n      model: m\n      input_tokens: 100\n")
		whole, err := wholeHistory(raw)
		if err != nil {
			t.Fatalf("%s: %v", spelled, err)
		}
		if len(whole) != 1 || whole[0].Event != SessionEventTag {
			t.Fatalf("%s: the decoder reads %+v, want one session_ended", spelled, whole)
		}
		if !mayHoldSessions(raw) {
			t.Errorf("%s: the decoder reads a session, and the check passes the file over", spelled)
		}
	}
	if mayHoldSessions([]byte(head + "  - time: \"2026-01-17T10:02:00Z\"\n    event: claimed\n")) {
		t.Errorf("a file with no session and no escape is read")
	}
}
