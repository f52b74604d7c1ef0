package agent

import (
	"context"
	"errors"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// remoteFailed reports whether err is the shared remote not answering
// (refstore.RemoteDown: no connection, no repository at its address, no
// answer within liza.remoteTimeout), in remote mode, and notes the hold
// (hold.go).
func (s *sup) remoteFailed(err error) bool {
	var u *refstore.ErrUnreachable
	if !s.Remote || !refstore.RemoteDown(err) || !errors.As(err, &u) {
		return false
	}
	s.begin(&s.waits.remote, remoteWords, u.Remote, u.Reason())
	return true
}

// remoteAnswered notes that the remote answered, and says so when it did
// not before.
func (s *sup) remoteAnswered() { s.end(&s.waits.remote, remoteWords) }

// syncRemote fetches the remote's board and notes whether the remote
// answered (remoteAnswered, remoteFailed); it returns the failure that
// is no outage, which the hold does not say.
func (s *sup) syncRemote(ctx context.Context) error {
	err := s.do(func() error { _, err := s.Board.Sync(ctx, ""); return err })
	switch {
	case err == nil:
		s.remoteAnswered()
	case s.remoteFailed(err):
		return nil
	}
	return err
}

// syncDuring fetches the remote's board every d until the returned func is
// called, in remote mode (nothing otherwise): a kill switch set on another
// clone then moves this clone's ref, which watchRun reads; and a remote
// that stops answering meanwhile is noted, so that the session is not
// charged for what that did to it.
func (s *sup) syncDuring(ctx context.Context, d time.Duration) func() {
	if !s.Remote {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	over := make(chan struct{})
	go func() {
		defer close(over)
		every(ctx, d, func() bool {
			_ = s.syncRemote(ctx) // a failure is the next look's to say
			return true
		})
	}()
	return func() { cancel(); <-over }
}
