package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// crashed records a crash: back off, or on a crash loop stop with the
// task blocked and an anomaly logged, both quoting tail, the last words
// of the agent's output.
func (s *sup) crashed(ctx context.Context, w *work, c crash, tail lastWords) error {
	why := c.String()
	s.crashes = Recent(append(s.crashes, time.Now()), time.Now())
	n := len(s.crashes)
	if n >= CrashLimit {
		s.eventf(EventCrashLoop, taskOf(w), "agent crashed %d times in %s (%s): stopping", n, CrashWindow, why)
		s.crashLoop(ctx, w, c, tail, n)
		return fmt.Errorf("%w: %d crashes in %s, last: %s", ErrCrashLoop, n, CrashWindow, why)
	}
	delay := s.Backoff << (n - 1)
	s.eventf(EventCrashed, taskOf(w), "agent crashed (%s); retrying in %s", why, delay)
	pause(ctx, delay)
	return nil
}

// cannotStart records a failure to start the agent (its command or its
// directory missing): back off, and stop the supervisor after CrashLimit
// of them within CrashWindow. This is no crash of the agent: the task is
// neither blocked nor counted against, and stopping releases it.
func (s *sup) cannotStart(ctx context.Context, why string) error {
	s.startFails = Recent(append(s.startFails, time.Now()), time.Now())
	n := len(s.startFails)
	if n >= CrashLimit {
		s.eventf(EventCrashLoop, "", "%s (%d times in %s): stopping", why, n, CrashWindow)
		return fmt.Errorf("%w: %s", ErrCannotStart, why)
	}
	delay := s.Backoff << (n - 1)
	s.eventf(EventCannotStart, "", "%s; trying again in %s", why, delay)
	pause(ctx, delay)
	return nil
}

// Recent keeps the times within CrashWindow of now: the crashes, or the
// deaths of a supervisor (git liza run), that count toward CrashLimit.
func Recent(times []time.Time, now time.Time) []time.Time {
	out := times[:0]
	for _, t := range times {
		if now.Sub(t) <= CrashWindow {
			out = append(out, t)
		}
	}
	return out
}

// crashLoop records a crash loop on the blackboard: the coder's task is
// blocked for the planner, a reviewer's review released, and an anomaly
// logged; the blocked reason and the anomaly quote the last words of the
// agent's output (its last tool error, or its last lines), which say why
// it failed.
//
// The anomaly's error_pattern is the crash's pattern alone, without the
// time the run took, so that loops that fail alike share it and group in
// the circuit breaker's retry_cluster; that time is its last_run detail.
func (s *sup) crashLoop(ctx context.Context, w *work, c crash, tail lastWords, n int) {
	if w.task == nil {
		// An anomaly is about a task; a planner's crash loop is reported by
		// the supervisor's exit alone.
		return
	}
	task := w.task.ID
	s.giveUp(ctx, task, withOutput("agent crash loop: "+c.String(), tail))
	details := contracts.Extra{"count": n, "error_pattern": "crash loop: " + c.pattern, "last_run": c.took.String()}
	if tail.text != "" {
		details["last_output"] = tail.text
	}
	if err := s.do(func() error {
		_, err := s.Board.Anomaly(ctx, ops.AnomalyRequest{Type: "retry_loop", Task: task, Details: details})
		return err
	}); err != nil {
		s.eventf(EventError, task, "log the crash loop: %v", err)
	}
}

// keepAlive renews the agent's leases every heartbeat interval for as
// long as the supervisor runs. A refusal because a newer supervisor took
// the id stops this one.
func (s *sup) keepAlive(ctx context.Context, stop context.CancelCauseFunc) {
	interval := time.Minute
	if tip, ok, err := s.Repo.ReadRef(refstore.StateRef); err == nil && ok {
		if snap, err := cas.ReadSnapshot(s.Repo, tip); err == nil {
			if st, err := snap.Header(); err == nil && st.Config.HeartbeatInterval > 0 {
				interval = time.Duration(st.Config.HeartbeatInterval) * time.Second
			}
		}
	}
	every(ctx, interval, func() bool {
		err := s.do(func() error { _, err := s.Board.Heartbeat(ctx, ops.Call{}); return err })
		switch {
		case err == nil:
			s.remoteAnswered()
		case s.holding(err):
		default:
			if serr := s.staleNow(); serr != nil {
				s.eventf(EventStopping, "", "%v", serr)
				stop(serr)
				return false
			}
			s.eventf(EventError, "", "heartbeat: %v", err)
		}
		return true
	})
}

// every calls fn every d until ctx ends or fn returns false.
func every(ctx context.Context, d time.Duration, fn func() bool) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !fn() {
			return
		}
	}
}

// crash is how an agent's run failed: what went wrong, the same for runs
// that fail alike (the exit status), and how long the run took.
type crash struct {
	pattern string
	took    time.Duration
}

// crashOf is the crash of a run that exited with status after took.
func crashOf(status int, took time.Duration) crash {
	return crash{pattern: fmt.Sprintf("exit status %d", status), took: took}
}

func (c crash) String() string { return fmt.Sprintf("%s after %s", c.pattern, c.took) }
