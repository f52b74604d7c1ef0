package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// A remote that does not answer (refstore.RemoteDown: no connection, no
// repository at its address, no answer within liza.remoteTimeout) is an
// outage of the whole team's board, not a failure of an agent or of a
// task: every agent's git liza fails on it alike. In remote mode the
// supervisor then
//
//   - says so once, every outageRemind again while it lasts, and once when
//     the remote answers again, with how long it did not;
//   - starts no session and no merge until it answers, and looks again
//     after a delay that doubles from a second (its poll, when shorter) up
//     to outageMaxWait, where it looked at every poll;
//   - counts no session that failed while it did not answer as a crash or
//     an idle session (its agent's own git liza commands failed on it):
//     the session's end is recorded as what it was, saying so, and the
//     task's next session starts once the remote answers;
//   - records the ends of sessions it could not record then once the
//     remote answers, and charges no merge that failed on it to its task.
//
// It waits as long as the outage lasts: a team left unattended goes on
// where it was when the remote comes back. A remote that refuses the
// credentials or the access is not an outage: that lasts until a person
// acts.
type outage struct {
	mu      sync.Mutex
	since   time.Time // when the remote stopped answering; zero while it answers
	last    time.Time // when it last did not answer
	remote  string
	wait    time.Duration // the delay before the next look
	told    time.Time     // when the outage was last said
	pending []ops.SessionRequest
}

// How long a supervisor waits at most between two looks at a remote that
// does not answer, and how often it says again that it does not.
const (
	outageMaxWait = 30 * time.Second
	outageRemind  = 10 * time.Minute
)

// remoteFailed reports whether err is the remote not answering, in remote
// mode, and notes it: the first failure of an outage is said, and a
// reminder every outageRemind.
func (s *sup) remoteFailed(err error) bool {
	var u *refstore.ErrUnreachable
	if !s.Remote || !refstore.RemoteDown(err) || !errors.As(err, &u) {
		return false
	}
	o := &s.outage
	now := time.Now()
	o.mu.Lock()
	first := o.since.IsZero()
	if first {
		o.since, o.remote, o.wait = now, u.Remote, 0
	}
	o.last = now
	remind := !first && now.Sub(o.told) >= outageRemind
	if first || remind {
		o.told = now
	}
	since := o.since
	o.mu.Unlock()
	switch {
	case first:
		s.eventf(EventWaiting, "", "the remote %s does not answer (%s): sessions and merges wait until it does; looking again in %s, then less often, up to every %s",
			u.Remote, u.Reason(), s.firstOutageWait(), outageMaxWait)
	case remind:
		s.eventf(EventWaiting, "", "the remote %s has not answered for %s (%s): sessions and merges still wait", u.Remote, roundOutage(now.Sub(since)), u.Reason())
	}
	return true
}

// remoteAnswered notes that the remote answered, and says so when it did
// not before.
func (s *sup) remoteAnswered() {
	o := &s.outage
	o.mu.Lock()
	since, remote := o.since, o.remote
	o.since, o.wait = time.Time{}, 0
	o.mu.Unlock()
	if !since.IsZero() {
		s.eventf(EventInfo, "", "the remote %s answers again after %s: work goes on", remote, roundOutage(time.Since(since)))
	}
}

// remoteDown reports whether the remote did not answer at its last look.
func (s *sup) remoteDown() bool {
	s.outage.mu.Lock()
	defer s.outage.mu.Unlock()
	return !s.outage.since.IsZero()
}

// downSince reports whether the remote failed to answer at t or after.
func (s *sup) downSince(t time.Time) bool {
	s.outage.mu.Lock()
	defer s.outage.mu.Unlock()
	return !s.outage.last.IsZero() && !s.outage.last.Before(t)
}

// outageRemote is the name of the remote the outage is of.
func (s *sup) outageRemote() string {
	s.outage.mu.Lock()
	defer s.outage.mu.Unlock()
	return s.outage.remote
}

// firstOutageWait is the delay before the first look at a remote that
// stopped answering: a second, or the supervisor's poll when shorter.
func (s *sup) firstOutageWait() time.Duration {
	if s.Poll > 0 && s.Poll < time.Second {
		return s.Poll
	}
	return time.Second
}

// outageWait is the delay before the next look at a remote that does not
// answer: twice the last one, up to outageMaxWait.
func (s *sup) outageWait() time.Duration {
	o := &s.outage
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.wait == 0 {
		o.wait = s.firstOutageWait()
	} else {
		o.wait = min(2*o.wait, outageMaxWait)
	}
	return o.wait
}

// failedOnOutage reports whether a session that started at started and
// did not end well may have failed on the remote not answering: the
// remote failed to answer while it ran, or does not answer now (one look).
func (s *sup) failedOnOutage(ctx context.Context, started time.Time) bool {
	if !s.Remote {
		return false
	}
	if s.downSince(started) {
		return true
	}
	err := s.do(func() error { _, err := s.Board.Sync(ctx, ""); return err })
	if err == nil {
		s.remoteAnswered()
	}
	return s.remoteFailed(err)
}

// notCounted says that a session which ended as how is not counted as
// as against its task, the remote not answering, and records its end
// with detail, saying so.
func (s *sup) notCounted(ctx context.Context, w *work, ses *session, label, how, as, outcome, detail string) {
	remote := s.outageRemote()
	s.eventf(EventSessionEnded, taskOf(w), "%s: %s while the remote %s did not answer: not counted as %s", label, how, remote, as)
	s.record(ctx, w, ses, outcome, fmt.Sprintf("%s while the remote %s did not answer", detail, remote))
}

// keepRecord keeps the end of a session that could not be recorded for
// the outage, to record once the remote answers.
func (s *sup) keepRecord(r ops.SessionRequest) {
	s.outage.mu.Lock()
	defer s.outage.mu.Unlock()
	s.outage.pending = append(s.outage.pending, r)
}

// recordKept records the ends of sessions kept during an outage, in
// order; an outage again keeps the rest.
func (s *sup) recordKept(ctx context.Context) {
	s.outage.mu.Lock()
	kept := s.outage.pending
	s.outage.pending = nil
	s.outage.mu.Unlock()
	for i, r := range kept {
		err := s.do(func() error { _, err := s.Board.SessionEnded(ctx, r); return err })
		switch {
		case s.remoteFailed(err):
			s.outage.mu.Lock()
			s.outage.pending = append(kept[i:], s.outage.pending...)
			s.outage.mu.Unlock()
			return
		case err != nil:
			s.eventf(EventError, r.Task, "record the session on %s: %v", r.Task, err)
		}
	}
}

// syncDuring fetches the remote's board every d until the returned func is
// called, in remote mode (nothing otherwise): a kill switch set on another
// clone then moves this clone's ref, which watchRun reads.
func (s *sup) syncDuring(ctx context.Context, d time.Duration) func() {
	if !s.Remote {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	over := make(chan struct{})
	go func() {
		defer close(over)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := s.do(func() error { _, err := s.Board.Sync(ctx, ""); return err })
			if err == nil {
				s.remoteAnswered()
			} else {
				s.remoteFailed(err)
			}
		}
	}()
	return func() { cancel(); <-over }
}

// roundOutage rounds how long an outage lasted for saying it.
func roundOutage(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Millisecond)
}
