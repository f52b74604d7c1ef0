package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// toolTextMax is what an agent CLI keeps of a tool's result: Claude Code
// keeps 50,000 characters in the conversation and refuses a result past
// 25,000 tokens.
const toolTextMax = 50_000

// floodBoard is the attack: every agent that writes text another reads
// writes as much as a task file holds (1 MiB). The planner's task c has a
// 200 KB description; coder-1's checkpoint on a
// has a 100 KB intent, 2,000 assumptions and 1,500 files; the reviewer,
// through its own tool, rejects a with a 120 KB reason and 250 KB of
// feedback, with a terminal escape in both; a person leaves 60 notes of
// 5 KB for a.
func floodBoard(t *testing.T) *board {
	t.Helper()
	b := newBoard(t)
	ctx := context.Background()
	big := func(n int, word string) string { return strings.Repeat(word+" ", n/(len(word)+1)) }
	tb := task("c")
	tb.Description = big(200_000, "flood")
	if _, err := b.human.AddTask(ctx, ops.AddTaskRequest{Task: tb}); err != nil {
		t.Fatal(err)
	}
	b.commitWork(t, "a", "a.txt")
	cp := contracts.Checkpoint{Intent: big(100_000, "intent"), Validation: "cat a.txt", FilesToModify: contracts.StringList{"a.txt"}}
	for i := range 2000 {
		cp.Assumptions = append(cp.Assumptions, fmt.Sprintf("assumption %d holds for the whole run", i))
	}
	for i := range 1500 {
		cp.FilesToModify = append(cp.FilesToModify, fmt.Sprintf("src/pkg%d/file.go", i))
	}
	if _, err := b.human.As("coder-1", 0).Checkpoint(ctx, ops.CheckpointRequest{Task: "a", Checkpoint: cp}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.human.As("coder-1", 0).Submit(ctx, ops.SubmitRequest{Task: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.human.As("code-reviewer-1", 0).Review(ctx, ops.ReviewRequest{Task: "a"}); err != nil {
		t.Fatal(err)
	}
	args, err := json.Marshal(map[string]string{"verdict": "reject",
		"reason": "\x1b]0;owned\x07" + big(120_000, "reason"), "feedback": big(250_000, "feedback") + "\x1b[2J"})
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, b.reviewer(t, "a"), "verdict", string(args)); res.IsError {
		t.Fatalf("the flooding verdict was refused: %.200s", text(res))
	}
	// The notes a session of a reads: 60 of 5 KB.
	for i := range 60 {
		if _, err := b.human.Note(ctx, ops.NoteRequest{Message: big(5000, fmt.Sprintf("note%d", i)), For: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	if tk := b.task(t, "a"); len(tk.RejectionFeedback) < 200_000 {
		t.Fatalf("the attack did not land: feedback %d bytes", len(tk.RejectionFeedback))
	}
	return b
}

// No text on the board reaches an agent through a tool past what its CLI
// keeps: every result fits, what was cut says so, and the fields an agent
// acts on (ids, statuses, commits) come whole.
func TestToolResultsFitWhateverTheBoardHolds(t *testing.T) {
	b := floodBoard(t)
	coder, reviewer, planner := b.coder(t), b.reviewer(t, ""), b.planner(t)
	for _, c := range []struct {
		who        string
		cs         *mcp.ClientSession
		tool, args string
		whole      []string // must be in the result as they are
	}{
		{"coder", coder, "show_task", `{"task":"a"}`, []string{`"id":"a"`, `"status":"REJECTED"`, `"assigned_to":"coder-1"`}},
		{"reviewer", reviewer, "show_task", `{"task":"a"}`, []string{`"id":"a"`, `"status":"REJECTED"`}},
		{"planner", planner, "show_task", `{"task":"c"}`, []string{`"id":"c"`, `"status":"UNCLAIMED"`}},
		{"coder", coder, "log_task", `{"task":"a","max":200,"patch":true}`, []string{`"op":"verdict"`}},
		{"planner", planner, "status", `{"limit":100}`, []string{`"id":"c"`, `"id":"a"`}},
	} {
		name := c.who + " " + c.tool + " " + c.args
		res := call(t, c.cs, c.tool, c.args)
		if res.IsError {
			t.Errorf("%s refused: %.300s", name, text(res))
			continue
		}
		got := text(res)
		if len(got) > toolTextMax {
			t.Errorf("%s: %d characters, over the %d an agent CLI keeps", name, len(got), toolTextMax)
		}
		if len(res.Content) != 2 {
			t.Errorf("%s: %d content blocks, want the result and a note of what was cut", name, len(res.Content))
			continue
		}
		data := res.Content[0].(*mcp.TextContent).Text
		var v any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Errorf("%s: the cut result is not JSON: %v", name, err)
		}
		// The agent CLIs give the model the structured content when there
		// is one (Claude Code, codex): it says what was cut itself.
		sc := mustJSON(t, res.StructuredContent)
		var head struct {
			Cut string `json:"cut"`
		}
		if err := json.Unmarshal(sc, &head); err != nil || len(sc) > toolTextMax || !strings.HasPrefix(head.Cut, "This result was cut to fit") {
			t.Errorf("%s: structured content of %d bytes, cut %q (%v)", name, len(sc), head.Cut, err)
		}
		note := res.Content[1].(*mcp.TextContent).Text
		if !strings.Contains(note, "cut") || !strings.Contains(note, "git liza") {
			t.Errorf("%s: note %q does not say what was cut and where to read it whole", name, note)
		}
		for _, w := range c.whole {
			if !strings.Contains(compact(data), w) {
				t.Errorf("%s: lacks %s", name, w)
			}
		}
		if strings.ContainsRune(got, 0x1b) {
			t.Errorf("%s: a terminal escape reached the result", name)
		}
	}
	// A resource too: the notes of a session on a.
	res, err := coder.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "liza://task/a/notes"})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents[0]; len(c.Text) > toolTextMax || !json.Valid([]byte(c.Text)) || !strings.Contains(fmt.Sprint(c.Meta["cut"]), "cut") {
		t.Errorf("notes: %d characters (valid JSON %v), _meta %v", len(c.Text), json.Valid([]byte(c.Text)), c.Meta)
	}
	// A result that fits is as it was: one block, no note.
	if res := call(t, coder, "show_task", `{"task":"b"}`); len(res.Content) != 1 || strings.Contains(text(res), "cut") {
		t.Errorf("show_task b: %d blocks: %.300s", len(res.Content), text(res))
	}
}

// compact is JSON text without the spaces between its tokens.
func compact(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
