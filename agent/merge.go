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
	// merged are the tasks this lane merged, by id, with the reviewed
	// commit, never merged again at that commit: the loop starts the lane
	// with the board it read at the top of its turn, which may predate the
	// lane's last merges.
	merged map[string]string
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

// startMerge starts merging the APPROVED tasks unless a merge runs
// already, and reports whether it started one. The approver merges its
// approval; any reviewer finishes one whose approver has gone. A merge
// that failed is not tried again before its delay (see mergeFailed), so
// that a merge refused without any change to the board does not spin.
func (s *sup) startMerge(ctx context.Context, st *contracts.State) bool {
	l := &s.lane
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy {
		s.forgetFailures(st)
		return false
	}
	ts := s.nextMerges(st)
	if len(ts) == 0 {
		return false
	}
	l.busy = true
	l.done.Add(1)
	go s.merge(ctx, ts, s.poll(st))
	return true
}

// nextMerges are the approved tasks the lane may merge next in st, in the
// board's order (the lane's lock held).
func (s *sup) nextMerges(st *contracts.State) []contracts.Task {
	s.forgetFailures(st)
	if h := s.lane.held; (h != nil && time.Now().Before(h.retryAt)) || s.held() {
		return nil
	}
	var out []contracts.Task
	for _, t := range st.Tasks {
		if s.mayMerge(st, t) {
			out = append(out, *t)
		}
	}
	return out
}

// mayMerge reports whether the lane may merge t now (the lane's lock
// held): approved, by this reviewer or by one that has gone, and not
// waiting out the delay of a failed merge.
func (s *sup) mayMerge(st *contracts.State, t *contracts.Task) bool {
	if t.Status != contracts.Approved {
		return false
	}
	if t.ApprovedBy != s.ID && live(st.Agents[t.ApprovedBy], s.Now()) {
		return false
	}
	if f := s.lane.failures[t.ID]; f != nil && time.Now().Before(f.retryAt) {
		return false
	}
	return s.lane.merged[t.ID] != t.ReviewCommit
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
	for id, commit := range l.merged {
		// Only a board that shows the task again at another commit, or no
		// more, forgets it: any board may be older than the merge.
		if t := st.Task(id); t == nil || t.ReviewCommit != commit {
			delete(l.merged, id)
		}
	}
}

// landed notes that the lane merged t (the lane's lock held).
func (s *sup) landed(t contracts.Task) {
	if s.lane.merged == nil {
		s.lane.merged = map[string]string{}
	}
	s.lane.merged[t.ID] = t.ReviewCommit
}

// merge merges ts, in the lane: one task alone as the seeds merge, more
// as one batch of the merge queue (ops.MergeQueue: tested once, bisected
// when the test fails); then the approved tasks the board holds after it
// (see mergeLane.read), until none is left, a merge fails, or the team
// stops, pauses or is done.
func (s *sup) merge(ctx context.Context, ts []contracts.Task, poll time.Duration) {
	l := &s.lane
	defer l.done.Done()
	for {
		var err error
		if len(ts) == 1 {
			err = s.mergeOne(ctx, ts[0], poll)
		} else {
			err = s.mergeBatch(ctx, ts, poll)
		}
		var next []contracts.Task
		if err == nil && l.read != nil && ctx.Err() == nil {
			l.mu.Unlock()
			st, rerr := l.read()
			l.mu.Lock()
			if rerr == nil && st.Goal.Status != "COMPLETED" && s.running(st) {
				next = s.nextMerges(st)
			}
		}
		if len(next) == 0 {
			l.busy = false
			select {
			case l.freed <- struct{}{}:
			default:
			}
			l.mu.Unlock()
			return
		}
		ts = next
		l.mu.Unlock()
	}
}

// mergeOne merges t alone; it returns with the lane's lock held.
func (s *sup) mergeOne(ctx context.Context, t contracts.Task, poll time.Duration) error {
	l := &s.lane
	m, err := s.Board.Merge(ctx, ops.MergeRequest{Task: t.ID})
	l.mu.Lock()
	var moved *ops.IntegrationMismatch
	switch {
	case errors.As(err, &moved):
		s.mergeHeld(err, poll)
	case s.holding(err):
		// No failure of t's: the merge waits for the hold (nextMerges).
	case err != nil:
		s.mergeFailed(&t, err, poll)
	default:
		s.mergeResumed(m.IntegrationBranch)
		delete(l.failures, t.ID)
		s.landed(t)
		s.eventf(EventMerged, t.ID, "merged %s into %s at %s", t.ID, m.IntegrationBranch, shortSHA(m.MergeCommit))
	}
	return err
}

// mergeBatch runs one batch of the merge queue over the tasks the lane
// may merge (ts holds them as the lane last read them), and says what
// became of each; it returns with the lane's lock held.
func (s *sup) mergeBatch(ctx context.Context, ts []contracts.Task, poll time.Duration) error {
	l := &s.lane
	byID := map[string]contracts.Task{}
	for _, t := range ts {
		byID[t.ID] = t
	}
	only := func(t *contracts.Task) bool {
		was, ok := byID[t.ID]
		return ok && t.ReviewCommit == was.ReviewCommit
	}
	res, err := s.Board.MergeQueue(ctx, ops.MergeQueueRequest{Only: only, Batches: 1})
	l.mu.Lock()
	if err == nil {
		s.mergeResumed(res.IntegrationBranch)
	}
	if res != nil {
		for _, o := range res.Outcomes {
			t := byID[o.ID]
			switch o.Status {
			case ops.QueueMerged:
				delete(l.failures, o.ID)
				s.landed(t)
				s.eventf(EventMerged, o.ID, "merged %s into %s at %s", o.ID, res.IntegrationBranch, shortSHA(o.MergeCommit))
			case ops.QueueFailed:
				s.eventf(EventIntegrationFailed, o.ID, "merge %s failed: %s; it is INTEGRATION_FAILED", o.ID, o.Reason)
			case ops.QueueSkipped:
				s.mergeFailed(&t, errors.New(o.Reason), poll)
			default:
				s.eventf(EventInfo, o.ID, "%s waits: %s", o.ID, o.Reason)
			}
		}
		if res.Runs > 0 {
			s.eventf(EventInfo, "", "merge queue: %d task(s) in a batch, %d test run(s)", len(res.Outcomes), res.Runs)
		}
	}
	var moved *ops.IntegrationMismatch
	switch {
	case errors.As(err, &moved):
		s.mergeHeld(err, poll)
	case s.holding(err):
	case err != nil && s.halted():
		// A kill switch stopped the batch: nothing failed, and the
		// loop says PAUSED; the tasks left merge after the resume.
	case err != nil:
		// Nothing says which task it was about: the first waits.
		s.mergeFailed(&ts[0], err, poll)
	}
	return err
}

// halted reports whether a kill switch stops the team now.
func (s *sup) halted() bool {
	if s.lane.read == nil {
		return false
	}
	st, err := s.lane.read()
	return err == nil && !s.running(st)
}

// mergeResumed says, once, that merges go on after the lane was held
// (the lane's lock held).
func (s *sup) mergeResumed(branch string) {
	if s.lane.held != nil {
		s.eventf(EventInfo, "", "%s is back where the board records it: merges go on", branch)
		s.lane.held = nil
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
