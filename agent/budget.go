package agent

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
)

// ErrOverBudget is returned when the agent has spent more than its budget
// (config.budgets.agent_tokens or agent_usd): its supervisor stops, having
// given back the work it held, and starts no session until a person raises
// the budget and starts it again.
var ErrOverBudget = errors.New("over its budget")

// budgetBoard is what enforcing the budgets needs of the board beyond
// Board: the whole state (the spend of finished and archived tasks, which
// a coder's live view holds only as index entries) and the pause for the
// goal's budget. *ops.Service has both; a Board without them enforces the
// session budget alone.
type budgetBoard interface {
	State(ctx context.Context, rev string) (*contracts.State, error)
	PauseOverBudget(ctx context.Context, call ops.Call) (*ops.OverBudgetResult, error)
}

// budgetWatch holds a running session to the budgets: its own, and its
// task's, its agent's and the goal's, counting what the board showed spent
// when it started plus what the session has spent so far, as its stream
// tells (transcript.Writer.Spent: Claude Code's turns as they come; codex
// and gemini report a session's usage only at its end).
type budgetWatch struct {
	b     *contracts.Budgets
	cfg   contracts.Config
	st    *contracts.State // the whole board when the session started
	task  *contracts.Task  // a coder's task, held to the task budget
	agent string
	tw    *transcript.Writer
	// over is the budget the session went over, once it has.
	over *contracts.BudgetLine
	// grew is signalled when the session's spend grows (attach).
	grew chan struct{}
}

// attach starts watching the session's stream: grew is signalled as soon
// as what it spent grows, so that watchRun checks the budgets then, not
// at its next tick.
func (bw *budgetWatch) attach(tw *transcript.Writer) {
	if bw == nil {
		return
	}
	bw.tw, bw.grew = tw, make(chan struct{}, 1)
	tw.OnSpent(func() {
		select {
		case bw.grew <- struct{}{}:
		default:
		}
	})
}

// spent is signalled when the watched session's spend grows; nil (never
// ready) without a watch.
func (bw *budgetWatch) spent() <-chan struct{} {
	if bw == nil {
		return nil
	}
	return bw.grew
}

// budgetWatch is the watch of a session for w, or nil when no budget is
// in force.
func (s *sup) budgetWatch(ctx context.Context, st *contracts.State, w *work, tw *transcript.Writer) *budgetWatch {
	b := st.Config.Budgets
	if b == nil || *b == (contracts.Budgets{WarnShare: b.WarnShare}) {
		return nil
	}
	bw := &budgetWatch{b: b, cfg: st.Config, st: st, agent: s.ID, tw: tw}
	// The whole board, for what only it holds: an agent's sessions on
	// every task, and the goal's figure when the goal keeps none (see
	// contracts.GoalSpendUnder). A goal that keeps its own, with no
	// agent budget, needs the header and the session's task alone.
	whole := b.AgentTokens > 0 || b.AgentUSD > 0 || st.Goal.Spend == nil
	if whole {
		if all, err := s.wholeBoard(ctx); err == nil {
			bw.st = all
		}
	}
	if s.Role == contracts.RoleCoder && w.task != nil {
		bw.task = bw.st.Task(w.task.ID)
		if tb, ok := s.Board.(taskBoard); ok && !whole {
			if t, err := tb.Task(ctx, "", w.task.ID); err == nil {
				bw.task = t
			}
		}
	}
	return bw
}

// taskBoard reads one task whole, history included.
type taskBoard interface {
	Task(ctx context.Context, rev, id string) (*contracts.Task, error)
}

// wholeBoard reads the whole state, when the board can.
func (s *sup) wholeBoard(ctx context.Context) (*contracts.State, error) {
	bb, ok := s.Board.(budgetBoard)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return bb.State(ctx, "")
}

// lines are the budgets in force against the board's figures plus live.
func (bw *budgetWatch) lines(live contracts.Usage) []contracts.BudgetLine {
	out := contracts.SessionBudget(bw.b, live)
	if bw.task != nil {
		out = append(out, contracts.TaskBudget(bw.b, bw.task, live)...)
	}
	out = append(out, contracts.AgentBudget(bw.b, bw.st, bw.agent, live)...)
	return append(out, contracts.GoalBudget(bw.b, bw.st, live)...)
}

// seen counts the goal from the board as it moved while the session runs
// (st): a session that ended beside this one, on another supervisor,
// counts at once, so that concurrent sessions do not each spend up to the
// whole goal budget.
func (bw *budgetWatch) seen(st *contracts.State) {
	if bw == nil || st == nil || bw.st == nil || st.Goal.Spend == nil || st.Goal.ID != bw.st.Goal.ID {
		return
	}
	cp := *bw.st
	cp.Goal.Spend = st.Goal.Spend
	bw.st = &cp
}

// check reports the first budget the session has gone over.
func (bw *budgetWatch) check() (contracts.BudgetLine, bool) {
	if bw == nil {
		return contracts.BudgetLine{}, false
	}
	live := bw.tw.Spent()
	if live.CostSource != contracts.CostReported {
		// Priced from the table while the CLI has not said what it cost.
		live, _ = bw.cfg.Price(live)
	}
	return contracts.FirstOver(bw.lines(live))
}

// stopOverBudget stops the session, on the timebox path (SIGINT, then
// SIGTERM after grace), once it has gone over a budget, and returns why;
// "" while it is within them.
func (s *sup) stopOverBudget(bw *budgetWatch, cmd *exec.Cmd, done chan error, grace time.Duration) string {
	line, over := bw.check()
	if !over {
		return ""
	}
	bw.over = &line
	s.interrupt(cmd, done, grace, EventTimebox, line.Exceeded())
	return line.Exceeded()
}

