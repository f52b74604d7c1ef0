package ops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// Board is the status view of the state.
type Board struct {
	Goal              string                   `json:"goal"`
	GoalStatus        string                   `json:"goal_status"`
	Sprint            string                   `json:"sprint"`
	SprintStatus      string                   `json:"sprint_status"`
	Mode              string                   `json:"mode"`
	IntegrationBranch string                   `json:"integration_branch"`
	Counts            map[contracts.Status]int `json:"counts"`
	Tasks             []BoardTask              `json:"tasks"`
	Agents            []BoardAgent             `json:"agents"`
	Archived          int                      `json:"archived"`
	Anomalies         int                      `json:"anomalies"`
	Switches          []contracts.Switch       `json:"switches"`
	Alarms            []contracts.Alarm        `json:"alarms"`
	// ByStatus holds, for each status, the indexes of its tasks in Tasks.
	ByStatus map[contracts.Status][]int `json:"-"`
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

// Status is the board at rev (or at the tip, with the kill-switch files of
// the main checkout, which count only there): tasks by status, agents and
// their leases, the sprint, kill switches and alarms. A state that cannot
// be read is an error.
func (s *Service) Status(ctx context.Context, rev string) (*Board, error) {
	snap, err := s.Snapshot(ctx, rev)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	obs, err := s.Observe(snap, rev == "", now)
	if err != nil {
		return nil, err
	}
	if obs.State == nil {
		return nil, obs.Err
	}
	b := NewBoard(obs.State, now)
	b.Switches, b.Alarms = obs.Switches, obs.Alarms
	b.Mode = contracts.EffectiveMode(obs.Switches)
	return b, nil
}

// NewBoard is the board of st at now, without switches or alarms.
func NewBoard(st *contracts.State, now time.Time) *Board {
	b := &Board{
		Goal: st.Goal.ID + ": " + st.Goal.Description, GoalStatus: st.Goal.Status,
		Sprint: st.Sprint.ID, SprintStatus: st.Sprint.Status, Mode: "RUNNING",
		IntegrationBranch: st.Config.IntegrationBranch,
		Counts:            map[contracts.Status]int{}, ByStatus: map[contracts.Status][]int{},
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
			bt.Lease = LeaseLeft(t.LeaseExpires, now)
		case contracts.ReadyForReview:
			bt.Lease = LeaseLeft(t.ReviewLeaseExpires, now)
		}
		b.Counts[t.Status]++
		b.ByStatus[t.Status] = append(b.ByStatus[t.Status], len(b.Tasks))
		b.Tasks = append(b.Tasks, bt)
	}
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		a := st.Agents[id]
		lease := a.LeaseExpires
		if lease == "" {
			lease = a.SupervisorLease // an idle agent's supervisor
		}
		b.Agents = append(b.Agents, BoardAgent{ID: id, Role: a.Role, Status: a.Status, CurrentTask: a.CurrentTask, Lease: LeaseLeft(lease, now)})
	}
	return b
}

// LeaseLeft says how long a lease has to run, or that it expired.
func LeaseLeft(expires string, now time.Time) string {
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
