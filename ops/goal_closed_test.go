package ops_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestCompletedGoalUpgrade: an older git-liza (rule set 3) took a task add
// and a claim on a COMPLETED goal. Checked by this one, that board still
// loads and its history verifies; validate warns of the late work. New
// work on the completed goal is refused (add, finalize, unblock, claim,
// the MCP tool's AddTask alike: exit 1 naming goal new), while the work in
// flight can be blocked and abandoned, after which goal new starts the
// next goal.
func TestCompletedGoalUpgrade(t *testing.T) {
	human, root := newRepo(t)
	ctx := context.Background()
	ok := succeeds(t)
	old := func(agent string, d time.Duration) *ops.Service {
		return serviceAt(t, human, agent, d).UnderRules(contracts.RulesContained)
	}
	ok(old("", 0).Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}))

	// The old board: a merged, the goal completed by the planner, then b
	// added and claimed, and a draft c added.
	ok(old("", 0).AddTask(ctx, ops.AddTaskRequest{Task: task("a")}))
	oc := old("coder-1", 0)
	ok(oc.Claim(ctx, ops.ClaimRequest{Task: "a"}))
	commitIn(t, root, "a", "a.txt", "a\n")
	ok(oc.Submit(ctx, ops.SubmitRequest{Task: "a"}))
	rev := old("code-reviewer-1", 0)
	ok(rev.Review(ctx, ops.ReviewRequest{Task: "a"}))
	ok(rev.Verdict(ctx, ops.VerdictRequest{Task: "a", Approve: true}))
	ok(rev.Merge(ctx, ops.MergeRequest{Task: "a"}))
	ok(old("planner-1", 0).Complete(ctx, ops.Call{}))
	ok(old("planner-1", 0).AddTask(ctx, ops.AddTaskRequest{Task: task("b")}))
	ok(old("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true}))
	draft := task("c")
	draft.Status = contracts.Draft
	ok(old("planner-1", 0).AddTask(ctx, ops.AddTaskRequest{Task: draft}))

	// This git-liza: the history verifies, the state is valid, the late
	// work is a warning.
	checker := serviceAt(t, human, "", time.Minute)
	if v, err := checker.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history: %v %+v", err, v)
	}
	v, err := checker.Validate(ctx, ops.ValidateRequest{})
	if err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate: %v %+v", err, v)
	}
	var warned []string
	for _, w := range v.Warnings {
		warned = append(warned, w.String())
	}
	want := []string{
		"tasks[b]: CLAIMED, but goal goal-1 is COMPLETED (a completed goal takes no new work: finish or abandon the task before git liza goal new)",
		"tasks[c]: DRAFT, but goal goal-1 is COMPLETED (a completed goal takes no new work: finish or abandon the task before git liza goal new)",
	}
	if strings.Join(warned, "\n") != strings.Join(want, "\n") {
		t.Errorf("validate warnings:\n%s\nwant:\n%s", strings.Join(warned, "\n"), strings.Join(want, "\n"))
	}

	// New work is refused, and nothing is written.
	p1, c2 := serviceAt(t, human, "planner-1", time.Minute), serviceAt(t, human, "coder-2", 2*time.Hour)
	tip := stateTip(t, human)
	refused := func(what string, err error, want string) {
		t.Helper()
		if ops.Class(err) != contracts.CodeInvalid || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s on the completed goal: %v, want a refusal with %q", what, err, want)
		}
	}
	_, err = p1.AddTask(ctx, ops.AddTaskRequest{Task: task("d")})
	refused("task add", err, "goal goal-1 is COMPLETED: new tasks are refused; git liza goal new GOAL starts the next goal")
	_, err = p1.Finalize(ctx, ops.FinalizeRequest{Task: "c"})
	refused("finalize", err, "goal goal-1 is COMPLETED: finalized tasks are refused")
	_, err = c2.Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true}) // b's lease has ended
	refused("a claim of b", err, "goal goal-1 is COMPLETED: claims are refused")
	_, err = c2.Claim(ctx, ops.ClaimRequest{NoWorktree: true})
	refused("a claim of the best task", err, "goal goal-1 is COMPLETED: claims are refused")
	ok(p1.Block(ctx, ops.BlockRequest{Task: "b", Reason: "late work", Questions: []string{"which goal?"}}))
	tip = stateTip(t, human)
	_, err = p1.Unblock(ctx, ops.UnblockRequest{Task: "b"})
	refused("unblock", err, "goal goal-1 is COMPLETED: unblocked tasks are refused")
	if now := stateTip(t, human); now != tip {
		t.Errorf("a refused operation moved the board: %s -> %s", tip, now)
	}
	_, err = p1.GoalNew(ctx, ops.GoalNewRequest{Goal: "next"})
	refused("goal new", err, "task b is BLOCKED: goal goal-1 still has work on the board")

	// The late work is abandoned; goal new starts the next goal, which
	// takes work.
	ok(p1.Abandon(ctx, ops.AbandonRequest{Task: "b", Reason: "late"}))
	ok(p1.Abandon(ctx, ops.AbandonRequest{Task: "c", Reason: "late"}))
	ok(p1.GoalNew(ctx, ops.GoalNewRequest{Goal: "next"}))
	ok(p1.AddTask(ctx, ops.AddTaskRequest{Task: task("d")}))
	if v, err := checker.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history after goal new: %v %+v", err, v)
	}
}

