package contracts

import (
	"maps"
	"slices"
)

// Leftovers lists what the current rules no longer write but an older
// git-liza did, and which a board may therefore still hold without being
// unreadable: a coder with a CLAIMED task beside one awaiting review or
// sent back (ActiveTwice), and agent entries an operation did not update
// (AgentLeftovers). No operation made under the current rules writes one
// (the update loop refuses it); an import is held to them as well. The
// live validate shows them as warnings.
func Leftovers(s *State) []Problem {
	if s == nil {
		return nil
	}
	return append(ActiveTwice(s), AgentLeftovers(s)...)
}

// ActiveTwice lists the coders assigned to more than one active task
// (liza-validate.sh: "Agent assigned to multiple active tasks
// simultaneously"), beyond two CLAIMED tasks, which Validate refuses
// itself. The seed's validator rejects such a state, and so does validate
// --file; a live board that an older git-liza left that way (its first
// rules let a coder claim beside a task awaiting review) stays readable,
// with a warning, until its coder's work moves on.
func ActiveTwice(s *State) []Problem {
	if s == nil {
		return nil
	}
	var ps problems
	coding := map[string]*Task{}
	for _, t := range s.Tasks {
		if t == nil || t.AssignedTo == "" || !t.Status.Active() {
			continue
		}
		if other, ok := coding[t.AssignedTo]; ok && (t.Status != Claimed || other.Status != Claimed) {
			ps.addf("tasks["+t.ID+"]", "%s already holds %s task %s (one active task per coder)", t.AssignedTo, other.Status, other.ID)
		} else if !ok {
			coding[t.AssignedTo] = t
		}
	}
	return ps
}

// AgentLeftovers lists the agent entries that say what their agent no
// longer holds (AgentLeftover); the next operation on the agent puts each
// right. The seed's validator has no such check.
func AgentLeftovers(s *State) []Problem {
	if s == nil {
		return nil
	}
	var ps problems
	live := make(map[string]*Task, len(s.Tasks))
	for _, t := range s.Tasks {
		if t != nil {
			live[t.ID] = t
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.Agents)) {
		if msg := AgentLeftover(id, s.Agents[id], live[agentTask(s.Agents[id])]); msg != "" {
			ps.add("agents["+id+"]", msg)
		}
	}
	return ps
}

// AgentLeftover says what is left over in agent id's entry a given t, the
// live task its current_task names (nil when there is none): an IDLE
// agent keeping a lease, or a WORKING or REVIEWING one that does not hold
// t (HolderProblem). It returns "" when nothing is.
func AgentLeftover(id string, a *Agent, t *Task) string {
	if a != nil && a.Status == "IDLE" && a.LeaseExpires != "" {
		// An idle agent holds nothing; its supervisor's lease, if any,
		// is supervisor_lease.
		return "IDLE but keeps a lease_expires"
	}
	return HolderProblem(id, a, t)
}

func agentTask(a *Agent) string {
	if a == nil {
		return ""
	}
	return a.CurrentTask
}
