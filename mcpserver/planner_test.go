package mcpserver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/mcpserver"
	"github.com/liza-dev/git-liza/ops"
)

// planner is the session of planner-1 (a planner has no task).
func (b *board) planner(t *testing.T) *mcp.ClientSession {
	return b.session(t, map[string]string{"LIZA_AGENT_ID": "planner-1", "LIZA_ROLE": "planner", "LIZA_PROJECT_ROOT": b.root}, false)
}

// must calls a tool that must succeed and decodes its result into out
// (nil: not decoded).
func must(t *testing.T, cs *mcp.ClientSession, name, args string, out any) {
	t.Helper()
	res := call(t, cs, name, args)
	if out == nil {
		out = new(any)
	}
	ok(t, res, out)
}

// unchanged checks that a refused call wrote nothing: refs/liza/state is
// where it was.
func unchanged(t *testing.T, b *board, before string) {
	t.Helper()
	if after := b.stateTip(t); after != before {
		t.Fatalf("a refused call moved refs/liza/state from %s to %s", before, after)
	}
}

// block puts task a (coder-1's) in BLOCKED.
func (b *board) block(t *testing.T) {
	t.Helper()
	if _, err := b.human.As("coder-1", 0).Block(context.Background(), ops.BlockRequest{Task: "a", Reason: "the spec says nothing about b.txt",
		Questions: []string{"may a.txt name b.txt?"}}); err != nil {
		t.Fatal(err)
	}
}

// Each of the planner's tools makes its change on the board, as the git
// liza command of the same name makes it.
func TestPlannerTools(t *testing.T) {
	b := newBoard(t)
	cs := b.planner(t)
	ctx := context.Background()

	// task_add: the seed's fields, a draft, a dependency.
	var out mcpserver.TaskOut
	must(t, cs, "task_add", `{"id":"c","description":"do c","spec_ref":"specs/vision.md#c","done_when":"c.txt exists","scope":"IN: c.txt",
		"priority":2,"depends_on":["b"],"paths":["c.txt"],"max_files":3,"max_loc":40}`, &out)
	if out.Task != "c" || out.Status != "UNCLAIMED" || out.Verb != "added" || len(out.Commit) != 40 || out.Commit != b.stateTip(t) {
		t.Fatalf("task_add = %+v", out)
	}
	c := b.task(t, "c")
	if c.Priority != 2 || !slices.Equal(c.DependsOn, []string{"b"}) || !slices.Equal(c.Paths, []string{"c.txt"}) || c.MaxFiles != 3 || c.MaxLOC != 40 ||
		c.SpecRef != "specs/vision.md#c" || c.History[0].Agent != "planner-1" {
		t.Fatalf("task c on the board = %+v", c)
	}
	must(t, cs, "task_add", `{"id":"d","description":"do d","draft":true}`, &out)
	if d := b.task(t, "d"); d.Status != contracts.Draft || d.Priority != 3 {
		t.Fatalf("draft d = %s priority %d", d.Status, d.Priority)
	}

	// task_edit: only the fields given; an empty list clears one.
	must(t, cs, "task_edit", `{"task":"d","spec_ref":"specs/vision.md","done_when":"d.txt exists","scope":"IN: d.txt","priority":1}`, &out)
	if d := b.task(t, "d"); d.Description != "do d" || d.DoneWhen != "d.txt exists" || d.Priority != 1 || d.Status != contracts.Draft {
		t.Fatalf("edited d = %+v", d)
	}
	must(t, cs, "task_edit", `{"task":"c","depends_on":[]}`, nil)
	if c := b.task(t, "c"); len(c.DependsOn) != 0 || c.MaxLOC != 40 {
		t.Fatalf("c after clearing depends_on = %v, max_loc %d", c.DependsOn, c.MaxLOC)
	}

	// finalize: DRAFT -> UNCLAIMED.
	must(t, cs, "finalize", `{"task":"d"}`, &out)
	if out.Status != "UNCLAIMED" || b.task(t, "d").Status != contracts.Unclaimed {
		t.Fatalf("finalize = %+v", out)
	}

	// supersede: b by c and d.
	must(t, cs, "supersede", `{"task":"b","by":["c","d"],"reason":"b was two tasks"}`, &out)
	if tb := b.task(t, "b"); tb.Status != contracts.Superseded || !slices.Equal(tb.SupersededBy, []string{"c", "d"}) {
		t.Fatalf("superseded b = %s by %v", tb.Status, tb.SupersededBy)
	}

	// abandon.
	must(t, cs, "abandon", `{"task":"d","reason":"c covers it"}`, &out)
	if b.task(t, "d").Status != contracts.Abandoned {
		t.Fatal("d is not ABANDONED")
	}

	// unblock: coder-1's a, BLOCKED, back to UNCLAIMED.
	b.block(t)
	must(t, cs, "unblock", `{"task":"a"}`, &out)
	if b.task(t, "a").Status != contracts.Unclaimed {
		t.Fatal("a is not UNCLAIMED after unblock")
	}

	// note_done: the operator's note 1 processed by planner-1.
	if _, err := b.human.Note(ctx, ops.NoteRequest{Message: "split b"}); err != nil {
		t.Fatal(err)
	}
	var done mcpserver.NoteDoneOut
	must(t, cs, "note_done", `{"notes":[1]}`, &done)
	if !slices.Equal(done.Processed, []int{1}) || done.Agent != "planner-1" {
		t.Fatalf("note_done = %+v", done)
	}
	if p := b.state(t).Agents["planner-1"]; p == nil || !slices.Equal(p.NotesProcessed, []int{1}) {
		t.Fatalf("planner-1 on the board = %+v", p)
	}

	// discover_convert: coder-1's discovery becomes task c.
	if _, err := b.human.As("coder-1", 0).Discover(ctx, ops.DiscoverRequest{Description: "c needs a test", Task: "a"}); err != nil {
		t.Fatal(err)
	}
	var conv mcpserver.DiscoverConvertOut
	must(t, cs, "discover_convert", `{"discovery":1,"task":"c"}`, &conv)
	if conv.Discovery != "disc-1" || conv.Task != "c" {
		t.Fatalf("discover_convert = %+v", conv)
	}
	if d := b.state(t).Discovered; len(d) != 1 || d[0].ConvertedToTask != "c" {
		t.Fatalf("discovered = %+v", d[0])
	}

	// The board is valid after all of it.
	var v mcpserver.ValidateOut
	must(t, cs, "validate", `{"history":true}`, &v)
	if !v.Valid || v.States < 10 {
		t.Fatalf("validate = %+v", v)
	}
}

