package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

const spendUsage = "usage [--task ID | --agent ID] [--goal | --since TIME] [--at REV] [--json]"

// usageTaskRows is how many tasks the text lists; --json has them all.
const usageTaskRows = 20

func (e *Env) usageCmd() *cli.Command {
	return &cli.Command{
		Name:  "usage",
		Usage: "what the agents' sessions spent, in tokens and money: by task, agent, role, model and outcome",
		Description: "Counts the usage each session_ended event records: by default the sessions of the current\n" +
			"sprint, with --goal every session of the goal, with --since those that ended since a time.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "only the sessions on task `ID`"},
			&cli.StringFlag{Name: "agent", Local: true, Usage: "only the sessions of agent `ID`"},
			&cli.BoolFlag{Name: "goal", Usage: "every session of the goal, not only the sprint's"},
			&cli.StringFlag{Name: "since", Usage: "only the sessions that ended since `TIME` (2026-01-17T10:00:00Z, or a duration back: 2h)"},
			atFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, spendUsage); err != nil {
				return err
			}
			r := ops.UsageRequest{Rev: cmd.String("at"), Task: cmd.String("task"), Agent: cmd.String("agent"), Goal: cmd.Bool("goal")}
			if r.Task != "" && r.Agent != "" {
				return contracts.Invalidf("--task and --agent both say whose spend to count: pass one")
			}
			if r.Agent != "" {
				if _, err := contracts.ParseAgentID(r.Agent); err != nil {
					return err
				}
			}
			// --agent here filters the sessions; it does not say who acts.
			s, err := e.openAs(cmd, "")
			if err != nil {
				return err
			}
			if v := cmd.String("since"); v != "" {
				if r.Goal {
					return contracts.Invalidf("--goal and --since both say which sessions to count: pass one")
				}
				if r.Since, err = parseSince(v, s.ops.Now()); err != nil {
					return err
				}
			}
			rep, err := s.ops.Usage(ctx, r)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(rep)
			}
			var out bytes.Buffer
			writeUsage(&out, rep)
			return writeFitted(e.Stdout, out.String(), e.width())
		},
	}
}

// parseSince reads --since: a time as the board writes them (RFC 3339) or
// a positive duration back from now.
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, contracts.Invalidf("--since %s: give a time (2026-01-17T10:00:00Z) or a duration back from now (2h)", contracts.Printable(v))
}

// writeUsage writes a usage report for a person, in at most 80 columns:
// the total by kind of token, the goal's budget, then each breakdown.
func writeUsage(w io.Writer, rep *ops.UsageReport) {
	p := contracts.Printable
	var scope string
	switch rep.Scope {
	case ops.ScopeGoal:
		scope = "Goal " + p(rep.Goal) + ", every session"
	case ops.ScopeSince:
		scope = "Sessions ended since " + rep.Since
	default:
		scope = "Sprint " + p(rep.Sprint)
		if rep.Since != "" {
			scope += ", sessions ended since " + rep.Since
		}
	}
	switch {
	case rep.Task != "":
		scope += ", task " + p(rep.Task)
	case rep.Agent != "":
		scope += ", agent " + p(rep.Agent)
	}
	t := rep.Total
	fmt.Fprintf(w, "%s\n", scope)
	fmt.Fprintf(w, "  %s: %s tokens, %s\n", plural(t.Sessions, "session"), contracts.Thousands(t.Tokens), contracts.Dollars(t.CostUSD))
	fmt.Fprintf(w, "  input %s, output %s, cache read %s, cache write %s\n",
		contracts.Thousands(t.InputTokens), contracts.Thousands(t.OutputTokens), contracts.Thousands(t.CacheReadTokens), contracts.Thousands(t.CacheWriteTokens))
	if t.Unpriced > 0 {
		fmt.Fprintf(w, "  %s of a model with no price cost $0 here (config.prices)\n", plural(t.Unpriced, "session"))
	}
	if u := rep.Unscoped; u.Tokens > 0 || u.CostUSD > 0 {
		fmt.Fprintf(w, "  not counted: %s tokens, %s of sessions without a task (a planner's),\n", contracts.Thousands(u.Tokens), contracts.Dollars(u.CostUSD))
		fmt.Fprintf(w, "  which the board keeps as a sum with no time\n")
	}
	if rep.Scope == ops.ScopeSprint && slices.ContainsFunc(rep.ByOutcome, func(r ops.UsageRow) bool { return r.Outcome == ops.OutcomePlanning }) {
		fmt.Fprintf(w, "  planning: the sessions without a task (a planner's) since the goal began,\n")
		fmt.Fprintf(w, "  which the board keeps as a sum with no time\n")
	}
	if b := rep.Budget; b != nil {
		fmt.Fprintf(w, "%s\n", budgetLine(b))
	}
	if t.Sessions == 0 {
		return
	}
	section := func(title string, rows []ops.UsageRow, name func(ops.UsageRow) string, limit int) {
		fmt.Fprintf(w, "\n%-40s %8s %14s %12s\n", title, "sessions", "tokens", "cost")
		for i, r := range rows {
			if limit > 0 && i == limit {
				fmt.Fprintf(w, "  … %d more: git liza usage --json\n", len(rows)-limit)
				break
			}
			// A planner's task-less sessions are a sum on its agent
			// entry, their number not kept: "-", not 0.
			n := "-"
			if r.Sessions > 0 {
				n = strconv.Itoa(r.Sessions)
			}
			fmt.Fprintf(w, "  %s %8s %14s %12s\n", cell(name(r), 38), n, contracts.Thousands(r.Tokens), contracts.Dollars(r.CostUSD))
		}
	}
	section("By outcome", rep.ByOutcome, func(r ops.UsageRow) string { return r.Outcome }, 0)
	section("By role", rep.ByRole, func(r ops.UsageRow) string { return r.Role }, 0)
	section("By model", rep.ByModel, func(r ops.UsageRow) string { return p(r.Model) }, 0)
	section("By agent", rep.ByAgent, func(r ops.UsageRow) string { return p(r.Agent) }, 0)
	if len(rep.ByTask) > 0 {
		section("By task", rep.ByTask, func(r ops.UsageRow) string { return p(r.Task) + " " + p(r.Status) }, usageTaskRows)
	}
}

// budgetLine is the goal's spend against its budget.
func budgetLine(b *ops.SpendBudget) string {
	var parts []string
	if b.GoalTokens > 0 {
		parts = append(parts, fmt.Sprintf("%s of %s tokens (%s)", contracts.Thousands(b.Spent.Tokens), contracts.Thousands(b.GoalTokens), percent(b.TokensShare)))
	}
	if b.GoalUSD > 0 {
		parts = append(parts, fmt.Sprintf("%s of %s (%s)", contracts.Dollars(b.Spent.CostUSD), contracts.Dollars(b.GoalUSD), percent(b.USDShare)))
	}
	return "Goal budget: " + strings.Join(parts, ", ")
}

// cell is s cut or padded to n columns.
func cell(s string, n int) string {
	if utf8.RuneCountInString(s) > n {
		s = fit(s, n)
	}
	return s + strings.Repeat(" ", n-utf8.RuneCountInString(s))
}

func percent(share float64) string { return fmt.Sprintf("%.0f%%", share*100) }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
