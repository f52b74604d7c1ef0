package ops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// NoteReaders says who reads a note for target (a task, an agent, or
// everyone when empty) and when, from the board as it is now; by is who
// wrote it. It follows how notes reach agents: a coder's or a reviewer's
// prompt holds the notes for everyone, for the agent and for its task
// when its session starts (contracts.SessionContext), and every note not
// written by a planner is pending for the planner, whose next wake it
// triggers (contracts.PendingNotes, TriggerHumanNotes).
func (s *Service) NoteReaders(ctx context.Context, target, by string) ([]string, error) {
	snap, err := s.Snapshot(ctx, "")
	if err != nil {
		return nil, err
	}
	st, err := snap.LoadLive()
	if err != nil {
		return nil, err
	}
	return NoteReaders(st, target, by, s.Now()), nil
}

// NoteReaders is Service.NoteReaders on st at now.
func NoteReaders(st *contracts.State, target, by string, now time.Time) []string {
	var out []string
	alive := func(id string) bool {
		a := st.Agents[id]
		return a != nil && a.SupervisorLease != "" && !contracts.LeaseOver(a.SupervisorLease, now)
	}
	// who says when agent reads the note, and whether anything runs it.
	who := func(agent, when string) string {
		role, _ := contracts.ParseAgentID(agent)
		if alive(agent) {
			return fmt.Sprintf("%s reads it %s (its supervisor is running)", agent, when)
		}
		return fmt.Sprintf("%s reads it %s; no supervisor runs it now: git liza agent %s --agent %s (or git liza run) starts one", agent, when, role.IDPrefix(), agent)
	}
	var task *contracts.Task
	for _, t := range st.Tasks {
		if t != nil && t.ID == target {
			task = t
		}
	}
	role, agentErr := contracts.ParseAgentID(target)
	switch {
	case target == "":
		out = append(out, "every coder and reviewer reads it at its next session")
	case task != nil:
		out = append(out, taskReader(task, who))
	case agentErr == nil && role != contracts.RolePlanner:
		out = append(out, who(target, "at its next session"))
	case agentErr != nil:
		out = append(out, fmt.Sprintf("%s is not a live task: no coder or reviewer session will read it", target))
	}
	if r, err := contracts.ParseAgentID(by); err == nil && r == contracts.RolePlanner {
		return out // a planner's note is its answer: no planner reads it again
	}
	var planners []string
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		if r, err := contracts.ParseAgentID(id); err == nil && r == contracts.RolePlanner && alive(id) {
			planners = append(planners, id)
		}
	}
	if len(planners) > 0 {
		out = append(out, fmt.Sprintf("the planner reads it at its next wake (%s is running; a note wakes it)", planners[0]))
	} else {
		out = append(out, "the planner reads it at its next wake; no planner is running: git liza agent planner starts one")
	}
	return out
}

// taskReader says which session reads a note for t, by its status.
func taskReader(t *contracts.Task, who func(agent, when string) string) string {
	id := t.ID
	if park, ok := contracts.ParkOf(t); ok {
		return fmt.Sprintf("%s is parked by %s: the coder that resumes it reads it at its next session on %s (%s)", id, park.By, id, contracts.ResumeHint)
	}
	switch {
	case t.Status == contracts.ReadyForReview && t.ReviewingBy != "":
		return who(t.ReviewingBy, "at its next session reviewing "+id)
	case t.Status == contracts.ReadyForReview:
		return fmt.Sprintf("the reviewer that takes %s's review reads it at that session", id)
	case t.Status == contracts.Approved:
		return fmt.Sprintf("%s is APPROVED and waits for its merge, which runs no session: its coder reads it only if the merge fails and the task comes back", id)
	case t.Status.Terminal():
		return fmt.Sprintf("%s is %s: no coder or reviewer session will read it", id, t.Status)
	case t.AssignedTo != "" && (t.Status == contracts.Claimed || t.Status == contracts.Rejected || t.Status == contracts.IntegrationFailed):
		return who(t.AssignedTo, "at its next session on "+id)
	case t.Status == contracts.Blocked:
		return fmt.Sprintf("%s is BLOCKED: the coder that works on it once it is unblocked reads it at that session", id)
	}
	return fmt.Sprintf("the coder that claims %s reads it at its first session on it", id)
}