// What a planner may not do is refused with its class, and the board is
// unchanged.
func TestPlannerRefusals(t *testing.T) {
	b := newBoard(t)
	cs := b.planner(t)
	before := b.stateTip(t)
	add := `"description":"x","spec_ref":"specs/vision.md","done_when":"y","scope":"z"`

	refused(t, call(t, cs, "task_add", `{"id":"../x",`+add+`}`), contracts.CodeInvalid, "../x")
	refused(t, call(t, cs, "task_add", `{"id":"c","depends_on":["nope"],`+add+`}`), contracts.CodeInvalid, "depends on unknown task nope")
	refused(t, call(t, cs, "task_add", `{"id":"c","description":"x","spec_ref":"../../etc/passwd","done_when":"y","scope":"z"}`), contracts.CodeInvalid, "inside the repository")
	refused(t, call(t, cs, "task_add", `{"id":"c","priority":9,`+add+`}`), contracts.CodeInvalid, "priority 9")
	refused(t, call(t, cs, "task_edit", `{"task":"a","scope":"more"}`), contracts.CodeInvalid, "a")
	refused(t, call(t, cs, "finalize", `{"task":"a"}`), contracts.CodeInvalid, "a")
	refused(t, call(t, cs, "abandon", `{"task":"b"}`), contracts.CodeInvalid, "reason")
	refused(t, call(t, cs, "supersede", `{"task":"b","by":["nope"],"reason":"r"}`), contracts.CodeInvalid, "nope")
	refused(t, call(t, cs, "unblock", `{"task":"b"}`), contracts.CodeInvalid, "not BLOCKED")
	refused(t, call(t, cs, "note_done", `{"notes":[0]}`), contracts.CodeInvalid, "start at 1")
	refused(t, call(t, cs, "discover_convert", `{"discovery":7,"task":"b"}`), contracts.CodeInvalid, "no discovery 7")
	// No tool takes an agent id: the planner cannot act as someone else.
	refused(t, call(t, cs, "unblock", `{"task":"a","agent":"coder-1"}`), contracts.CodeInvalid, "agent")
	refused(t, call(t, cs, "task_add", `{"id":"c","agent":"human",`+add+`}`), contracts.CodeInvalid, "agent")
	// A coder's tool is not offered to the planner: calling it is an
	// unknown tool.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "checkpoint", Arguments: map[string]any{"task": "a", "intent": "x", "validation": "y", "files_to_modify": []string{"a.txt"}}})
	if err == nil && !res.IsError {
		t.Fatalf("a planner's checkpoint was accepted: %s", text(res))
	}
	unchanged(t, b, before)

	names := tools(t, cs)
	want := []string{"abandon", "discover_convert", "finalize", "log_task", "note_done", "show_task", "status", "supersede", "task_add", "task_edit", "unblock", "validate"}
	if !slices.Equal(names, want) {
		t.Fatalf("planner tools = %v, want %v", names, want)
	}
}

