package ops_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// TestSessionUsage: a session's usage is recorded with its end, priced
// from the table when the CLI reported no cost; a planner's task-less
// session counts on its agent entry; both verify by replay, and a replayed
// commit whose recorded usage was lowered does not.
func TestSessionUsage(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	coder1, planner := human.As("coder-1", 0), human.As("planner-1", 0)
	if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := coder1.Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	// gpt-5 is in the shipped table: 1.25 input, 10 output, 0.125 cache
	// reads per million tokens.
	priced := contracts.Usage{Model: "gpt-5-codex", InputTokens: 2_000_000, OutputTokens: 100_000, CacheReadTokens: 800_000}
	w, err := coder1.SessionEnded(ctx, ops.SessionRequest{Task: "a", Outcome: ops.SessionIdle, Exit: 0, Usage: &priced})
	if err != nil {
		t.Fatal(err)
	}
	reported := contracts.Usage{Model: "claude-sonnet-4-5", InputTokens: 10, OutputTokens: 20, CacheWriteTokens: 30, CostUSD: 0.0123, CostSource: contracts.CostReported}
	if _, err := coder1.SessionEnded(ctx, ops.SessionRequest{Task: "a", Outcome: ops.SessionDone, Exit: 0, Usage: &reported}); err != nil {
		t.Fatal(err)
	}
	got, err := human.Task(ctx, "", "a")
	if err != nil {
		t.Fatal(err)
	}
	n := len(got.History)
	u1, ok1 := contracts.SessionUsage(got.History[n-2])
	u2, ok2 := contracts.SessionUsage(got.History[n-1])
	if !ok1 || u1.CostSource != contracts.CostPriced || math.Abs(u1.CostUSD-(2.5+1+0.1)) > 1e-9 || u1.Tokens() != 2_900_000 {
		t.Errorf("priced session recorded %+v %v, want 3.6 USD priced", u1, ok1)
	}
	if !ok2 || u2 != reported {
		t.Errorf("reported session recorded %+v, want %+v", u2, reported)
	}
	if sum := contracts.TaskSpend(got); sum.Tokens() != 2_900_060 {
		t.Errorf("task spend %+v", sum)
	}

	// A planner's session has no task: its usage goes on its entry.
	reg, err := planner.Register(ctx, ops.RegisterRequest{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	planner = human.As("planner-1", reg.Generation)
	plan := contracts.Usage{Model: "gpt-5", InputTokens: 1000, OutputTokens: 100}
	if _, err := planner.SessionEnded(ctx, ops.SessionRequest{Outcome: ops.SessionDone, Exit: 0, Usage: &plan}); err != nil {
		t.Fatal(err)
	}
	if _, err := planner.SessionEnded(ctx, ops.SessionRequest{Outcome: ops.SessionDone, Exit: 0, Usage: &plan}); err != nil {
		t.Fatal(err)
	}
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if sp := contracts.AgentSpend(st, "planner-1"); sp.Tokens() != 2200 || sp.CostSource != contracts.CostPriced {
		t.Errorf("planner spend %+v, want 2200 tokens priced", sp)
	}
	if g := contracts.GoalSpend(st); g.Tokens() != 2_902_260 {
		t.Errorf("goal spend %+v", g)
	}

	for _, tc := range []struct {
		name string
		r    ops.SessionRequest
		msg  string
	}{
		{"negative tokens", ops.SessionRequest{Task: "a", Outcome: ops.SessionDone, Usage: &contracts.Usage{InputTokens: -5}}, "input_tokens -5 is negative"},
		{"absurd tokens", ops.SessionRequest{Task: "a", Outcome: ops.SessionDone, Usage: &contracts.Usage{OutputTokens: 1 << 50}}, "past the bound"},
		{"unknown source", ops.SessionRequest{Task: "a", Outcome: ops.SessionDone, Usage: &contracts.Usage{CostSource: "guess"}}, "unknown cost_source"},
		{"no task, no usage", ops.SessionRequest{Outcome: ops.SessionDone}, "invalid task id"},
	} {
		if _, err := coder1.SessionEnded(ctx, tc.r); ops.Class(err) != contracts.CodeInvalid || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.msg)
		}
	}
	if v, err := human.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history after sessions with usage: %v %+v", err, v)
	}

	// The first session's commit replayed with fewer tokens in its recorded
	// input: the tree it made is not what that input makes.
	c, err := human.Repo.ReadCommit(w.Commit)
	if err != nil {
		t.Fatal(err)
	}
	msg := strings.Replace(c.Message, `"input_tokens":2000000`, `"input_tokens":2000`, 1)
	if msg == c.Message {
		t.Fatalf("the usage is not in the commit's recorded input:\n%s", c.Message)
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
	if len(v.Problems) != 1 || !strings.Contains(v.Problems[0].Msg, "its change is not what session_ended by coder-1 makes") {
		t.Errorf("validate --history of a session's usage lowered: %+v", v.Problems)
	}
}
