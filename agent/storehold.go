package agent

import (
	"context"
	"errors"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// storeFailed reports whether err is a push that the shared remote
// refused, in remote mode, while the remote stores nothing: then it notes
// the hold (hold.go). A refusal alone does not tell: one the remote's git
// could not store (refstore.RemoteUnstored) may be a pack over the
// remote's size limit, which an agent can make, and the remote's guard,
// which writes as it verifies, declines what it could not write as it
// declines a forged commit. So a probe tells, unless the hold holds
// already.
func (s *sup) storeFailed(err error) bool {
	var r *refstore.ErrRejected
	if !s.Remote || !errors.As(err, &r) {
		return false
	}
	if s.storeHeld() {
		s.begin(&s.waits.store, storeWords, r.Remote, r.Reason)
		return true
	}
	return s.lookStore(context.Background())
}

// kept reports whether the record of a session's end, r, failed on a
// hold (heldRecord), and keeps it to record once the hold ends.
func (s *sup) kept(err error, r ops.SessionRequest) bool {
	if !s.heldRecord(err) {
		return false
	}
	s.keepRecord(r)
	return true
}

// heldRecord reports whether a session's record failed on a hold. A
// record the remote could not store begins the store's hold whatever a
// probe finds: it is the supervisor's own, and small, where a probe tells
// a hub that cannot store from a push too big for it, which an agent can
// make (a merge); and a hub with a few blocks left stores a probe and not
// the record after it.
func (s *sup) heldRecord(err error) bool {
	var rej *refstore.ErrRejected
	switch {
	case s.holding(err):
	case s.Remote && refstore.RemoteUnstored(err) && errors.As(err, &rej):
		s.begin(&s.waits.store, storeWords, rej.Remote, rej.Reason)
	default:
		return false
	}
	return true
}

// lookStore probes the remote's store (Board.ProbeStore: a push of a few
// hundred bytes, taken away at once): the hold begins (or goes on) when
// the remote cannot store it, and ends when it stored it. It reports
// whether the remote cannot store. A probe that fails otherwise (the
// remote not answering: that hold is noted) tells nothing of the store.
func (s *sup) lookStore(ctx context.Context) bool {
	err := s.do(func() error { return s.Board.ProbeStore(ctx) })
	var r *refstore.ErrRejected
	switch {
	case err == nil:
		s.end(&s.waits.store, storeWords)
	case refstore.RemoteUnstored(err) && errors.As(err, &r):
		s.begin(&s.waits.store, storeWords, r.Remote, r.Reason)
		return true
	default:
		s.remoteFailed(err)
	}
	return false
}

// storeHeld reports whether the store hold holds.
func (s *sup) storeHeld() bool {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	return !s.waits.store.since.IsZero()
}