// A planner's unblock is recorded as the planner's: the session's identity,
// never one the call names.
func TestPlannerUnblockIsItsOwn(t *testing.T) {
	b := newBoard(t)
	b.block(t)
	cs := b.planner(t)
	must(t, cs, "unblock", `{"task":"a"}`, nil)
	a := b.task(t, "a")
	if last := a.History[len(a.History)-1]; last.Agent != "planner-1" {
		t.Fatalf("unblock recorded as %q", last.Agent)
	}
	if author := git(t, b.root, "log", "-1", "--format=%s", "refs/liza/state"); !strings.Contains(author, "planner-1") {
		t.Fatalf("state commit subject %q does not name planner-1", author)
	}
}

// task_add and task_edit take a task's docs (seed 002: at most two more
// files to read), checked as the command checks them: a third, a file not
// in the repository, a path outside it or into .git, an empty name are
// refused and write nothing.
func TestPlannerDocs(t *testing.T) {
	b := newBoard(t)
	cs := b.planner(t)
	add := `"description":"x","spec_ref":"specs/vision.md","done_when":"y","scope":"z"`

	must(t, cs, "task_add", `{"id":"c",`+add+`,"docs":["specs/vision.md"]}`, nil)
	if c := b.task(t, "c"); !slices.Equal(c.Docs, []string{"specs/vision.md"}) {
		t.Fatalf("docs of c = %q", c.Docs)
	}
	before := b.stateTip(t)
	refused(t, call(t, cs, "task_add", `{"id":"d",`+add+`,"docs":["specs/vision.md","a.md","b.md"]}`), contracts.CodeInvalid,
		"task d names 3 documents: at most 2 (seed 002's context diet)")
	refused(t, call(t, cs, "task_add", `{"id":"d",`+add+`,"docs":["specs/missing.md"]}`), contracts.CodeInvalid,
		"doc specs/missing.md is not in HEAD or on the integration branch: commit it first")
	refused(t, call(t, cs, "task_add", `{"id":"d",`+add+`,"docs":["../../etc/passwd"]}`), contracts.CodeInvalid, "must be a path inside the repository")
	refused(t, call(t, cs, "task_add", `{"id":"d",`+add+`,"docs":[".GIT/config"]}`), contracts.CodeInvalid, "reaches into .git")
	refused(t, call(t, cs, "task_add", `{"id":"d",`+add+`,"docs":[""]}`), contracts.CodeInvalid, "empty document name")
	refused(t, call(t, cs, "task_edit", `{"task":"c","docs":["specs/missing.md"]}`), contracts.CodeInvalid, "doc specs/missing.md is not in HEAD")
	refused(t, call(t, cs, "task_edit", `{"task":"c","docs":["a\nb"]}`), contracts.CodeInvalid, "control character")
	unchanged(t, b, before)

	must(t, cs, "task_edit", `{"task":"c","docs":[]}`, nil)
	if c := b.task(t, "c"); len(c.Docs) != 0 {
		t.Fatalf("docs of c after [] = %q", c.Docs)
	}
	b.verified(t)
}
