package contracts

// AttentionOrder lists the task statuses in the order a person reading
// the board looks at them: what is stuck (blocked, failed to integrate,
// rejected), what waits on a reviewer or a merge, what is being worked,
// what waits to be claimed, drafts, and last what is over.
var AttentionOrder = []Status{
	Blocked, IntegrationFailed, Rejected, ReadyForReview, Approved,
	Claimed, Unclaimed, Draft, Merged, Superseded, Abandoned,
}

// AttentionRank is the position of s in AttentionOrder. A status the
// contract does not know ranks before all of them: a state that holds one
// does not validate, and needs a look first.
func AttentionRank(s Status) int {
	for i, v := range AttentionOrder {
		if v == s {
			return i + 1
		}
	}
	return 0
}

// ReasonOf is the reason a task is where it is, when its status has one:
// why it is blocked, why it was rejected, why it failed to integrate.
func ReasonOf(t *Task) string {
	switch t.Status {
	case Blocked:
		return t.BlockedReason
	case Rejected:
		return t.RejectionReason
	case IntegrationFailed:
		for i := len(t.History) - 1; i >= 0; i-- {
			if e := t.History[i]; e != nil && e.To == string(IntegrationFailed) {
				return e.Reason
			}
		}
	case Superseded, Abandoned:
		return t.RescopeReason
	}
	return ""
}
