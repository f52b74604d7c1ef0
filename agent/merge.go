package agent

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// mergeLane is where a reviewer supervisor merges approved tasks, as the
// seeds give it to do: one merge at a time, beside the reviews. A merge
// runs the integration test in a checkout of its own, so the reviews that
// come next need not wait for it: with one reviewer for many coders, the
// reviewer's turn is what the whole team waits on.
type mergeLane struct {
	mu       sync.Mutex
	busy     bool                     // a merge runs
	failures map[string]*mergeFailure // by task id
	done     sync.WaitGroup
	// freed wakes the sleeping loop when the lane stops, so that an
	// approved task it left is merged at once, not at the next poll.
	freed chan struct{}
	// read, when set, reads the board after each merge that landed, and
	// the lane goes on with the next approved task without waiting for
	// the loop, which may be in a review: with many coders the lane is
	// what the team waits on, and each wait for the loop left it idle.
	read func() (*contracts.State, error)
	// held is the lane stopped for the whole board: the integration
	// branch is not where the board records it (ops.IntegrationMismatch),
	// which no task's merge may build on. It is logged once; merges wait
	// until the next try, after a delay that doubles while it lasts.
	held *mergeFailure
}

// mergeFailure is a merge that failed without changing the board (its
// integration branch checked out somewhere, its task branch gone): it is
// tried again after a delay that doubles while it keeps failing.
type mergeFailure struct {
	commit  string // the reviewed commit that failed to merge
	msg     string // the last error, logged once
	delay   time.Duration
	retryAt time.Time
}

// startMerge starts merging an APPROVED task unless a merge runs already,
// and reports whether it started one. The approver merges its approval;
// any reviewer finishes one whose approver has gone. A merge that failed
// is not tried again before its delay (see mergeFailed), so that a merge
// refused without any change to the board does not spin.
func (s *sup) startMerge(ctx context.Context, st *contracts.State) bool {
	l := &s.lane
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy {
		s.forgetFailures(st)
		return false
	}
	t := s.nextMerge(st)
	if t == nil {
		return false
	}
	l.busy = true
	l.done.Add(1)
	go s.merge(ctx, *t, s.poll(st))
	return true
}

// nextMerge is the approved task the lane merges next in st, if any (the
// lane's lock held).
func (s *sup) nextMerge(st *contracts.State) *contracts.Task {
	s.forgetFailures(st)
	if h := s.lane.held; h != nil && time.Now().Before(h.retryAt) {
		return nil
	}
	now := s.Now()
	for _, t := range st.Tasks {
		if t.Status != contracts.Approved {
			continue
		}
		if t.ApprovedBy != s.ID && live(st.Agents[t.ApprovedBy], now) {
			continue
		}
		if f := s.lane.failures[t.ID]; f != nil && time.Now().Before(f.retryAt) {
			continue
		}
		return t
	}
	return nil
}

// forgetFailures drops the failures of tasks that are no longer approved
// at the commit that failed (the lane's lock held).
func (s *sup) forgetFailures(st *contracts.State) {
	l := &s.lane
	if l.failures == nil {
		l.failures = map[string]*mergeFailure{}
	}
	for id, f := range l.failures {
		if t := st.Task(id); t == nil || t.Status != contracts.Approved || t.ReviewCommit != f.commit {
			delete(l.failures, id)
		}
	}
}

// merge merges t, in the lane, then each approved task the board holds
// after it (see mergeLane.read), until none is left, a merge fails, or the
// team stops, pauses or is done.
func (s *sup) merge(ctx context.Context, t contracts.Task, poll time.Duration) {
	l := &s.lane
	defer l.done.Done()
	for {
		m, err := s.Board.Merge(ctx, ops.MergeRequest{Task: t.ID})
		l.mu.Lock()
		var moved *ops.IntegrationMismatch
		switch {
		case errors.As(err, &moved):
			s.mergeHeld(err, poll)
		case err != nil:
			s.mergeFailed(&t, err, poll)
		default:
			if l.held != nil {
				s.eventf(EventInfo, t.ID, "%s is back where the board records it: merges go on", m.IntegrationBranch)
				l.held = nil
			}
			delete(l.failures, t.ID)
			s.eventf(EventMerged, t.ID, "merged %s into %s at %s", t.ID, m.IntegrationBranch, shortSHA(m.MergeCommit))
		}
		var next *contracts.Task
		if err == nil && l.read != nil && ctx.Err() == nil {
			l.mu.Unlock()
			st, rerr := l.read()
			l.mu.Lock()
			if rerr == nil && st.Goal.Status != "COMPLETED" && s.running(st) {
				next = s.nextMerge(st)
			}
		}
		if next == nil {
			l.busy = false
			select {
			case l.freed <- struct{}{}:
			default:
			}
			l.mu.Unlock()
			return
		}
		t = *next
		l.mu.Unlock()
	}
}

// running reports whether no kill switch stops the team's work.
func (s *sup) running(st *contracts.State) bool {
	mode, _ := modeOf(st, contracts.StatSwitchFiles(s.Root))
	return mode == contracts.ModeRunning
}

// waitMerges waits until the merge running, if any, has ended.
func (s *sup) waitMerges() { s.lane.done.Wait() }

// mergeFailed records a failed merge of t (the lane's lock held): the
// first failure waits a poll interval before the next try, each further
// one twice as long as the one before, up to MaxRetryDelay. An error is
// logged once, not at every try.
func (s *sup) mergeFailed(t *contracts.Task, err error, poll time.Duration) {
	f := s.lane.failures[t.ID]
	if f == nil {
		f = &mergeFailure{commit: t.ReviewCommit}
		s.lane.failures[t.ID] = f
	}
	f.delay = retryDelay(f.delay, poll)
	f.retryAt = time.Now().Add(f.delay)
	if msg := err.Error(); msg != f.msg {
		f.msg = msg
		s.eventf(EventIntegrationFailed, t.ID, "merge %s failed: %s (trying again in %s, then less often while it fails)", t.ID, msg, f.delay)
	}
}

// mergeHeld stops the lane for every task (the lane's lock held): the
// integration branch is not where the board records it, and only the
// operator puts that right (the refusal names the command). It is logged
// once while it stays the same; the lane looks again after a delay that
// doubles, as a failed merge's does.
func (s *sup) mergeHeld(err error, poll time.Duration) {
	h := s.lane.held
	if h == nil {
		h = &mergeFailure{}
		s.lane.held = h
	}
	h.delay = retryDelay(h.delay, poll)
	h.retryAt = time.Now().Add(h.delay)
	if msg := err.Error(); msg != h.msg {
		h.msg = msg
		s.eventf(EventIntegrationFailed, "", "merges wait: %s", msg)
	}
}

// retryDelay is the delay after prev: first the poll interval, then twice
// the previous one, up to MaxRetryDelay.
func retryDelay(prev, poll time.Duration) time.Duration {
	if prev <= 0 {
		return poll
	}
	return max(poll, min(2*prev, MaxRetryDelay))
}
