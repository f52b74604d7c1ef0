package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

func (e *Env) statusCmd() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "the board: tasks by status, agents and their leases, sprint, kill switches, alarms",
		Flags: []cli.Flag{atFlag()},
		Action: e.action(0, 0, "status [--at REV]", func(ctx context.Context, s *session, _ []string) error {
			rev := s.cmd.String("at")
			snap, err := s.snapshot(ctx, rev)
			if err != nil {
				return err
			}
			now, _ := e.clock()
			// The kill-switch files are those of the checkout now, so
			// they count only on the board at the tip.
			obs, err := s.observe(snap, rev == "", now())
			if err != nil {
				return err
			}
			if obs.State == nil {
				return obs.Err
			}
			b := board(obs.State, now())
			b.Switches, b.Alarms = obs.Switches, obs.Alarms
			b.Mode = contracts.EffectiveMode(obs.Switches)
			return s.printStatus(b)
		}),
	}
}

// Board is the status view of the state.
type Board struct {
	Goal              string                     `json:"goal"`
	GoalStatus        string                     `json:"goal_status"`
	Sprint            string                     `json:"sprint"`
	SprintStatus      string                     `json:"sprint_status"`
	Mode              string                     `json:"mode"`
	IntegrationBranch string                     `json:"integration_branch"`
	Counts            map[contracts.Status]int   `json:"counts"`
	Tasks             []BoardTask                `json:"tasks"`
	Agents            []BoardAgent               `json:"agents"`
	Archived          int                        `json:"archived"`
	Anomalies         int                        `json:"anomalies"`
	Switches          []contracts.Switch         `json:"switches"`
	Alarms            []contracts.Alarm          `json:"alarms"`
	byStatus          map[contracts.Status][]int `json:"-"`
}

// BoardTask is one task on the board.
type BoardTask struct {
	ID          string           `json:"id"`
	Status      contracts.Status `json:"status"`
	Priority    int              `json:"priority"`
	Description string           `json:"description"`
	AssignedTo  string           `json:"assigned_to,omitempty"`
	ReviewingBy string           `json:"reviewing_by,omitempty"`
	Lease       string           `json:"lease,omitempty"`
	DependsOn   []string         `json:"depends_on,omitempty"`
}

// BoardAgent is one agent on the board.
type BoardAgent struct {
	ID          string `json:"id"`
	Role        string `json:"role"`
	Status      string `json:"status"`
	CurrentTask string `json:"current_task,omitempty"`
	Lease       string `json:"lease,omitempty"`
}

func board(st *contracts.State, now time.Time) *Board {
	b := &Board{
		Goal: st.Goal.ID + ": " + st.Goal.Description, GoalStatus: st.Goal.Status,
		Sprint: st.Sprint.ID, SprintStatus: st.Sprint.Status, Mode: "RUNNING",
		IntegrationBranch: st.Config.IntegrationBranch,
		Counts:            map[contracts.Status]int{}, byStatus: map[contracts.Status][]int{},
		Tasks: []BoardTask{}, Agents: []BoardAgent{},
		Switches: []contracts.Switch{}, Alarms: []contracts.Alarm{},
		Archived: len(st.Archive), Anomalies: len(st.Anomalies),
	}
	if st.Control != nil && st.Control.Mode != "" {
		b.Mode = st.Control.Mode
	}
	for _, t := range st.Tasks {
		bt := BoardTask{ID: t.ID, Status: t.Status, Priority: t.Priority, Description: t.Description,
			AssignedTo: t.AssignedTo, ReviewingBy: t.ReviewingBy, DependsOn: t.DependsOn}
		switch t.Status {
		case contracts.Claimed:
			bt.Lease = leaseLeft(t.LeaseExpires, now)
		case contracts.ReadyForReview:
			bt.Lease = leaseLeft(t.ReviewLeaseExpires, now)
		}
		b.Counts[t.Status]++
		b.byStatus[t.Status] = append(b.byStatus[t.Status], len(b.Tasks))
		b.Tasks = append(b.Tasks, bt)
	}
	for _, id := range sortedKeys(st.Agents) {
		a := st.Agents[id]
		b.Agents = append(b.Agents, BoardAgent{ID: id, Role: a.Role, Status: a.Status, CurrentTask: a.CurrentTask, Lease: leaseLeft(a.LeaseExpires, now)})
	}
	return b
}

// leaseLeft says how long a lease has to run, or that it expired.
func leaseLeft(expires string, now time.Time) string {
	if expires == "" {
		return ""
	}
	t, err := contracts.ParseTime(expires)
	if err != nil {
		return "lease unreadable"
	}
	d := t.Sub(now).Round(time.Second)
	if d <= 0 {
		return fmt.Sprintf("expired %s ago", -d)
	}
	return fmt.Sprintf("%s left", d)
}

func (s *session) printStatus(b *Board) error {
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
		idx := b.byStatus[status]
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

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
