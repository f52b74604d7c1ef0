package cas

import (
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// MaxClockSkew is how far the clocks of honest writers and of whoever
// checks their commits may be apart. A commit's time is its writer's
// clock, which an agent may set as it likes within that bound.
const MaxClockSkew = 5 * time.Minute

// Lease is the term of a lease (config lease_duration) and the expiry of
// one taken or renewed now.
//
// The expiry runs from the operation's time, which is the writer's clock:
// a grant dated ahead of the truth lasts up to MaxClockSkew longer (a
// guarded remote refuses a commit dated further ahead of its own clock).
// It cannot be taken from anyone's clock but the commit's, since every
// verifier must compute the same expiry when it replays the grant; what
// bounds the gain is that takeovers are judged against the judge's clock
// less MaxClockSkew (LeaseEnded), never the taker's date alone.
func (tx *Tx) Lease() (time.Duration, string, error) {
	m, err := tx.Meta()
	if err != nil {
		return 0, "", err
	}
	term := time.Duration(m.Config.LeaseDuration) * time.Second
	return term, contracts.FormatTime(tx.Now.Add(term)), nil
}

// TakeoverTime is the time at which an operation judges leases held by
// someone else: the one it may take over because it ran out (a claim of a
// task whose coder's lease expired, a review taken from a reviewer whose
// review lease expired, a supervisor registration in place of one whose
// lease expired, a release of someone else's lease).
//
// A live operation judges at its own clock less MaxClockSkew: a writer
// whose clock runs fast (by mistake, or to steal a lease) takes nothing
// before the lease is over by every clock within the bound, including the
// holder's, which renews by its own. A verifier sets Takeover to what it
// trusts (see ops.Verifier): never later than the commit's own time.
func (tx *Tx) TakeoverTime() time.Time {
	if !tx.Takeover.IsZero() {
		return tx.Takeover
	}
	return tx.Now.Add(-MaxClockSkew)
}

// LeaseEnded reports whether a lease held by someone else, running until
// expires, has ended for a takeover (see TakeoverTime). A missing or
// unreadable lease has ended: nobody holds it.
func (tx *Tx) LeaseEnded(expires string) bool {
	return contracts.LeaseOver(expires, tx.TakeoverTime())
}

// Held words why a lease that has run out by the operation's own time is
// not yet free to take: "" when it has not run out by that time either
// (the holder's expiry says enough) or when it is free.
func (tx *Tx) Held(expires string) string {
	if tx.LeaseEnded(expires) || !contracts.LeaseOver(expires, tx.Now) {
		return ""
	}
	if !tx.Takeover.IsZero() {
		return "; a takeover is judged at " + contracts.FormatTime(tx.Takeover) + " by the clock here, not at the operation's date (" + tx.NowString() + ")"
	}
	at, _ := contracts.ParseTime(expires)
	return "; a lease is taken over " + MaxClockSkew.String() + " after it ends, as clocks may differ by that much (from " +
		contracts.FormatTime(at.Add(MaxClockSkew)) + ")"
}

// LeaseDue reports whether a lease is past half its term (or unreadable):
// the point from which a heartbeat renews it, so that renewals add at most
// two commits per agent per lease period.
func LeaseDue(expires string, now time.Time, term time.Duration) bool {
	at, err := contracts.ParseTime(expires)
	return err != nil || at.Sub(now) < term/2
}
