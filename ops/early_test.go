package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// A task sent back before review is one git merge-tree finds in conflict
// where the commit is verified: a reviewer's write that says so of a task
// that merges is refused, as a guarded remote would refuse its push.
func TestSendBackVerified(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	coder1, coder2, reviewer := human.As("coder-1", 0), human.As("coder-2", 0), human.As("code-reviewer-1", 0)
	for _, id := range []string{"a", "b"} {
		if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task(id)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		coder *ops.Service
		id    string
	}{{coder1, "a"}, {coder2, "b"}} {
		if _, err := c.coder.Claim(ctx, ops.ClaimRequest{Task: c.id}); err != nil {
			t.Fatal(err)
		}
		commitIn(t, root, c.id, c.id+".txt", c.id+"\n")
		checkpoint(t, c.coder, c.id)
		r, err := c.coder.Submit(ctx, ops.SubmitRequest{Task: c.id})
		if err != nil || r.Conflict != "" {
			t.Fatalf("submit %s: %v, conflict %q", c.id, err, r.Conflict)
		}
	}
	integ := git(t, root, "rev-parse", "main")
	if err := reviewer.SendBack("a", integ, "merge conflict in a.txt with main"); err != nil {
		t.Fatal(err)
	}
	tip, _ := refstore.ParseHash(git(t, root, "rev-parse", "refs/liza/state"))
	c, err := human.Repo.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	err = human.Verifier().Commit(ctx, c)
	if err == nil || !strings.Contains(err.Error(), "task a merges onto") {
		t.Fatalf("a forged conflict verified: %v", err)
	}

	// The reviewer's own check finds b merging and sends nothing back.
	r, err := reviewer.CheckMerges(ctx, ops.CheckMergesRequest{Task: "b"})
	if err != nil || r.Conflict != "" {
		t.Fatalf("b: %v, conflict %q", err, r.Conflict)
	}
}
