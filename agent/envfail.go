package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
)

// A session that fails for its environment (transcript.Classify: the CLI
// not logged in, its endpoint unreachable, a rate limit or quota, an
// unknown model) is no failure of its task: no crash is counted, nothing
// is blocked, no anomaly logged. The supervisor waits and tries again,
// the delay doubling from its Backoff up to MaxRetryDelay, and stops:
//
//   - at once on the second session in a row that fails the same way when
//     no session of this supervisor has worked yet (the team was started
//     without what it needs: credentials, a reachable endpoint, a model);
//     a rate limit is waited out instead, as below;
//   - after EnvGiveUp of failing the same way without a session between
//     that worked (a quota spent mid-run, an endpoint gone).
//
// Stopping releases what the supervisor holds for its sessions: a coder's
// claim goes back to UNCLAIMED (ops Release, as git liza task release
// does: the worktree and branch stay, for the next claim to take on), a
// reviewer's review is released; the error it returns (an *EnvError,
// ErrEnvironment) carries the failure and its fix.
const (
	// EnvFirstLimit is how many first sessions in a row may fail the same
	// way before the supervisor stops.
	EnvFirstLimit = 2
	// EnvGiveUp is how long a supervisor whose sessions worked before goes
	// on trying through an environment failure.
	EnvGiveUp = 30 * time.Minute
)

// ErrEnvironment is returned when the agent's sessions keep failing for
// their environment; the error is an *EnvError.
var ErrEnvironment = errors.New("the agent CLI cannot work here")

// EnvError is ErrEnvironment with the failure that stopped the supervisor.
type EnvError struct {
	Failure transcript.Failure
	// Sessions is how many sessions in a row failed that way.
	Sessions int
}

func (e *EnvError) Error() string { return ErrEnvironment.Error() + ": " + e.Line() }

// Is makes errors.Is(err, ErrEnvironment) hold.
func (e *EnvError) Is(target error) bool { return target == ErrEnvironment }

// Line is the failure on one line: the CLI's words and the fix (not
// escaped: printers escape).
func (e *EnvError) Line() string {
	return fmt.Sprintf("%d sessions in a row failed for their environment (%s): %s; fix: %s", e.Sessions, e.Failure.Kind, e.Failure.Message, e.Failure.Fix)
}

// envTrack follows a supervisor's sessions that fail for their
// environment.
type envTrack struct {
	kind    string    // how the last one failed
	lastRun int       // its session number (sup.runs)
	streak  int       // how many sessions in a row failed that way
	since   time.Time // when the first of them ended
}

// next records that session run failed with kind at now, and says how long
// to wait before the next session, or that the supervisor stops.
func (e *envTrack) next(kind string, run int, now time.Time, base time.Duration) (time.Duration, bool) {
	if kind != e.kind || run != e.lastRun+1 || e.streak == 0 {
		e.kind, e.streak, e.since = kind, 0, now
	}
	e.streak++
	e.lastRun = run
	// Every session of this supervisor so far failed this way.
	first := e.streak == run
	if first && kind != transcript.FailRateLimit && e.streak >= EnvFirstLimit {
		return 0, true
	}
	if now.Sub(e.since) >= EnvGiveUp {
		return 0, true
	}
	if base <= 0 {
		base = 2 * time.Second
	}
	d := base
	for i := 1; i < e.streak && d < MaxRetryDelay; i++ {
		d *= 2
	}
	return min(d, MaxRetryDelay), false
}

// envFailed handles a session that failed for its environment: it is
// recorded on its task as stopped, with the failure (no crash); then the
// supervisor waits and tries again, or stops, releasing its claim or
// review, with an *EnvError.
func (s *sup) envFailed(ctx context.Context, w *work, ses *session) error {
	f := *ses.failure
	what := fmt.Sprintf("the session failed for its environment (%s): %s", f.Kind, f.Message)
	s.record(ctx, w, ses, ops.SessionStopped, what+"; fix: "+f.Fix)
	delay, stop := s.env.next(f.Kind, s.runs, time.Now(), s.Backoff)
	if !stop {
		s.logf("%s; trying again in %s (fix: %s)", what, delay, f.Fix)
		pause(ctx, delay)
		return nil
	}
	err := &EnvError{Failure: f, Sessions: s.env.streak}
	s.logf("%s: stopping", err.Line())
	if w.task != nil {
		s.releaseHeld(context.WithoutCancel(ctx), w.task, f)
	}
	return err
}

// releaseHeld gives back the task the supervisor's agent could not work
// on: a coder's claim, a reviewer's review.
func (s *sup) releaseHeld(ctx context.Context, t *contracts.Task, f transcript.Failure) {
	side := "coder"
	if s.Role == contracts.RoleReviewer {
		side = "reviewer"
	}
	// The board refuses to release what this agent does not hold (a coder
	// its own claim only, a reviewer its own review only).
	if err := s.do(func() error {
		_, err := s.Board.Release(ctx, ops.ReleaseRequest{Task: t.ID, Side: side})
		return err
	}); err != nil {
		s.logf("release %s: %v", t.ID, err)
		return
	}
	s.logf("released %s: its agent cannot work here (%s)", t.ID, f.Kind)
}
