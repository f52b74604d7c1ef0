package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/worktree"
)

// A new worktree's setup step (scripts/worktree-setup.sh) that fails is a
// failure of the environment the agent would work in, not of the task: a
// claim whose setup failed did not happen (the task stays UNCLAIMED, no
// iteration, no anomaly, no block), and a review checkout whose setup
// failed gives the review back. The supervisor says why, once (the log's
// path and its last lines), and waits before it claims again, the delay
// doubling from its Backoff up to MaxRetryDelay while the setup keeps
// failing: someone has to fix the script or the machine, and claiming
// again at every move of the board would only run it again.

// setupWait is a supervisor backing off after a failed setup.
type setupWait struct {
	delay time.Duration
	until time.Time
	msg   string // what the loop says while it waits
}

// errSetupWait is the loop's word while it waits after a failed setup.
type errSetupWait struct{ msg string }

func (e *errSetupWait) Error() string { return e.msg }

// setupHeld returns the waiting error while a failed setup's delay runs,
// nil once it is over.
func (s *sup) setupHeld() error {
	if s.setup.until.IsZero() || !time.Now().Before(s.setup.until) {
		return nil
	}
	return &errSetupWait{msg: s.setup.msg}
}

// setupFailed reports a setup that failed (err holds a
// *worktree.SetupFailed, else it returns false) and starts the wait.
func (s *sup) setupFailed(err error) (error, bool) {
	var f *worktree.SetupFailed
	if !errors.As(err, &f) {
		return nil, false
	}
	base := s.Backoff
	if base <= 0 {
		base = 2 * time.Second
	}
	if s.setup.delay <= 0 {
		s.setup.delay = base
	} else {
		s.setup.delay = min(2*s.setup.delay, MaxRetryDelay)
	}
	s.setup.until = time.Now().Add(s.setup.delay)
	what := "claim"
	if f.Kind == worktree.KindReview {
		what = "review"
	}
	lines := ""
	if tail := f.Tail; len(tail) > 0 {
		lines = "; its last lines:\n  " + strings.Join(tail, "\n  ")
	}
	s.eventf(EventError, f.Task, "%s (an environment failure: no task is charged)%s", f.Error(), lines)
	s.setup.msg = fmt.Sprintf("waiting: the setup step of a new worktree fails (see %s); the next %s in %s", s.relPath(f.Log), what, s.setup.delay)
	return &errSetupWait{msg: s.setup.msg}, true
}

// setupWorked ends the wait after a setup that worked (or a claim that
// needed none).
func (s *sup) setupWorked() { s.setup = setupWait{} }

// reviewSetupFailed gives back the review whose checkout could not be set
// up (err holds a *worktree.SetupFailed, else it returns false), for this
// reviewer or another to take once the setup works: the review's own
// checkout (ops.Review) and a session's (ReviewCheckout) alike.
func (s *sup) reviewSetupFailed(ctx context.Context, err error) (error, bool) {
	wait, ok := s.setupFailed(err)
	if !ok {
		return nil, false
	}
	var f *worktree.SetupFailed
	errors.As(err, &f)
	t := &contracts.Task{ID: f.Task}
	if rerr := s.do(func() error {
		_, err := s.Board.Release(context.WithoutCancel(ctx), ops.ReleaseRequest{Task: t.ID, Side: "reviewer"})
		return err
	}); rerr != nil {
		s.eventf(EventError, t.ID, "release the review of %s: %v", t.ID, rerr)
	} else {
		s.eventf(EventInfo, t.ID, "released the review of %s: its checkout could not be set up", t.ID)
	}
	return wait, true
}
