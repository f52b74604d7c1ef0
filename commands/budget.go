package commands

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// budgetFlags are budget's flags by config key: a whole number of tokens
// or USD, and the warning share.
var budgetFlags = []struct{ key, flag, usage string }{
	{"session_tokens", "session-tokens", "tokens one session may spend"},
	{"task_tokens", "task-tokens", "tokens a task's sessions may spend (all iterations)"},
	{"task_usd", "task-usd", "USD a task's sessions may spend"},
	{"agent_tokens", "agent-tokens", "tokens one agent's sessions may spend"},
	{"agent_usd", "agent-usd", "USD one agent's sessions may spend"},
	{"goal_tokens", "goal-tokens", "tokens the goal may spend (the planner's sessions included)"},
	{"goal_usd", "goal-usd", "USD the goal may spend"},
	{"warn_share", "warn", "share of a budget that raises a warning (default 0.8)"},
}

func (e *Env) budgetCmd() *cli.Command {
	const usage = "budget [--session-tokens N] [--task-tokens N] [--task-usd X] [--agent-tokens N] [--agent-usd X] [--goal-tokens N] [--goal-usd X] [--warn SHARE] [--clear]"
	flags := []cli.Flag{&cli.BoolFlag{Name: "clear", Usage: "clear every budget (with budgets named: only those stay in force)"}}
	for _, f := range budgetFlags {
		if strings.HasSuffix(f.key, "_tokens") {
			flags = append(flags, &cli.Int64Flag{Name: f.flag, Usage: f.usage})
		} else {
			flags = append(flags, &cli.Float64Flag{Name: f.flag, Usage: f.usage})
		}
	}
	return &cli.Command{
		Name:  "budget",
		Usage: "the budgets in force and what is spent; with flags, set or clear them",
		Flags: flags,
		Action: e.action(0, 0, usage, func(ctx context.Context, s *session, _ []string) error {
			set := map[string]float64{}
			for _, f := range budgetFlags {
				if !s.cmd.IsSet(f.flag) {
					continue
				}
				if strings.HasSuffix(f.key, "_tokens") {
					set[f.key] = float64(s.cmd.Int64(f.flag))
				} else {
					set[f.key] = s.cmd.Float64(f.flag)
				}
			}
			if len(set) == 0 && !s.cmd.Bool("clear") {
				st, err := s.ops.Budgets(ctx)
				if err != nil {
					return err
				}
				if s.json {
					return s.printJSON(st)
				}
				writeBudgets(s.Stdout, st)
				return nil
			}
			out, err := s.ops.SetBudgets(ctx, ops.BudgetRequest{Call: s.call(), Set: set, Clear: s.cmd.Bool("clear")})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(map[string]any{"budgets": out.Budgets, "changed": out.Changed, "unblocked": out.Unblocked,
					"resumed": out.Resumed, "commit": out.Commit.String(), "replayed": out.Replayed})
			}
			writeBudgetChange(s.Stdout, out)
			return nil
		}),
	}
}

// writeBudgetChange reports a budget change in a line or three.
func writeBudgetChange(w io.Writer, out *ops.BudgetResult) {
	note := replayNote(out.Replayed)
	pairs := ops.BudgetPairs(out.Budgets)
	switch {
	case len(pairs) == 0 && !out.Changed:
		fmt.Fprintf(w, "no budget in force; nothing to clear%s\n", note)
	case len(pairs) == 0:
		fmt.Fprintf(w, "budgets cleared%s\n", note)
	case !out.Changed:
		fmt.Fprintf(w, "budgets unchanged: %s%s\n", strings.Join(pairs, ", "), note)
	default:
		fmt.Fprintf(w, "budgets: %s%s\n", strings.Join(pairs, ", "), note)
	}
	if len(out.Unblocked) > 0 {
		fmt.Fprintf(w, "unblocked (within the new budget): %s\n", strings.Join(out.Unblocked, ", "))
	}
	if out.Resumed {
		fmt.Fprintln(w, "resumed: the goal is within its new budget")
	}
}

// writeBudgets shows the budgets in force and what is spent against each,
// in 80 columns.
func writeBudgets(w io.Writer, st *ops.BudgetStatus) {
	pairs := ops.BudgetPairs(st.Budgets)
	if len(pairs) == 0 {
		fmt.Fprintln(w, "no budget in force (git liza budget --task-tokens N ... sets one)")
	} else {
		fmt.Fprintf(w, "budgets: %s\n", strings.Join(pairs, ", "))
	}
	if len(st.Sessions) > 0 {
		fmt.Fprintln(w, "\nlast sessions:")
		tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
		for _, x := range st.Sessions {
			mark := ""
			if x.Over {
				mark = "over session_tokens"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s tokens\t%s\n", cutTo(contracts.Printable(x.Time), 20), cutTo(contracts.Printable(x.Task), 12),
				cutTo(contracts.Printable(x.Agent), 14), contracts.Thousands(x.Tokens), mark)
		}
		tw.Flush()
	}
	if len(st.Lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "BUDGET\tOF\tSPENT\tLIMIT\tSHARE")
	for _, l := range st.Lines {
		mark := ""
		switch {
		case l.Over():
			mark = "OVER"
		case l.Share() >= st.Warn:
			mark = "warning"
		}
		spent, limit := l.Amounts()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f%% %s\n", l.Key, cutTo(contracts.Printable(l.Of), 22), spent, limit, 100*l.Share(), mark)
	}
	tw.Flush()
}

// cutTo cuts s to n runes, with an ellipsis.
func cutTo(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
