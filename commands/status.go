package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) statusCmd() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "the board: tasks by status, agents and their leases, sprint, kill switches, alarms",
		Flags: []cli.Flag{atFlag()},
		Action: e.action(0, 0, "status [--at REV]", func(ctx context.Context, s *session, _ []string) error {
			b, err := s.ops.Status(ctx, s.cmd.String("at"))
			if err != nil {
				return err
			}
			return s.printStatus(b)
		}),
	}
}

func (s *session) printStatus(b *ops.Board) error {
	if s.json {
		return s.printJSON(b)
	}
	w := s.Stdout
	fmt.Fprintf(w, "Goal %s [%s]\n", b.Goal, b.GoalStatus)
	fmt.Fprintf(w, "Sprint %s [%s]  mode %s  integration branch %s\n", b.Sprint, b.SprintStatus, b.Mode, b.IntegrationBranch)
	var counts []string
	for _, status := range contracts.Statuses {
		if n := b.Counts[status]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", status, n))
		}
	}
	fmt.Fprintf(w, "\nTasks: %d", len(b.Tasks))
	if len(counts) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(counts, ", "))
	}
	if b.Archived > 0 {
		fmt.Fprintf(w, ", %d archived", b.Archived)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, status := range contracts.Statuses {
		idx := b.ByStatus[status]
		if len(idx) == 0 {
			continue
		}
		fmt.Fprintf(tw, "  %s\n", status)
		for _, i := range idx {
			t := b.Tasks[i]
			who := t.AssignedTo
			if t.ReviewingBy != "" {
				who += " / " + t.ReviewingBy
			}
			fmt.Fprintf(tw, "    %s\tp%d\t%s\t%s\t%s\n", t.ID, t.Priority, who, t.Lease, truncate(t.Description, 60))
		}
	}
	tw.Flush()
	if len(b.Agents) > 0 {
		fmt.Fprintf(w, "\nAgents: %d\n", len(b.Agents))
		for _, a := range b.Agents {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", a.ID, a.Role, a.Status, a.CurrentTask, a.Lease)
		}
		tw.Flush()
	}
	if b.Anomalies > 0 {
		fmt.Fprintf(w, "\nAnomalies: %d (git liza show --json | jq .anomalies)\n", b.Anomalies)
	}
	if len(b.Switches) > 0 {
		fmt.Fprintf(w, "\nKill switches: %d\n", len(b.Switches))
		for _, sw := range b.Switches {
			cells := []string{sw.Mode, sw.Source, "since unknown"}
			if !sw.Since.IsZero() {
				cells[2] = "since " + contracts.FormatTime(sw.Since)
			}
			if sw.By != "" {
				cells = append(cells, "by "+sw.By)
			}
			if sw.Reason != "" {
				cells = append(cells, sw.Reason)
			}
			fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
	if len(b.Alarms) > 0 {
		fmt.Fprintf(w, "\nAlarms: %d\n", len(b.Alarms))
		for _, a := range b.Alarms {
			fmt.Fprintf(w, "  %s\n", a.Message)
		}
	}
	return nil
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
