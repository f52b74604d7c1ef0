package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// TestSessionEnded: the end of a session is a recorded operation on the
// agent's own task, whose commit verifies by replay; a relabelled one and
// one on another agent's task do not.
func TestSessionEnded(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	coder1, coder2 := human.As("coder-1", 0), human.As("coder-2", 0)
	if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := coder1.Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 3000) + "the last line"
	w, err := coder1.SessionEnded(ctx, ops.SessionRequest{Task: "a", Outcome: ops.SessionCrash, Exit: 1, Seconds: 7,
		Log: ".git/liza/logs/sessions/coder-1/a.log", Detail: long})
	if err != nil {
		t.Fatal(err)
	}
	got, err := human.Task(ctx, "", "a")
	if err != nil {
		t.Fatal(err)
	}
	ev := got.History[len(got.History)-1]
	if ev.Event != "session_ended" || ev.Agent != "coder-1" || ev.Extra["outcome"] != "crash" || ev.Extra["exit"] != 1 ||
		ev.Extra["seconds"] != 7 || ev.Extra["log"] != ".git/liza/logs/sessions/coder-1/a.log" {
		t.Errorf("event = %+v, want coder-1's crash with its exit, time and log", ev)
	}
	if !strings.HasSuffix(ev.Reason, "the last line") || len(ev.Reason) > 2003 {
		t.Errorf("reason keeps %d bytes, want the last 2000 (and the end)", len(ev.Reason))
	}

	for _, tc := range []struct {
		name string
		svc  *ops.Service
		r    ops.SessionRequest
		msg  string
	}{
		{"another agent's task", coder2, ops.SessionRequest{Task: "a", Outcome: ops.SessionDone, Exit: 0}, "coder-2 never worked on task a"},
		{"an unknown outcome", coder1, ops.SessionRequest{Task: "a", Outcome: "won", Exit: 0}, `unknown session outcome "won"`},
		{"the human", human, ops.SessionRequest{Task: "a", Outcome: ops.SessionDone}, "a session is recorded for an agent"},
		{"a task id that is a path", coder1, ops.SessionRequest{Task: "../a", Outcome: ops.SessionDone}, "invalid task id"},
	} {
		if _, err := tc.svc.SessionEnded(ctx, tc.r); ops.Class(err) != contracts.CodeInvalid || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.msg)
		}
	}

	if v, err := human.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history after a session's end: %v %+v", err, v)
	}

	// The same change relabelled: another outcome in its recorded input,
	// or written as an agent that never worked on the task.
	c, err := human.Repo.ReadCommit(w.Commit)
	if err != nil {
		t.Fatal(err)
	}
	for _, forged := range []struct{ from, to, want string }{
		{`"outcome":"crash"`, `"outcome":"done"`, "its change is not what session_ended by coder-1 makes"},
		{"Liza-Agent: coder-1", "Liza-Agent: coder-2", "session_ended by coder-2 is refused on its parent state: coder-2 never worked on task a"},
	} {
		msg := strings.Replace(c.Message, forged.from, forged.to, 1)
		if msg == c.Message {
			t.Fatalf("%q is not in the commit's message:\n%s", forged.from, c.Message)
		}
		when := c.Author.When.Format("2006-01-02T15:04:05Z07:00")
		t.Setenv("GIT_AUTHOR_DATE", when)
		t.Setenv("GIT_COMMITTER_DATE", when)
		id := git(t, root, "commit-tree", c.Tree.String(), "-p", c.Parents[0].String(), "-m", msg)
		git(t, root, "update-ref", refstore.StateRef, id)
		v, err := human.Validate(ctx, ops.ValidateRequest{History: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Problems) != 1 || !strings.Contains(v.Problems[0].Msg, forged.want) {
			t.Errorf("validate --history of a session's end relabelled %s: %+v, want %q", forged.to, v.Problems, forged.want)
		}
	}
}
