package mcpserver_test

import (
	"context"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/mcpserver"
	"github.com/liza-dev/git-liza/ops"
)

// human is the operator's session (git liza mcp --human).
func (b *board) humanSession(t *testing.T) *mcp.ClientSession {
	return b.session(t, map[string]string{"LIZA_PROJECT_ROOT": b.root}, true)
}

// mode is the team's mode on the board.
func (b *board) mode(t *testing.T) string {
	t.Helper()
	if c := b.state(t).Control; c != nil && c.Mode != "" {
		return c.Mode
	}
	return contracts.ModeRunning
}

// The operator's list is its levers and everyone's reads: no coder's,
// reviewer's or planner-only tool.
func TestHumanToolList(t *testing.T) {
	b := newBoard(t)
	cs := b.humanSession(t)
	want := []string{"abort", "log_task", "note", "pause", "resume", "show_task", "status", "task_add", "task_edit", "unblock", "validate"}
	if names := tools(t, cs); !slices.Equal(names, want) {
		t.Fatalf("human tools = %v, want %v", names, want)
	}
}

// Each of the operator's levers makes its change on the board.
func TestHumanTools(t *testing.T) {
	b := newBoard(t)
	cs := b.humanSession(t)

	var note mcpserver.NoteAddedOut
	must(t, cs, "note", `{"message":"keep a.txt short","for":"a"}`, &note)
	notes := b.state(t).HumanNotes
	if note.N != 1 || note.For != "a" || len(notes) != 1 || notes[0].Message != "keep a.txt short" || notes[0].For != "a" {
		t.Fatalf("note = %+v, board %+v", note, notes)
	}

	var mode ops.ModeResult
	must(t, cs, "pause", `{"reason":"lunch","stop_sessions":true}`, &mode)
	if mode.Mode != contracts.ModePaused || !mode.StopSessions || b.mode(t) != contracts.ModePaused || b.state(t).Control.Reason != "lunch" {
		t.Fatalf("pause = %+v, board %s", mode, b.mode(t))
	}
	must(t, cs, "resume", `{}`, &mode)
	if mode.From != contracts.ModePaused || b.mode(t) != contracts.ModeRunning {
		t.Fatalf("resume = %+v, board %s", mode, b.mode(t))
	}
	must(t, cs, "abort", `{"reason":"wrong goal"}`, &mode)
	if b.mode(t) != contracts.ModeAborted {
		t.Fatalf("abort: board %s", b.mode(t))
	}
	must(t, cs, "resume", `{}`, nil)

	b.block(t)
	must(t, cs, "unblock", `{"task":"a"}`, nil)
	if a := b.task(t, "a"); a.Status != contracts.Unclaimed {
		t.Fatalf("a after unblock = %s", a.Status)
	}

	// task_add and task_edit take the planner's input.
	must(t, cs, "task_add", `{"id":"c","description":"do c","spec_ref":"specs/vision.md","done_when":"c.txt exists","scope":"IN: c.txt","depends_on":["a"]}`, nil)
	must(t, cs, "task_edit", `{"task":"c","description":"do c well"}`, nil)
	if c := b.task(t, "c"); c.Description != "do c well" || !slices.Equal(c.DependsOn, []string{"a"}) || c.Priority != 3 {
		t.Fatalf("c = %+v", c)
	}
}

// The operator's session refuses what is not the operator's, and writes
// nothing.
func TestHumanRefusals(t *testing.T) {
	b := newBoard(t)
	cs := b.humanSession(t)
	before := b.stateTip(t)
	refused(t, call(t, cs, "note", `{"message":"  "}`), contracts.CodeInvalid, "message")
	refused(t, call(t, cs, "note", `{"message":"x","for":"../a"}`), contracts.CodeInvalid, "names no task and no agent")
	refused(t, call(t, cs, "note", `{"message":"x","agent":"planner-1"}`), contracts.CodeInvalid, "agent")
	refused(t, call(t, cs, "status", `{"mine":true}`), contracts.CodeInvalid, "operator holds no task")
	for _, name := range []string{"finalize", "supersede", "abandon", "note_done", "discover_convert", "checkpoint", "verdict"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"task": "b"}})
		if err == nil && !res.IsError {
			t.Fatalf("the operator's session ran %s: %s", name, text(res))
		}
	}
	unchanged(t, b, before)
}

// The Claude Desktop configuration: the client starts `git liza mcp
// --human` with LIZA_PROJECT_ROOT in its env, from a directory that is not
// the repository. The server finds the board through the variable.
func TestHumanFromAnotherDirectory(t *testing.T) {
	b := newBoard(t)
	t.Chdir(t.TempDir())
	env := func(k string) string {
		if k == "LIZA_PROJECT_ROOT" {
			return b.root
		}
		return os.Getenv(k)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- mcpserver.Main(ctx, time.Now, []string{"--human"}, env, inR, outW, io.Discard) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-desktop-like", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	must(t, cs, "note", `{"message":"from the desktop"}`, nil)
	if notes := b.state(t).HumanNotes; len(notes) != 1 || notes[0].Message != "from the desktop" {
		t.Fatalf("notes = %+v", notes)
	}
	cs.Close()
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("the server exited %d", code)
	}
	cancel()
}
