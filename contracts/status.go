package contracts

// Status is a task status.
type Status string

// The task statuses of seed 004.
const (
	Draft             Status = "DRAFT"
	Unclaimed         Status = "UNCLAIMED"
	Claimed           Status = "CLAIMED"
	ReadyForReview    Status = "READY_FOR_REVIEW"
	Rejected          Status = "REJECTED"
	Approved          Status = "APPROVED"
	Blocked           Status = "BLOCKED"
	IntegrationFailed Status = "INTEGRATION_FAILED"
	Merged            Status = "MERGED"
	Superseded        Status = "SUPERSEDED"
	Abandoned         Status = "ABANDONED"
)

// Statuses lists every task status in lifecycle order.
var Statuses = []Status{
	Draft, Unclaimed, Claimed, ReadyForReview, Rejected, Approved,
	Blocked, IntegrationFailed, Merged, Superseded, Abandoned,
}

// Known reports whether s is one of the seed's statuses.
func (s Status) Known() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool {
	return s == Merged || s == Superseded || s == Abandoned
}

// InFlight reports whether a task in s holds a coder's work that is not yet
// merged: from CLAIMED to APPROVED.
func (s Status) InFlight() bool {
	switch s {
	case Claimed, ReadyForReview, Rejected, Approved, IntegrationFailed:
		return true
	}
	return false
}
