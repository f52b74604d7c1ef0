package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// spendOn records a session of agent on task (none: a planner's, without
// a task) that spent tokens.
func spendOn(t *testing.T, svc *ops.Service, agent, task string, tokens int64) {
	t.Helper()
	if _, err := svc.As(agent, 0).SessionEnded(context.Background(), ops.SessionRequest{Task: task, Outcome: ops.SessionDone,
		Usage: &contracts.Usage{InputTokens: tokens}}); err != nil {
		t.Fatal(err)
	}
}

// finishGoal gives up task id and starts the next goal.
func finishGoal(t *testing.T, human *ops.Service, id string) {
	t.Helper()
	ctx := context.Background()
	if _, err := human.As("coder-1", 0).Block(ctx, ops.BlockRequest{Task: id, Reason: "r", Questions: []string{"q?"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.Abandon(ctx, ops.AbandonRequest{Task: id, Reason: "done with it"}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.GoalComplete(ctx, ops.Call{}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.GoalNew(ctx, ops.GoalNewRequest{Goal: "the next goal", Spec: "specs/vision.md"}); err != nil {
		t.Fatal(err)
	}
}

// goalFigures are the goal's spend as the team is held to it (the
// budget's lines), as a person reads it (status) and whether a
// supervisor may pause the team for it.
func goalFigures(t *testing.T, svc *ops.Service) (held, shown int64, pause error) {
	t.Helper()
	ctx := context.Background()
	bs, err := svc.Budgets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bs.Lines {
		if l.Of == "goal" && l.Key == "goal_tokens" {
			held = int64(l.Spent)
		}
	}
	b, err := svc.Status(ctx, ops.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Spend != nil && b.Spend.Budget != nil {
		shown = b.Spend.Budget.Spent.Tokens
	}
	_, pause = svc.As("coder-1", 0).PauseOverBudget(ctx, ops.Call{})
	return held, shown, pause
}

// A goal's budget holds the goal's sessions: the next goal starts with
// nothing spent, however much the one before spent, and what the team is
// held to is what status shows. Before, a goal started after one that
// went over its budget was paused at its first session for the spend of
// the one before (2,400 tokens of 2,000) while status showed none.
func TestGoalBudgetHoldsTheGoalsOwnSessions(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	if _, err := human.SetBudgets(ctx, ops.BudgetRequest{Set: map[string]float64{"goal_tokens": 2000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.As("planner-1", 0).Register(ctx, ops.RegisterRequest{Host: "here"}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	spendOn(t, human, "coder-1", "a", 1500)
	spendOn(t, human, "planner-1", "", 900)
	if held, shown, pause := goalFigures(t, human); held != 2400 || shown != 2400 || pause != nil {
		t.Fatalf("the first goal: held to %d, shown %d, pause %v; want 2,400 both and the pause", held, shown, pause)
	}
	if _, err := human.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModeRunning}); err != nil {
		t.Fatal(err)
	}
	finishGoal(t, human, "a")

	// The next goal: nothing spent, nothing to pause for.
	held, shown, pause := goalFigures(t, human)
	if held != 0 || shown != 0 || pause == nil || !strings.Contains(pause.Error(), "within its budgets") {
		t.Fatalf("the next goal: held to %d, shown %d, pause %v; want 0, 0 and refused", held, shown, pause)
	}
	// Its own sessions count, a task's and a planner's.
	if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	spendOn(t, human, "coder-1", "b", 1200)
	if held, shown, _ := goalFigures(t, human); held != 1200 || shown != 1200 {
		t.Fatalf("after a session of the next goal: held to %d, shown %d; want 1,200", held, shown)
	}
	spendOn(t, human, "planner-1", "", 1000)
	held, shown, pause = goalFigures(t, human)
	if held != 2200 || shown != 2200 || pause != nil {
		t.Fatalf("over the next goal's budget: held to %d, shown %d, pause %v; want 2,200 and the pause", held, shown, pause)
	}
	// The reports of the goal and of its sprint count the same sessions
	// (the planner's 900 of the goal before not among them), so status's
	// line never shows a sprint that spent more than its goal.
	for _, goalScope := range []bool{false, true} {
		rep, err := human.Usage(ctx, ops.UsageRequest{Goal: goalScope})
		if err != nil {
			t.Fatal(err)
		}
		planning := int64(0)
		for _, r := range rep.ByOutcome {
			if r.Outcome == ops.OutcomePlanning {
				planning = r.Spend.Tokens
			}
		}
		if rep.Total.Tokens != 2200 || planning != 1000 {
			t.Errorf("usage (goal %v): total %d, planning %d; want 2,200 and 1,000", goalScope, rep.Total.Tokens, planning)
		}
	}
	// The agents' budgets still hold all their sessions: the planner's
	// 1,900, the coder's 2,700.
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if p, c := contracts.AgentSpend(st, "planner-1").Tokens(), contracts.AgentSpend(st, "coder-1").Tokens(); p != 1900 || c != 2700 {
		t.Errorf("agents' spend: planner %d, coder %d; want 1,900 and 2,700", p, c)
	}
	if v, err := human.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("the history does not verify: %v %v", err, v)
	}
}

// A goal begun under rule set 6 keeps no figure: the first session under
// the current rules starts it from what rule set 6 counted (every session
// the board records), then adds to it; the history replays, each commit
// under its own rules.
func TestGoalSpendAfterTheUpgrade(t *testing.T) {
	human, _ := newRepo(t)
	ctx := context.Background()
	old := human.UnderRules(contracts.RulesQueueGroups)
	if _, err := old.Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.SetBudgets(ctx, ops.BudgetRequest{Set: map[string]float64{"goal_tokens": 5000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.As("planner-1", 0).Register(ctx, ops.RegisterRequest{Host: "here"}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	spendOn(t, old, "coder-1", "a", 1000)
	spendOn(t, old, "planner-1", "", 700)
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Goal.Spend != nil {
		t.Fatalf("rule set 6 wrote goal.spend %+v", *st.Goal.Spend)
	}
	if held, shown, _ := goalFigures(t, human); held != 1700 || shown != 1700 {
		t.Fatalf("before the first session under the current rules: held to %d, shown %d; want 1,700", held, shown)
	}
	spendOn(t, human, "coder-1", "a", 300)
	if st, err = human.State(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if st.Goal.Spend == nil || contracts.Usage(*st.Goal.Spend).Tokens() != 2000 {
		t.Fatalf("goal.spend = %+v, want 2,000 tokens", st.Goal.Spend)
	}
	if held, shown, _ := goalFigures(t, human); held != 2000 || shown != 2000 {
		t.Fatalf("after: held to %d, shown %d; want 2,000", held, shown)
	}
	// The planner's part starts from all it spent, as the goal's does.
	if rep, err := human.Usage(ctx, ops.UsageRequest{Goal: true}); err != nil || rep.Total.Tokens != 2000 {
		t.Fatalf("usage of the goal: %+v, %v; want 2,000 tokens", rep, err)
	}
	if v, err := human.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("the history does not verify: %v %v", err, v)
	}
}
