package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

func (e *Env) sprintCmd() *cli.Command {
	const usage = "usage: git liza sprint checkpoint | metrics"
	return &cli.Command{
		Name:  "sprint",
		Usage: "sprint reports: checkpoint (halt the team and summarise the sprint) and metrics",
		Commands: []*cli.Command{
			{
				Name:   "checkpoint",
				Usage:  "halt the team in CHECKPOINT and record the sprint summary for the human",
				Action: e.action(0, 0, "sprint checkpoint", func(ctx context.Context, s *session, _ []string) error { return s.sprintCheckpoint(ctx) }),
			},
			{
				Name:   "metrics",
				Usage:  "recompute sprint.metrics from the tasks and their histories (written only when they changed)",
				Action: e.action(0, 0, "sprint metrics", func(ctx context.Context, s *session, _ []string) error { return s.sprintMetrics(ctx) }),
			},
		},
		Action: func(context.Context, *cli.Command) error { return contracts.Invalidf("%s", usage) },
	}
}

func (s *session) sprintCheckpoint(ctx context.Context) error {
	out, err := s.ops.SprintCheckpoint(ctx, s.call())
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	fmt.Fprint(s.Stdout, contracts.PrintableText(out.Markdown()))
	if out.SummaryPath != "" {
		fmt.Fprintf(s.Stdout, "\nsummary written to %s\n", out.SummaryPath)
	}
	fmt.Fprintf(s.Stdout, "the team is in %s; git liza resume lets it go on\n", out.Mode)
	return nil
}

func (s *session) sprintMetrics(ctx context.Context) error {
	out, err := s.ops.SprintMetrics(ctx, s.call())
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	m := out.Metrics
	fmt.Fprintf(s.Stdout, "%s metrics as of %s\n", out.Sprint, m.ComputedAt)
	var byStatus []string
	for _, st := range contracts.Statuses {
		if n := m.ByStatus[string(st)]; n > 0 {
			byStatus = append(byStatus, fmt.Sprintf("%s %d", st, n))
		}
	}
	tw := tabwriter.NewWriter(s.Stdout, 0, 2, 2, ' ', 0)
	for _, row := range []struct {
		name  string
		value any
	}{
		{"tasks_done", m.TasksDone},
		{"tasks_in_progress", m.TasksInProgress},
		{"tasks_blocked", m.TasksBlocked},
		{"iterations_total", m.IterationsTotal},
		{"review_cycles_total", m.ReviewCyclesTotal},
		{"review_verdict_approvals", m.ReviewVerdictApprovals},
		{"review_verdict_rejections", m.ReviewVerdictRejections},
		{"review_verdict_count", m.ReviewVerdictCount},
		{"review_verdict_approval_rate_percent", m.ReviewVerdictApprovalRatePercent},
		{"task_submitted_for_review_count", m.TaskSubmittedForReviewCount},
		{"task_outcome_approval_rate_percent", m.TaskOutcomeApprovalRatePercent},
		{"completion_rate", m.CompletionRate},
		{"approve_to_merge_mean_seconds", m.ApproveToMergeMeanSeconds},
		{"approve_to_merge_max_seconds", m.ApproveToMergeMaxSeconds},
		{"approve_to_merge_count", m.ApproveToMergeCount},
		{"tasks_planned", m.TasksPlanned},
		{"tasks_total", m.TasksTotal},
		{"tasks_merged", m.TasksMerged},
		{"tasks_unclaimed", m.TasksUnclaimed},
		{"by_status", strings.Join(byStatus, ", ")},
		{"avg_iterations", m.AvgIterations},
		{"approvals", m.Approvals},
		{"rejections", m.Rejections},
		{"approval_rate", m.ApprovalRate},
		{"submit_to_verdict_mean_seconds", m.SubmitToVerdictMeanSeconds},
		{"submit_to_verdict_max_seconds", m.SubmitToVerdictMaxSeconds},
		{"tasks_ever_blocked", m.TasksEverBlocked},
		{"blocked_share", m.BlockedShare},
		{"five_loop_pauses", m.FiveLoopPauses},
		{"five_loop_pause_frequency", m.FiveLoopPauseFrequency},
	} {
		fmt.Fprintf(tw, "%s\t%v\n", row.name, row.value)
	}
	if sp := m.Spend; sp != nil {
		for _, row := range []struct {
			name string
			u    contracts.Usage
		}{
			{"spend_total", sp.Total}, {"spend_planning", sp.Planning}, {"spend_merged", sp.Merged},
			{"spend_per_merged_task", sp.PerMergedTask}, {"spend_not_landed", sp.NotLanded},
			{"spend_rejected_iterations", sp.RejectedIterations}, {"spend_abandoned", sp.Abandoned},
			{"spend_superseded", sp.Superseded}, {"spend_blocked", sp.Blocked}, {"spend_in_flight", sp.InFlight},
		} {
			fmt.Fprintf(tw, "%s\t%d tokens, $%.4f\n", row.name, row.u.Tokens(), row.u.CostUSD)
		}
	}
	tw.Flush()
	for _, w := range m.Warnings {
		fmt.Fprintf(s.Stderr, "git-liza: warning: %s\n", w)
	}
	if out.Changed {
		fmt.Fprintln(s.Stdout, "sprint.metrics updated")
	} else {
		fmt.Fprintf(s.Stdout, "sprint.metrics unchanged since %s\n", out.StoredAt)
	}
	return nil
}
