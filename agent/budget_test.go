package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// growingClaude is a fake Claude Code session that keeps calling tools,
// each model request reporting 600 input tokens, for 20 turns; it counts
// its turns in the file turns, one line each.
func growingClaude(turns string) string {
	return fmt.Sprintf(`trap 'exit 130' INT TERM
echo '{"type":"system","subtype":"init","session_id":"s1","model":"claude-test"}'
i=0
while [ $i -lt 20 ]; do
  i=$((i+1))
  echo $i >> %q
  echo '{"type":"assistant","message":{"id":"m1","model":"claude-test","content":[{"type":"tool_use","id":"t'$i'","name":"Bash","input":{"command":"true"}}],"usage":{"input_tokens":600,"output_tokens":0}}}'
  echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t'$i'","content":"ok"}]}}'
  sleep 0.3
done
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.01,"usage":{"input_tokens":12000,"output_tokens":0}}'
`, turns)
}

// setBudgets sets budgets on the board as the human.
func setBudgets(set map[string]float64) func(*ops.Service) {
	return func(svc *ops.Service) {
		if _, err := svc.SetBudgets(context.Background(), ops.BudgetRequest{Set: set}); err != nil {
			panic(err)
		}
	}
}

// waitTask waits up to a minute for task a to satisfy ok.
func (r *fakeRun) waitTask(t *testing.T, what string, ok func(*contracts.Task) bool) *contracts.Task {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if task, err := r.svc.Task(context.Background(), "", "a"); err == nil && ok(task) {
			return task
		}
	}
	task, _ := r.svc.Task(context.Background(), "", "a")
	t.Fatalf("task a never %s; it is %+v; the supervisor said:\n%s", what, task, r.log)
	return nil
}

// turnsOf counts the turns the fake sessions took, by session.
func turnsOf(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, l := range strings.Fields(string(b)) {
		if l == "1" {
			out = append(out, 0)
		}
		out[len(out)-1]++
	}
	return out
}

// A session that keeps calling tools past a 2,000-token session budget is
// stopped within one turn of crossing it (its fourth request takes it to
// 2,400), on the timebox path, and recorded with why; like a timebox, the
// next session starts from the worktree, and IdleLimit of them give the
// task up.
func TestSessionBudgetStops(t *testing.T) {
	turns := filepath.Join(t.TempDir(), "turns")
	r := startFakeOn(t, growingClaude(turns), "claude", 0, setBudgets(map[string]float64{"session_tokens": 2000}))
	task := r.waitTask(t, "BLOCKED", func(t *contracts.Task) bool { return t.Status == contracts.Blocked })
	r.cancel()
	got := turnsOf(t, turns)
	if len(got) != IdleLimit {
		t.Fatalf("%d sessions ran (%v), want %d", len(got), got, IdleLimit)
	}
	for i, n := range got {
		if n < 4 || n > 5 {
			t.Errorf("session %d took %d turns: want it stopped within one turn of its fourth, which crossed the budget", i+1, n)
		}
	}
	want := "budget_exceeded: session spent 2,400 tokens of its 2,000 (session_tokens)"
	var stopped int
	for _, ev := range task.History {
		if ev.Event == "session_ended" && ev.Extra["outcome"] == ops.SessionStopped && strings.HasPrefix(ev.Reason, want) {
			stopped++
		}
	}
	var recorded int
	for _, ev := range task.History {
		if u, ok := contracts.SessionUsage(ev); ok {
			recorded++
			if u.Tokens() != 2400 && u.Tokens() != 3000 {
				t.Errorf("a stopped session recorded %d tokens, want what its requests reported (2,400, or 3,000 after a fifth)", u.Tokens())
			}
		}
	}
	if recorded != IdleLimit {
		t.Errorf("%d sessions recorded their usage, want %d: a session stopped before its result event spent its turns", recorded, IdleLimit)
	}
	if stopped != IdleLimit {
		t.Errorf("%d sessions recorded as stopped for %q, want %d; history:\n%s", stopped, want, IdleLimit, historyOf(task))
	}
	if !strings.Contains(task.BlockedReason, want) {
		t.Errorf("blocked reason %q does not say why", task.BlockedReason)
	}
	if !strings.Contains(r.log.String(), want+": asking the agent to stop (SIGINT)") {
		t.Errorf("the supervisor did not say it stopped the session:\n%s", r.log)
	}
}

