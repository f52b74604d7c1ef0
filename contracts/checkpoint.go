package contracts

// CurrentCheckpoint is the pre-execution checkpoint of the task's current
// iteration: the latest one recorded since the claim that began it (any
// event that moved the task to CLAIMED: a claim, a resumption after a
// rejection or a failed integration, a takeover, a reclaim), or nil. A
// checkpoint written before that claim was for an approach the review or
// the integration has since turned down, or for another coder's; seed 000
// has the coder "Update checkpoint with new approach" on rejection.
func CurrentCheckpoint(t *Task) *HistoryEvent {
	if t == nil {
		return nil
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		ev := t.History[i]
		switch {
		case ev == nil:
		case ev.Checkpoint != nil && ev.Event == "pre_execution_checkpoint":
			return ev
		case ev.To == string(Claimed):
			return nil
		}
	}
	return nil
}

// CheckCheckpointed refuses a submission of t when its current iteration
// has no pre-execution checkpoint (seed 000: "Before any implementation,
// the agent MUST write a checkpoint"), naming the command that records one.
func CheckCheckpointed(t *Task) error {
	if CurrentCheckpoint(t) != nil {
		return nil
	}
	return Invalidf("task %s has no pre-execution checkpoint in iteration %d: record one first: git liza checkpoint %s --intent TEXT --validation TEXT --files A,B",
		t.ID, t.Iteration, t.ID)
}
