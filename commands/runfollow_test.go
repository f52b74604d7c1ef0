package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/transcript"
)

// TestFollowAgentsToTheEnd: run --follow shows a session started after it
// began, step by step, and what the log holds when the team stops, the
// session's end record among it, even when that was written while the
// follower waited for more.
func TestFollowAgentsToTheEnd(t *testing.T) {
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "coder-1")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A session of an earlier run: not followed.
	at := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	old := filepath.Join(agentDir, "20260117T095900-001-a.jsonl")
	if err := os.WriteFile(old, []byte(`{"t":"2026-01-17T09:59:00Z","header":{"agent":"coder-1","label":"a","format":"text"}}`+"\n"+`{"t":"2026-01-17T09:59:01Z","out":"old"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []agent.Event
	stop := followAgents([]string{"coder-1"}, dir, func(ev agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	f, err := os.Create(filepath.Join(agentDir, "20260117T100000-002-a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(r transcript.Record) {
		b, _ := json.Marshal(r)
		if _, err := f.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	write(transcript.Record{T: at, Header: &transcript.Header{Agent: "coder-1", Task: "a", Label: "a", Session: 2, Format: transcript.FormatText, Started: at}})
	write(transcript.Record{T: at, Out: "working"})
	for count() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	// The follower has read all there was and waits: the end comes, and
	// the team stops at once.
	write(transcript.Record{T: at.Add(time.Second), End: &transcript.End{Outcome: "done"}})
	stop()
	var lines []string
	for _, ev := range got {
		if ev.Agent != "coder-1" || ev.Kind != eventStep || ev.Task != "a" || ev.Step == nil {
			t.Errorf("event %+v", ev)
		}
		lines = append(lines, ev.Msg)
	}
	if len(lines) != 2 || lines[0] != "output working" || lines[1] != "end    done" {
		t.Errorf("followed %q, want the session's output and its end, each once", lines)
	}
}
