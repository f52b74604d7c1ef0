package cas

import (
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// Lease is the term of a lease (config lease_duration) and the expiry of
// one taken or renewed now.
func (tx *Tx) Lease() (time.Duration, string, error) {
	m, err := tx.Meta()
	if err != nil {
		return 0, "", err
	}
	term := time.Duration(m.Config.LeaseDuration) * time.Second
	return term, contracts.FormatTime(tx.Now.Add(term)), nil
}

// LeaseDue reports whether a lease is past half its term (or unreadable):
// the point from which a heartbeat renews it, so that renewals add at most
// two commits per agent per lease period.
func LeaseDue(expires string, now time.Time, term time.Duration) bool {
	at, err := contracts.ParseTime(expires)
	return err != nil || at.Sub(now) < term/2
}
