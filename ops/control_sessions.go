package ops

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// SessionAgent is an agent the board shows in a session.
type SessionAgent struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Task   string `json:"task,omitempty"`
}

// InSession lists the agents the board shows in a session at the tip.
func (s *Service) InSession(ctx context.Context) ([]SessionAgent, error) {
	snap, err := s.Snapshot(ctx, "")
	if err != nil {
		return nil, err
	}
	st, err := snap.Header()
	if err != nil {
		return nil, err
	}
	return InSession(st, s.Now()), nil
}

// InSession lists the agents of st that are at work on a task (WORKING,
// REVIEWING, or STARTING on a task claimed before its checkpoint) under a supervisor whose lease has not ended, in id order.
// It is what the board knows: that the supervisor runs and the agent
// holds work, not whether its CLI process is alive at this instant.
func InSession(st *contracts.State, now time.Time) []SessionAgent {
	var out []SessionAgent
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		a := st.Agents[id]
		if a == nil || a.SupervisorLease == "" || contracts.LeaseOver(a.SupervisorLease, now) {
			continue
		}
		if a.Status == "WORKING" || a.Status == "REVIEWING" || a.Status == "STARTING" && a.CurrentTask != "" {
			out = append(out, SessionAgent{ID: id, Status: a.Status, Task: a.CurrentTask})
		}
	}
	return out
}