// overBudget handles a session stopped for a budget, once its end is
// recorded (with what it spent): a session budget is a timebox (the next
// session starts from the worktree, IdleLimit of them give the task up); a
// task over its budget is BLOCKED for the planner with the figures; an
// agent over its budget gives back what it holds and its supervisor stops
// (ErrOverBudget); a goal over its budget pauses the team.
func (s *sup) overBudget(ctx context.Context, w *work, ses *session, line contracts.BudgetLine) error {
	why := line.Exceeded()
	switch {
	case strings.HasPrefix(line.Key, "task_") && w.task != nil:
		s.blockForBudget(ctx, w.task.ID, why)
		return nil
	case strings.HasPrefix(line.Key, "agent_"):
		return s.agentOverBudget(ctx, w, why)
	case strings.HasPrefix(line.Key, "goal_"):
		s.pauseForBudget(ctx, w)
		return nil
	}
	return s.idle(ctx, w, ses, why)
}

// budgetQuestions are what a task BLOCKED for its budget asks the planner.
func budgetQuestions(key string) []string {
	return []string{
		fmt.Sprintf("Raise the budget? (git liza budget --%s N)", strings.ReplaceAll(key, "_", "-")),
		"Split the task?",
	}
}

// blockForBudget blocks the coder's task for its budget.
func (s *sup) blockForBudget(ctx context.Context, task, why string) {
	key := strings.TrimSuffix(why[strings.LastIndex(why, "(")+1:], ")")
	if err := s.do(func() error {
		_, err := s.Board.Block(context.WithoutCancel(ctx), ops.BlockRequest{Task: task, Reason: why, Questions: budgetQuestions(key)})
		return err
	}); err != nil {
		s.eventf(EventError, task, "block %s for its budget: %v", task, err)
		return
	}
	s.forgetIdle(task)
	s.eventf(EventIdle, task, "%s: BLOCKED for the planner", why)
}

// agentOverBudget gives back what the agent holds (a coder's claim, a
// reviewer's review, for another agent to take) and stops the supervisor.
func (s *sup) agentOverBudget(ctx context.Context, w *work, why string) error {
	if t := w.task; t != nil && s.Role != contracts.RolePlanner {
		side := "coder"
		if s.Role == contracts.RoleReviewer {
			side = "reviewer"
		}
		if err := s.do(func() error {
			_, err := s.Board.Release(context.WithoutCancel(ctx), ops.ReleaseRequest{Task: t.ID, Side: side})
			return err
		}); err != nil {
			s.eventf(EventError, t.ID, "give back %s: %v", t.ID, err)
		}
	}
	s.eventf(EventStopping, taskOf(w), "%s: stopping (git liza budget --agent-tokens N raises it)", why)
	return fmt.Errorf("%w: %s", ErrOverBudget, why)
}

// pauseForBudget pauses the team for the goal's budget, where every clone
// sees it; a coder's task gets a handoff, so that the session after the
// resume continues from the worktree.
//
// It reports whether the team is now halted.
func (s *sup) pauseForBudget(ctx context.Context, w *work) bool {
	bb, ok := s.Board.(budgetBoard)
	if !ok {
		return false
	}
	ctx = context.WithoutCancel(ctx)
	var res *ops.OverBudgetResult
	if err := s.do(func() (err error) { res, err = bb.PauseOverBudget(ctx, ops.Call{}); return }); err != nil {
		s.eventf(EventError, taskOf(w), "pause the team for the goal's budget: %v", err)
		return false
	}
	if res.Changed {
		s.eventf(EventPaused, "", "%s: the team is PAUSED (git liza budget --goal-tokens N, then git liza resume)", res.Reason)
	}
	if t := w.task; t != nil && s.Role == contracts.RoleCoder {
		r := ops.HandoffRequest{Task: t.ID,
			Summary: res.Reason + "; the work so far is in the worktree (its commits, and what is not committed yet)",
			Next:    "continue the task from the worktree (git log, git status); the session was stopped for the goal's budget"}
		if err := s.do(func() error { _, err := s.Board.Handoff(ctx, r); return err }); err != nil {
			s.eventf(EventError, t.ID, "record a handoff on %s: %v", t.ID, err)
		}
	}
	return true
}

// budgetGate runs before a session starts: it starts none over a budget
// the board already shows spent. A goal over its budget pauses the team
// (false: no session); an agent over its own stops the supervisor
// (ErrOverBudget); a coder's task over its budget is BLOCKED (false).
// It returns the watch of the session to start (nil when no budget is in
// force).
func (s *sup) budgetGate(ctx context.Context, st *contracts.State, w *work) (*budgetWatch, bool, error) {
	bw := s.budgetWatch(ctx, st, w, nil)
	if bw == nil {
		return nil, true, nil
	}
	if line, over := contracts.FirstOver(contracts.GoalBudget(bw.b, bw.st, contracts.Usage{})); over {
		s.eventf(EventPaused, taskOf(w), "%s: no session starts", line.Exceeded())
		if !s.pauseForBudget(ctx, &work{}) {
			// Not paused (the board refused): wait before trying again.
			select {
			case <-ctx.Done():
			case <-time.After(s.poll(st)):
			}
		}
		return nil, false, nil
	}
	if line, over := contracts.FirstOver(contracts.AgentBudget(bw.b, bw.st, s.ID, contracts.Usage{})); over {
		return nil, false, s.agentOverBudget(ctx, w, line.Exceeded())
	}
	if line, over := contracts.FirstOver(contracts.TaskBudget(bw.b, bw.task, contracts.Usage{})); over {
		s.blockForBudget(ctx, bw.task.ID, line.Exceeded())
		return nil, false, nil
	}
	return bw, true, nil
}