// A task over its budget (counting the running session) is BLOCKED for
// the planner with the figures and the questions that would unblock it;
// raising the budget unblocks it.
func TestTaskBudgetBlocks(t *testing.T) {
	turns := filepath.Join(t.TempDir(), "turns")
	r := startFakeOn(t, growingClaude(turns), "claude", 0, setBudgets(map[string]float64{"task_tokens": 2000}))
	task := r.waitTask(t, "BLOCKED", func(t *contracts.Task) bool { return t.Status == contracts.Blocked })
	r.cancel()
	if err := r.wait(t, "after cancel"); err != nil {
		t.Fatal(err)
	}
	if want := "budget_exceeded: task a spent 2,400 tokens of its 2,000 (task_tokens)"; task.BlockedReason != want {
		t.Errorf("blocked reason:\n got %q\nwant %q", task.BlockedReason, want)
	}
	if want := []string{"Raise the budget? (git liza budget --task-tokens N)", "Split the task?"}; strings.Join(task.BlockedQuestions, "|") != strings.Join(want, "|") {
		t.Errorf("questions %q, want %q", task.BlockedQuestions, want)
	}
	if got := turnsOf(t, turns); len(got) != 1 || got[0] > 5 {
		t.Errorf("sessions and their turns: %v; want one session stopped within one turn of its fourth", got)
	}
	res, err := r.svc.SetBudgets(context.Background(), ops.BudgetRequest{Set: map[string]float64{"task_tokens": 1e9}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Unblocked, ",") != "a" {
		t.Errorf("raising the budget unblocked %v, want a", res.Unblocked)
	}
}

// A goal over its budget pauses the team, where every clone sees it,
// with a reason naming the budget; the coder's task gets a handoff; no
// session starts while paused. Raising the goal's budget lifts the pause.
func TestGoalBudgetPauses(t *testing.T) {
	turns := filepath.Join(t.TempDir(), "turns")
	r := startFakeOn(t, growingClaude(turns), "claude", 0, setBudgets(map[string]float64{"goal_tokens": 2000}))
	r.waitTask(t, "handed off", func(t *contracts.Task) bool { return t.HandoffPending })
	st, err := r.svc.State(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	c := st.Control
	if c == nil || c.Mode != contracts.ModePaused || c.By != contracts.BudgetBy ||
		!strings.HasPrefix(c.Reason, "budget_exceeded: goal spent ") || !strings.HasSuffix(c.Reason, " tokens of its 2,000 (goal_tokens)") {
		t.Fatalf("control %+v: want PAUSED by budget for goal_tokens", c)
	}
	if got := contracts.GoalSpend(st).Tokens(); got < 2400 {
		t.Errorf("the board shows the goal spent %d tokens, want the stopped session's 2,400 or more", got)
	}
	if got := turnsOf(t, turns); len(got) != 1 || got[0] > 5 {
		t.Errorf("sessions and their turns: %v; want one session stopped within one turn of its fourth", got)
	}
	res, err := r.svc.SetBudgets(context.Background(), ops.BudgetRequest{Set: map[string]float64{"goal_tokens": 1e9}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed {
		t.Errorf("raising the goal's budget did not lift its pause")
	}
	r.cancel()
}

// An agent over its budget gives back the task it holds, for another
// coder, and its supervisor stops, saying why.
func TestAgentBudgetStops(t *testing.T) {
	turns := filepath.Join(t.TempDir(), "turns")
	r := startFakeOn(t, growingClaude(turns), "claude", 0, setBudgets(map[string]float64{"agent_tokens": 2000}))
	err := r.wait(t, "over its budget")
	want := "budget_exceeded: agent coder-1 spent 2,400 tokens of its 2,000 (agent_tokens)"
	if !errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run returned %v, want ErrOverBudget with %q", err, want)
	}
	task, err := r.svc.Task(context.Background(), "", "a")
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != contracts.Unclaimed || task.AssignedTo != "" {
		t.Errorf("task a is %s, assigned to %q: want it given back", task.Status, task.AssignedTo)
	}
	if got := turnsOf(t, turns); len(got) != 1 || got[0] > 5 {
		t.Errorf("sessions and their turns: %v; want one session stopped within one turn of its fourth", got)
	}
}

func historyOf(t *contracts.Task) string {
	var b strings.Builder
	for _, ev := range t.History {
		fmt.Fprintf(&b, "  %s %s %v: %s\n", ev.Event, ev.Agent, ev.Extra["outcome"], ev.Reason)
	}
	return b.String()
}
