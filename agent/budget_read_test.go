package agent

import (
	"context"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// wholeCounter is a supervisor's board that counts its whole reads.
type wholeCounter struct {
	*ops.Service
	wholes int
}

func (c *wholeCounter) State(ctx context.Context, rev string) (*contracts.State, error) {
	c.wholes++
	return c.Service.State(ctx, rev)
}

// A session's budgets need the whole board only for an agent's budget (its
// sessions are on every task) or a goal that keeps no figure of its own:
// with the goal's, a task's and a session's budgets, the watch reads the
// goal from the header and the task alone, and holds both to what the
// board recorded. On a board of 10,000 tasks that is 0.2 ms and 32 KB a
// session start, where the whole read took 0.35 to 0.44 s and 172 MB.
func TestBudgetWatchReadsWhatItNeeds(t *testing.T) {
	svc := newBoard(t)
	ctx := context.Background()
	addTask(t, svc, "a")
	coder := svc.As("coder-1", 0)
	if _, err := coder.Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := coder.SessionEnded(ctx, ops.SessionRequest{Task: "a", Outcome: ops.SessionDone, Usage: &contracts.Usage{InputTokens: 1500}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set    map[string]float64
		wholes int
	}{
		{map[string]float64{"goal_tokens": 10000, "task_tokens": 2000, "session_tokens": 900}, 0},
		{map[string]float64{"agent_tokens": 5000}, 1},
	} {
		if _, err := svc.SetBudgets(ctx, ops.BudgetRequest{Set: c.set}); err != nil {
			t.Fatal(err)
		}
		st, err := svc.State(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		board := &wholeCounter{Service: coder}
		s := &sup{Config: Config{ID: "coder-1", Role: contracts.RoleCoder, Board: board}}
		// The loop's view: the header, and the task without its history.
		view := *st
		view.Tasks = []*contracts.Task{{ID: "a", Status: contracts.Claimed}}
		bw := s.budgetWatch(ctx, &view, &work{task: view.Tasks[0]}, nil)
		if board.wholes != c.wholes {
			t.Errorf("budgets %v: %d whole reads, want %d", c.set, board.wholes, c.wholes)
		}
		lines := map[string]float64{}
		for _, l := range bw.lines(contracts.Usage{InputTokens: 100}) {
			lines[l.Key] = l.Spent
		}
		want := map[string]float64{"goal_tokens": 1600, "task_tokens": 1600, "session_tokens": 100, "agent_tokens": 1600}
		for k, v := range lines {
			if want[k] != v {
				t.Errorf("budgets %v: %s spent %v, want %v", c.set, k, v, want[k])
			}
		}
		if len(lines) == 0 {
			t.Errorf("budgets %v: no line", c.set)
		}
	}
}