// TestGoalComplete: goal complete closes the goal and its sprint once
// every task is terminal, names the live tasks (at most ten) while not,
// and leaves a completed goal as it is.
func TestGoalComplete(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	for i := 1; i <= 12; i++ {
		ok(human.AddTask(ctx, ops.AddTaskRequest{Task: task("t" + string(rune('a'+i-1)))}))
	}
	_, err := human.GoalComplete(ctx, ops.Call{})
	if want := "goal goal-1 has live tasks: ta (UNCLAIMED), tb (UNCLAIMED), tc (UNCLAIMED), td (UNCLAIMED), te (UNCLAIMED), tf (UNCLAIMED), tg (UNCLAIMED), th (UNCLAIMED), ti (UNCLAIMED), tj (UNCLAIMED) and 2 more; each must be MERGED, SUPERSEDED or ABANDONED first"; err == nil || err.Error() != want {
		t.Fatalf("goal complete with 12 live tasks: %v\nwant %s", err, want)
	}
	if _, err := serviceAt(t, human, "code-reviewer-1", 0).GoalComplete(ctx, ops.Call{}); err == nil || !strings.Contains(err.Error(), "may not goal") {
		t.Errorf("goal complete by a reviewer: %v", err)
	}
	for i := 1; i <= 12; i++ {
		ok(human.Abandon(ctx, ops.AbandonRequest{Task: "t" + string(rune('a'+i-1)), Reason: "no"}))
	}
	res, err := serviceAt(t, human, "planner-1", 0).GoalComplete(ctx, ops.Call{RequestID: "done-1"})
	if err != nil || res.Goal != "goal-1" || res.Sprint != "sprint-1" || res.Already || res.Replayed {
		t.Fatalf("goal complete: %+v %v", res, err)
	}
	again, err := serviceAt(t, human, "planner-1", 0).GoalComplete(ctx, ops.Call{RequestID: "done-1"})
	if err != nil || !again.Replayed || again.Commit != res.Commit {
		t.Errorf("goal complete retried with its request id: %+v %v", again, err)
	}
	tip := stateTip(t, human)
	if res, err := human.GoalComplete(ctx, ops.Call{}); err != nil || !res.Already {
		t.Errorf("goal complete on a completed goal: %+v %v", res, err)
	}
	if now := stateTip(t, human); now != tip {
		t.Errorf("goal complete on a completed goal moved the board")
	}
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Goal.Status != "COMPLETED" || st.Sprint.Status != "COMPLETED" || st.Goal.Completed == "" || st.Sprint.Timeline.Ended == "" {
		t.Errorf("after goal complete: goal %+v, sprint %+v", st.Goal, st.Sprint)
	}
}
