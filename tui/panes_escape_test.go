package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/transcript"
)

// Whatever an agent wrote (a task title, a reason, a question, a
// checkpoint, a file name in the diff, a line of its session, a dependency
// it named, a banner's reason), every pane of the board shows it escaped:
// the list, the detail, the tail of the session, the status line, the
// banner.
func TestEveryPaneEscapes(t *testing.T) {
	const evil = "\x1b]0;pwned\a\x1b[2J\u202e\x9b31m"
	b := teamBoard(3)
	for i := range b.Tasks {
		if b.Tasks[i].ID == "c-1" {
			b.Tasks[i].Description = "PUT " + evil // w-1 waits on it
		}
		if b.Tasks[i].ID == "b-1" {
			b.Tasks[i].Reason = "silent " + evil
		}
	}
	b.Mode = contracts.ModePaused
	b.Switches = []contracts.Switch{{Mode: contracts.ModePaused, Source: "state", By: "Ada" + evil, Reason: evil}}
	m := testModel(b, 200, 60)
	m.message, m.failed = "refused: "+evil, true
	check := func(pane, out string) {
		t.Helper()
		plain := sgr.ReplaceAllString(out, "")
		if r, i := rawRune(plain); i >= 0 {
			t.Errorf("%s: raw %U at byte %d:\n%q", pane, r, i, plain)
		}
		if !strings.Contains(plain, `\x1b]0;pwned\x07\x1b[2J\u202e\x9b31m`) {
			t.Errorf("%s does not spell the escapes out:\n%s", pane, plain)
		}
	}
	check("the board", m.render())
	if !strings.Contains(m.render(), `waits on PUT \x1b]0;pwned`) {
		t.Errorf("waits on is not escaped:\n%s", m.render())
	}

	// The detail of a task, and the tail of its session.
	dir := t.TempDir()
	log := filepath.Join(dir, "coder-1", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	w := transcript.NewWriter(f, transcript.Header{Agent: "coder-1", Task: "b-1", Label: "b-1" + evil, CLI: "text", Format: "text", Started: testNow}, "text")
	w.Stdout().Write([]byte("I print " + evil + "\n"))
	w.End(transcript.End{Outcome: "done"})
	f.Close()
	sessions, err := transcript.List(dir)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("the session log: %v, %d sessions", err, len(sessions))
	}
	m.ctx = context.Background()
	press(m, "enter")
	m.detail = &detail{id: "b-1", task: &contracts.Task{ID: "b-1", Status: contracts.Blocked, Description: "title " + evil,
		BlockedReason: evil, BlockedQuestions: []string{"q " + evil}, Worktree: "/wt/" + evil,
		History: []*contracts.HistoryEvent{{Time: "2026-01-17T10:00:00Z", Event: "blocked", Agent: "coder-1", Reason: evil,
			Checkpoint: &contracts.Checkpoint{Intent: evil, Validation: evil, FilesToModify: []string{evil}}}}},
		diff: []string{" " + evil + " | 2 +-"}, sessions: sessions, session: &sessions[0]}
	m.startTail(sessions[0])
	defer m.stopTail()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, state := m.tail.last(10); state == "ended" || time.Now().After(deadline) {
			break
		}
	}
	out := m.render()
	check("the detail", out)
	if !strings.Contains(out, `I print \x1b]0;pwned`) {
		t.Errorf("the session's line is not in the tail:\n%s", out)
	}
	for _, want := range []string{"question: q ", "intent: ", "files: ", "History", "Sessions 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the detail has no %q:\n%s", want, out)
		}
	}

	// A paste into the note prompt keeps its control characters out.
	press(m, "n")
	m.Update(tea.PasteMsg{Content: evil + "ok"})
	if got := string(m.prompt.text); got != "]0;pwned[2J\u202e31mok" {
		t.Errorf("pasted %q", got)
	}
	if plain := sgr.ReplaceAllString(m.render(), ""); func() bool { _, i := rawRune(plain); return i >= 0 }() {
		t.Errorf("the prompt writes a raw character:\n%q", plain)
	}
}
