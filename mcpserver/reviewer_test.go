package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/mcpserver"
	"github.com/liza-dev/git-liza/ops"
)

// reviewBoard is a board whose task a coder-1 submitted (a.txt, one line)
// and code-reviewer-1 holds the review of; it returns the commit under review.
func reviewBoard(t *testing.T) (*board, string) {
	t.Helper()
	b := newBoard(t)
	tip := b.commitWork(t, "a", "a.txt")
	ctx := context.Background()
	b.checkpoint(t, "a")
	if _, err := b.human.As("coder-1", 0).Submit(ctx, ops.SubmitRequest{Task: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.human.As("code-reviewer-1", 0).Review(ctx, ops.ReviewRequest{Task: "a"}); err != nil {
		t.Fatal(err)
	}
	return b, tip
}

// reviewer is the session of code-reviewer-1 on task (none: no LIZA_TASK).
func (b *board) reviewer(t *testing.T, task string) *mcp.ClientSession {
	return b.session(t, map[string]string{"LIZA_AGENT_ID": "code-reviewer-1", "LIZA_ROLE": "code-reviewer", "LIZA_TASK": task,
		"LIZA_PROJECT_ROOT": b.root}, false)
}

// A reviewer's list has verdict and everyone's, and no other role's.
func TestReviewerToolList(t *testing.T) {
	b, _ := reviewBoard(t)
	names := tools(t, b.reviewer(t, "a"))
	for _, want := range []string{"verdict", "status"} {
		if !slices.Contains(names, want) {
			t.Errorf("reviewer tools %v lack %s", names, want)
		}
	}
	for _, not := range []string{"checkpoint", "submit", "block", "handoff", "anomaly", "discover", "task_add", "unblock", "note_done", "discover_convert", "pause"} {
		if slices.Contains(names, not) {
			t.Errorf("reviewer tools %v have %s", names, not)
		}
	}
}

// verdict approves the commit under review.
func TestReviewerApprove(t *testing.T) {
	b, tip := reviewBoard(t)
	cs := b.reviewer(t, "a")
	before := b.stateTip(t)
	refused(t, call(t, cs, "verdict", `{"verdict":"approve","feedback":"x"}`), contracts.CodeInvalid, "feedback goes with a rejection")
	refused(t, call(t, cs, "verdict", `{"verdict":"lgtm"}`), contracts.CodeInvalid, `verdict is approve or reject, not "lgtm"`)
	refused(t, call(t, cs, "verdict", `{}`), contracts.CodeInvalid, "verdict")
	refused(t, call(t, cs, "verdict", `{"verdict":"approve","commit":"main"}`), contracts.CodeInvalid, "is not the commit under review")
	if b.stateTip(t) != before {
		t.Fatal("a refused verdict moved refs/liza/state")
	}
	var out mcpserver.VerdictOut
	ok(t, call(t, cs, "verdict", `{"verdict":"approve","reason":"tests pass","commit":"`+tip+`"}`), &out)
	tk := b.task(t, "a")
	last := tk.History[len(tk.History)-1]
	if out.Task != "a" || out.Status != "APPROVED" || out.Commit != b.stateTip(t) || tk.Status != contracts.Approved ||
		last.Agent != "code-reviewer-1" || last.Reason != "tests pass" || last.Commit != tip {
		t.Fatalf("verdict = %+v; task %s, last event %+v", out, tk.Status, last)
	}
	b.verified(t)
}

// verdict rejects with the seed's rejection_reason and rejection_feedback.
func TestReviewerReject(t *testing.T) {
	b, _ := reviewBoard(t)
	cs := b.reviewer(t, "a")
	refused(t, call(t, cs, "verdict", `{"verdict":"reject"}`), contracts.CodeInvalid, "a rejection needs --reason")
	var out mcpserver.VerdictOut
	ok(t, call(t, cs, "verdict", `{"verdict":"reject","reason":"a.txt:1 says done, the spec wants ok","feedback":"write ok"}`), &out)
	tk := b.task(t, "a")
	if out.Status != "REJECTED" || tk.Status != contracts.Rejected || tk.RejectionReason != "a.txt:1 says done, the spec wants ok" || tk.RejectionFeedback != "write ok" {
		t.Fatalf("verdict = %+v; task %s %q %q", out, tk.Status, tk.RejectionReason, tk.RejectionFeedback)
	}
	b.verified(t)
}

// A reviewer judges only the review it holds: not another task named in
// the call, not a task it does not review when the session names none,
// and never as another agent.
func TestReviewerBoundToItsReview(t *testing.T) {
	b, _ := reviewBoard(t)
	before := b.stateTip(t)
	cs := b.reviewer(t, "a")
	refused(t, call(t, cs, "verdict", `{"verdict":"approve","task":"b"}`), contracts.CodeInvalid, "works on task a, not b")
	refused(t, call(t, cs, "verdict", `{"verdict":"approve","agent":"code-reviewer-2"}`), contracts.CodeInvalid, "agent")
	// A session without a task of its own: ops holds it to its review.
	free := b.reviewer(t, "")
	refused(t, call(t, free, "verdict", `{"verdict":"approve"}`), contracts.CodeInvalid, "name the task")
	refused(t, call(t, free, "verdict", `{"verdict":"approve","task":"b"}`), contracts.CodeInvalid, "task b is UNCLAIMED, not READY_FOR_REVIEW")
	// Another reviewer's session on a: it does not hold the review.
	other := b.session(t, map[string]string{"LIZA_AGENT_ID": "code-reviewer-2", "LIZA_TASK": "a"}, false)
	refused(t, call(t, other, "verdict", `{"verdict":"approve"}`), contracts.CodeInvalid, "code-reviewer-2 does not hold the review of task a (code-reviewer-1 does)")
	if b.stateTip(t) != before {
		t.Fatal("a refused verdict moved refs/liza/state")
	}
}

// The review resource gives the diff range and its stat, read from the
// board and git; another task's is not this session's to read.
func TestReviewerReviewResource(t *testing.T) {
	b, tip := reviewBoard(t)
	cs := b.reviewer(t, "a")
	ctx := context.Background()
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, "liza://review/a") || !slices.Contains(uris, "liza://task/a/notes") {
		t.Fatalf("resources = %v", uris)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "liza://review/a"})
	if err != nil {
		t.Fatal(err)
	}
	var got mcpserver.ReviewOut
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &got); err != nil {
		t.Fatal(err)
	}
	base := b.task(t, "a").BaseCommit
	want := mcpserver.ReviewOut{Task: "a", Status: "READY_FOR_REVIEW", Author: "coder-1", ReviewingBy: "code-reviewer-1",
		BaseCommit: base, ReviewCommit: tip, DiffRange: base + ".." + tip,
		Files: []mcpserver.FileStat{{Path: "a.txt", Added: 1}}, Stat: "1 file changed, 1 insertion(+), 0 deletions(-)"}
	if g, w := mustJSON(t, got), mustJSON(t, want); string(g) != string(w) {
		t.Fatalf("review resource =\n%s\nwant\n%s", g, w)
	}
	// git's own stat of the range agrees.
	if stat := git(t, b.root, "diff", "--shortstat", got.DiffRange); stat != "1 file changed, 1 insertion(+)" {
		t.Fatalf("git diff --shortstat %s = %q", got.DiffRange, stat)
	}
	for uri, want := range map[string]string{"liza://review/b": "exit 1 (refused: fix the input, or stop): this session of code-reviewer-1 works on task a, not b",
		"liza://review/a/../b": "Resource not found", "liza://review/": "Resource not found"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("reading %s: %v, want %q", uri, err, want)
		}
	}
	// A session without a task may read any task's; one with no commit
	// under review is refused.
	free := b.reviewer(t, "")
	if _, err := free.ReadResource(ctx, &mcp.ReadResourceParams{URI: "liza://review/b"}); err == nil || !strings.Contains(err.Error(), "task b has no commit under review") {
		t.Fatalf("reading b's review: %v", err)
	}
}
