package transcript

import (
	"testing"
	"time"
)

// A session that does nothing but retry a failure of its environment
// (codex 0.169.0 against an endpoint that does not answer waits for the
// network for ever) is told once it has retried for the whole wait, and
// not before; progress in between starts the wait again.
func TestStallOnEndlessRetries(t *testing.T) {
	retries := steps(t, FormatCodex, "codex-refused")
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	s := NewStall(FormatCodex, 3*time.Minute)
	for _, st := range retries {
		s.Step(st, t0)
	}
	if f := s.Check(t0.Add(2 * time.Minute)); f != nil {
		t.Fatalf("stalled after 2 minutes of a 3-minute wait: %+v", f)
	}
	f := s.Check(t0.Add(3*time.Minute + time.Second))
	if f == nil || f.Kind != FailUnreachable || f.Fix == "" {
		t.Fatalf("not stalled after the wait: %+v", f)
	}

	// The model's text, a tool call: the session is working.
	s = NewStall(FormatCodex, 3*time.Minute)
	for _, st := range retries {
		s.Step(st, t0)
	}
	s.Step(Step{Kind: KindText, Text: "back"}, t0.Add(2*time.Minute))
	if f := s.Check(t0.Add(4 * time.Minute)); f != nil {
		t.Fatalf("stalled though the model answered: %+v", f)
	}
	s.Step(retries[len(retries)-1], t0.Add(5*time.Minute))
	if f := s.Check(t0.Add(7 * time.Minute)); f != nil {
		t.Fatalf("stalled 2 minutes after a new retry: %+v", f)
	}
	if f := s.Check(t0.Add(8*time.Minute + time.Second)); f == nil {
		t.Fatal("not stalled 3 minutes after the retries started again")
	}
}

// What the model or a tool writes is never read as a retry: an agent
// cannot stop its own team by printing a CLI's error message.
func TestStallIgnoresAgentText(t *testing.T) {
	t0 := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	s := NewStall(FormatCodex, time.Minute)
	msg := "Reconnecting... waiting for network (Connection failed: error sending request)"
	s.Step(Step{Kind: KindText, Text: msg}, t0)
	s.Step(Step{Kind: KindResult, Tool: "shell", Text: msg, Error: true}, t0)
	s.Step(Step{Kind: KindStderr, Text: msg}, t0)
	if f := s.Check(t0.Add(time.Hour)); f != nil {
		t.Fatalf("stalled on the agent's own text: %+v", f)
	}
	// A plain command's output is never classified.
	s = NewStall(FormatText, time.Minute)
	s.Step(Step{Kind: KindError, Text: msg, Error: true}, t0)
	if f := s.Check(t0.Add(time.Hour)); f != nil {
		t.Fatalf("a text session stalled: %+v", f)
	}
}
