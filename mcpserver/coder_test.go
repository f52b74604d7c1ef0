package mcpserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/mcpserver"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// stateTip is refs/liza/state: a refused call leaves it where it was.
func (b *board) stateTip(t *testing.T) string {
	t.Helper()
	return git(t, b.root, "rev-parse", "refs/liza/state")
}

// verified replays every state commit of the board, as a guarded remote
// verifies a push: what the tools wrote is what their operations make.
func (b *board) verified(t *testing.T) {
	t.Helper()
	v := b.human.Verifier()
	for _, id := range strings.Fields(git(t, b.root, "rev-list", "--reverse", "refs/liza/state")) {
		h, _ := refstore.ParseHash(id)
		c, err := b.human.Repo.ReadCommit(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Commit(context.Background(), c); err != nil {
			t.Fatalf("state commit %s (%s) does not verify: %v", id, strings.SplitN(c.Message, "\n", 2)[0], err)
		}
	}
}

// worktree is the checkout of task id that the claim made.
func (b *board) worktree(id string) string { return filepath.Join(b.root, ".worktrees", id) }

// commitWork commits file in task id's worktree, as its coder does.
func (b *board) commitWork(t *testing.T, id, file string) string {
	t.Helper()
	dir := b.worktree(id)
	write(t, filepath.Join(dir, file), "done\n")
	git(t, dir, "add", file)
	git(t, dir, "commit", "-q", "-m", "add "+file)
	return git(t, dir, "rev-parse", "HEAD")
}

func (b *board) task(t *testing.T, id string) *contracts.Task {
	t.Helper()
	tk, err := b.human.Task(context.Background(), "", id)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func (b *board) state(t *testing.T) *contracts.State {
	t.Helper()
	st, err := b.human.State(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// ok checks that res succeeded and decodes its structured result into out.
func ok(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("refused: %s", text(res))
	}
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), out); err != nil {
		t.Fatal(err)
	}
}

// oneLine checks that what the model reads holds no line break and no
// control character a terminal would act on.
func oneLine(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	got := text(res)
	if strings.ContainsAny(got, "\n\r\x1b\x07\x9b") {
		t.Fatalf("result text is not one printable line: %q", got)
	}
}

// A coder's list has its own tools and everyone's, and no other role's.
func TestCoderToolList(t *testing.T) {
	b := newBoard(t)
	names := tools(t, b.coder(t))
	for _, want := range []string{"checkpoint", "submit", "block", "handoff", "anomaly", "discover", "status"} {
		if !slices.Contains(names, want) {
			t.Errorf("coder tools %v lack %s", names, want)
		}
	}
	for _, not := range []string{"verdict", "task_add", "task_edit", "finalize", "supersede", "abandon", "unblock", "note_done", "discover_convert", "note", "pause"} {
		if slices.Contains(names, not) {
			t.Errorf("coder tools %v have %s", names, not)
		}
	}
}

// submit refuses a task with no pre-execution checkpoint in its current
// iteration and a task with nothing committed, then submits the commit it
// names on the task branch: the task awaits review at it, and the state
// commit is the one the command line's ops call writes on a twin board.
func TestCoderSubmit(t *testing.T) {
	// Fixed dates: the twin board's commits have the same ids.
	t.Setenv("GIT_AUTHOR_DATE", "2026-01-17T10:00:00Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-17T10:00:00Z")
	b := newBoard(t)
	cs := b.coder(t)

	// No checkpoint yet: refused, naming the command that records one.
	before := b.stateTip(t)
	refused(t, call(t, cs, "submit", `{}`), contracts.CodeInvalid, "task a has no pre-execution checkpoint in iteration 1: record one first")
	if b.stateTip(t) != before {
		t.Fatal("a refused submit moved refs/liza/state")
	}
	b.checkpoint(t, "a")

	// Nothing committed: the tip is the base, and nothing changes.
	before = b.stateTip(t)
	refused(t, call(t, cs, "submit", `{}`), contracts.CodeInvalid, "is the base commit: there is nothing to review")
	if b.stateTip(t) != before {
		t.Fatal("a refused submit moved refs/liza/state")
	}

	// Committed twice: submitted at the first commit, as named.
	tip := b.commitWork(t, "a", "a.txt")
	b.commitWork(t, "a", "a2.txt")
	var out mcpserver.SubmitOut
	ok(t, call(t, cs, "submit", `{"task":"a","commit":"`+tip+`"}`), &out)
	tk := b.task(t, "a")
	if out.Task != "a" || out.Status != "READY_FOR_REVIEW" || out.ReviewCommit != tip || out.BaseCommit != tk.BaseCommit ||
		out.DiffRange != tk.BaseCommit+".."+tip || out.Commit != b.stateTip(t) {
		t.Fatalf("submit = %+v; task base %s, tip %s", out, tk.BaseCommit, tip)
	}
	if tk.Status != contracts.ReadyForReview || tk.ReviewCommit != tip {
		t.Fatalf("task after submit: %s at %s", tk.Status, tk.ReviewCommit)
	}

	// The same operation through the command line's call (commands/submit.go).
	twin := newBoard(t)
	twin.checkpoint(t, "a")
	twin.commitWork(t, "a", "a.txt")
	twin.commitWork(t, "a", "a2.txt")
	if _, err := twin.human.As("coder-1", 0).Submit(context.Background(), ops.SubmitRequest{Task: "a", Rev: tip}); err != nil {
		t.Fatal(err)
	}
	mine, theirs := git(t, b.root, "log", "-1", "--format=%B", "refs/liza/state"), git(t, twin.root, "log", "-1", "--format=%B", "refs/liza/state")
	if mine != theirs || !strings.Contains(mine, "Liza-Op: submit\n") {
		t.Fatalf("the tool's state commit says\n%s\nthe command's says\n%s", mine, theirs)
	}
	b.verified(t)
}

// block records the seed's blocking fields, and refuses 4 questions.
func TestCoderBlock(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	before := b.stateTip(t)
	refused(t, call(t, cs, "block", `{"blocked_reason":"the spec says nothing of retries","blocked_questions":["a?","b?","c?","d?"]}`),
		contracts.CodeInvalid, "1 to 3")
	refused(t, call(t, cs, "block", `{"blocked_reason":"x"}`), contracts.CodeInvalid, "blocked_questions")
	if b.stateTip(t) != before {
		t.Fatal("a refused block moved refs/liza/state")
	}
	var out mcpserver.TaskOut
	args := `{"blocked_reason":"the spec says nothing of retries","blocked_questions":["retry POST?","how many times?"],"attempted":["read specs/vision.md"],"request_id":"blk-1"}`
	ok(t, call(t, cs, "block", args), &out)
	tk := b.task(t, "a")
	// The same call again, as a client retries after a lost answer: the
	// first result, nothing written.
	after := b.stateTip(t)
	var again mcpserver.TaskOut
	ok(t, call(t, cs, "block", args), &again)
	if !again.Replayed || again.Commit != after || b.stateTip(t) != after {
		t.Fatalf("block replayed = %+v; tip %s, was %s", again, b.stateTip(t), after)
	}
	b.verified(t)
	if out.Status != "BLOCKED" || tk.Status != contracts.Blocked || tk.BlockedReason != "the spec says nothing of retries" ||
		!slices.Equal(tk.BlockedQuestions, []string{"retry POST?", "how many times?"}) || !slices.Equal(tk.Attempted, []string{"read specs/vision.md"}) {
		t.Fatalf("block = %+v; task %s %q %v %v", out, tk.Status, tk.BlockedReason, tk.BlockedQuestions, tk.Attempted)
	}
}

// handoff leaves the task CLAIMED with its handoff pending.
func TestCoderHandoff(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	refused(t, call(t, cs, "handoff", `{"summary":"half done"}`), contracts.CodeInvalid, "next_action")
	var out mcpserver.TaskOut
	ok(t, call(t, cs, "handoff", `{"summary":"half done","next_action":"write the tests"}`), &out)
	st := b.state(t)
	h := st.Handoff["a"]
	if out.Status != "CLAIMED" || !b.task(t, "a").HandoffPending || h == nil || h.Summary != "half done" || h.NextAction != "write the tests" || h.Agent != "coder-1" {
		t.Fatalf("handoff = %+v; handoff on the board %+v", out, h)
	}
	b.verified(t)
}

// anomaly logs on the session's task, with typed details, and holds the
// type to its required keys.
func TestCoderAnomaly(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	before := b.stateTip(t)
	refused(t, call(t, cs, "anomaly", `{"type":"retry_loop","details":{"count":"3"}}`), contracts.CodeInvalid, "error_pattern")
	refused(t, call(t, cs, "anomaly", `{"type":"scope_deviation","details":{"x":"y"}}`), contracts.CodeInvalid, "coder may not log scope_deviation anomalies")
	// Details are strings: a number is refused by the schema, and says so.
	refused(t, call(t, cs, "anomaly", `{"type":"retry_loop","details":{"count":3,"error_pattern":"timeout"}}`), contracts.CodeInvalid, `has type "integer", want "string"`)
	if b.stateTip(t) != before {
		t.Fatal("a refused anomaly moved refs/liza/state")
	}
	var out mcpserver.EntryOut
	ok(t, call(t, cs, "anomaly", `{"type":"retry_loop","details":{"count":"3","error_pattern":"timeout"}}`), &out)
	st := b.state(t)
	if out.ID != "anomaly-1" || out.N != 1 || out.Task != "a" || out.By != "coder-1" || len(st.Anomalies) != 1 {
		t.Fatalf("anomaly = %+v; board %d anomalies", out, len(st.Anomalies))
	}
	an := st.Anomalies[0]
	if an.TaskID != "a" || an.Type != "retry_loop" || an.Details["count"] != 3 || an.Details["error_pattern"] != "timeout" {
		t.Fatalf("anomaly on the board = %+v (count %T)", an, an.Details["count"])
	}
	b.verified(t)
}

// discover logs during the session's task.
func TestCoderDiscover(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	refused(t, call(t, cs, "discover", `{"description":"x","severity":"dire"}`), contracts.CodeInvalid, "severity")
	var out mcpserver.EntryOut
	ok(t, call(t, cs, "discover", `{"description":"the client ignores timeouts","severity":"high","urgency":"immediate","recommendation":"a task for it"}`), &out)
	st := b.state(t)
	if out.ID != "disc-1" || out.Task != "a" || out.Severity != "high" || out.Urgency != "immediate" || len(st.Discovered) != 1 {
		t.Fatalf("discover = %+v; board %d discoveries", out, len(st.Discovered))
	}
	d := st.Discovered[0]
	if d.During != "a" || d.By != "coder-1" || d.Description != "the client ignores timeouts" || d.Recommendation != "a task for it" {
		t.Fatalf("discovery on the board = %+v", d)
	}
	// A session without a task of its own (no LIZA_TASK) may leave the
	// task out, as the command line does: the agent's current task.
	free := b.session(t, map[string]string{"LIZA_AGENT_ID": "coder-1"}, false)
	ok(t, call(t, free, "discover", `{"description":"a second problem"}`), &out)
	if out.ID != "disc-2" || out.Task != "a" || out.Urgency != "deferred" {
		t.Fatalf("discover without a task = %+v", out)
	}
	refused(t, call(t, free, "anomaly", `{"type":"spec_ambiguity","details":{"message":"x"}}`), contracts.CodeInvalid, "name the task")
	b.verified(t)
}

// Every coder tool refuses another task and an agent id, and leaves the
// board as it was.
func TestCoderToolsRefuseOthers(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	calls := map[string]string{
		"checkpoint": `"intent":"x","validation":"y","files_to_modify":["b.txt"]`,
		"submit":     `"request_id":"r1"`,
		"block":      `"blocked_reason":"x","blocked_questions":["y?"]`,
		"handoff":    `"summary":"x","next_action":"y"`,
		"anomaly":    `"type":"spec_ambiguity","details":{"question":"y?"}`,
		"discover":   `"description":"x"`,
	}
	before := b.stateTip(t)
	for name, args := range calls {
		refused(t, call(t, cs, name, `{`+args+`,"task":"b"}`), contracts.CodeInvalid, "works on task a, not b")
		refused(t, call(t, cs, name, `{`+args+`,"agent":"coder-2"}`), contracts.CodeInvalid, "agent")
		refused(t, call(t, cs, name, `{`+args+`,"task":"../../etc"}`), contracts.CodeInvalid, "not ../../etc")
	}
	if b.stateTip(t) != before {
		t.Fatal("a refused call moved refs/liza/state")
	}
}

// A huge string is refused by the state's bounds, not stored; terminal
// escapes are stored as given, and what the model reads stays one line.
func TestCoderHugeAndEscapes(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	before := b.stateTip(t)
	huge := strings.Repeat("x", 2<<20)
	res := call(t, cs, "block", `{"blocked_reason":"`+huge+`","blocked_questions":["y?"]}`)
	refused(t, res, contracts.CodeInvalid, "over the 1 MiB cap of a state file")
	if len(text(res)) > 1000 {
		t.Fatalf("the refusal of a huge input is %d bytes", len(text(res)))
	}
	if b.stateTip(t) != before {
		t.Fatal("a refused huge block moved refs/liza/state")
	}

	// A huge value that ops echoes in its refusal (an unknown revision):
	// the model reads a bounded line, not megabytes.
	b.checkpoint(t, "a")
	res = call(t, cs, "submit", `{"commit":"`+huge+`"}`)
	refused(t, res, contracts.CodeInvalid, "unknown revision")
	if len(text(res)) > 1100 || !strings.HasSuffix(text(res), "bytes cut)") {
		t.Fatalf("the refusal of a huge revision is %d bytes, ending %q", len(text(res)), text(res)[max(0, len(text(res))-40):])
	}

	// A huge value of the wrong type: the schema's refusal is bounded too.
	res = call(t, cs, "block", `{"blocked_reason":"x","blocked_questions":"`+huge+`"}`)
	refused(t, res, contracts.CodeInvalid, "blocked_questions")
	if len(text(res)) > 1100 {
		t.Fatalf("the schema's refusal of a huge value is %d bytes", len(text(res)))
	}

	// Escapes in a field ops echoes in its refusal.
	esc := `\u001b]0;pwned\u0007\u001b[2J\nsecond line\r\u009b`
	res = call(t, cs, "anomaly", `{"type":"`+esc+`","details":{"x":"y"}}`)
	refused(t, res, contracts.CodeInvalid, "")
	oneLine(t, res)
	res = call(t, cs, "submit", `{"commit":"`+esc+`"}`)
	refused(t, res, contracts.CodeInvalid, "unknown revision")
	oneLine(t, res)

	// Escapes in a stored field: kept as given, one line in the result.
	res = call(t, cs, "discover", `{"description":"`+esc+`","recommendation":"`+esc+`"}`)
	var out mcpserver.EntryOut
	ok(t, res, &out)
	oneLine(t, res)
	if d := b.state(t).Discovered[0]; !strings.Contains(d.Description, "\x1b]0;pwned\a") {
		t.Fatalf("the description is stored as %q", d.Description)
	}
}

// The coder reads the human notes for everyone, itself and its task,
// through its task's notes resource; not another task's.
func TestCoderNotes(t *testing.T) {
	b := newBoard(t)
	ctx := context.Background()
	for _, n := range []ops.NoteRequest{{Message: "all: rebase daily"}, {Message: "for a: \x1b[31mretries\x1b[0m are 3", For: "a"},
		{Message: "for b", For: "b"}, {Message: "for coder-1", For: "coder-1"}, {Message: "for coder-2", For: "coder-2"}} {
		if _, err := b.human.Note(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	cs := b.coder(t)
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, "liza://task/a/notes") {
		t.Fatalf("resources = %v", uris)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "liza://task/a/notes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("notes resource = %+v", res.Contents)
	}
	var notes mcpserver.NotesOut
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &notes); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range notes.Notes {
		got = append(got, n.Message)
	}
	if notes.Task != "a" || notes.Agent != "coder-1" || !slices.Equal(got, []string{"all: rebase daily", "for a: \x1b[31mretries\x1b[0m are 3", "for coder-1"}) ||
		notes.Notes[2].N != 4 || notes.Notes[1].For != "a" {
		t.Fatalf("notes = %+v", notes)
	}
	if strings.Contains(res.Contents[0].Text, "\x1b") {
		t.Fatal("the resource's text holds a raw escape")
	}
	// Another task's notes are not this session's to read.
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "liza://task/b/notes"}); err == nil || !strings.Contains(err.Error(), "works on task a, not b") {
		t.Fatalf("reading b's notes: %v", err)
	}
}
