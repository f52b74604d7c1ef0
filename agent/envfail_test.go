package agent

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
)

// The policy: the second first session in a row that fails the same way
// stops; a rate limit, and a failure after sessions that worked, are
// waited out with a doubling delay up to MaxRetryDelay, until EnvGiveUp.
func TestEnvTrack(t *testing.T) {
	now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	step := func(e *envTrack, kind string, run int, at time.Duration) (time.Duration, bool) {
		return e.next(kind, run, now.Add(at), 2*time.Second)
	}
	var e envTrack
	if d, stop := step(&e, "auth", 1, 0); stop || d != 2*time.Second {
		t.Fatalf("first auth failure: %s %v", d, stop)
	}
	if _, stop := step(&e, "auth", 2, 3*time.Second); !stop {
		t.Fatalf("second first-session auth failure did not stop")
	}

	// Two different failures are not the same failure twice.
	e = envTrack{}
	step(&e, "unreachable", 1, 0)
	if _, stop := step(&e, "auth", 2, time.Second); stop {
		t.Fatalf("unreachable then auth stopped")
	}
	if _, stop := step(&e, "auth", 3, 2*time.Second); stop {
		t.Fatalf("stopped though an earlier session failed another way (not every first session failed thus)")
	}

	// A rate limit at the start is waited out, the delay doubling, capped.
	e = envTrack{}
	var delays []time.Duration
	for run := 1; run <= 10; run++ {
		d, stop := step(&e, transcript.FailRateLimit, run, time.Duration(run)*time.Second)
		if stop {
			t.Fatalf("a rate limit stopped at session %d", run)
		}
		delays = append(delays, d)
	}
	if delays[0] != 2*time.Second || delays[1] != 4*time.Second || delays[9] != MaxRetryDelay {
		t.Errorf("delays %v", delays)
	}

	// Sessions 1 and 2 worked; from session 3 the quota is spent: waited
	// out until EnvGiveUp has passed since the first such failure.
	e = envTrack{}
	for run, at := 3, time.Duration(0); ; run, at = run+1, at+MaxRetryDelay {
		_, stop := step(&e, transcript.FailQuota, run, at)
		if at < EnvGiveUp && stop {
			t.Fatalf("stopped after %s of quota failures, before EnvGiveUp", at)
		}
		if at >= EnvGiveUp {
			if !stop {
				t.Fatalf("still trying after %s", at)
			}
			break
		}
	}
	// A session that works in between starts the count again.
	e = envTrack{}
	step(&e, "auth", 3, 0)
	if _, stop := step(&e, "auth", 5, EnvGiveUp+time.Minute); stop {
		t.Fatalf("a session that worked in between did not start the count again")
	}
}

// A coder whose CLI is not logged in (the real stream of claude 2.1.328
// with no credentials, exit 1): the supervisor tries once more after its
// backoff, then stops with ErrEnvironment naming the fix. The task is
// UNCLAIMED again, not BLOCKED; no anomaly is logged; no session is
// recorded as a crash.
func TestEnvFailureStopsAndReleases(t *testing.T) {
	err, log, svc, logDir := runEnvFake(t, "envfail-claude-nokey.jsonl", transcript.FormatClaude, "exit 1", 0)
	var envErr *EnvError
	if !errors.Is(err, ErrEnvironment) || !errors.As(err, &envErr) {
		t.Fatalf("Run: %v, want ErrEnvironment; it said:\n%s", err, log)
	}
	if envErr.Failure.Kind != "auth" || envErr.Sessions != 2 || !strings.Contains(envErr.Line(), "Not logged in · Please run /login; fix: set ANTHROPIC_API_KEY") {
		t.Errorf("error: %+v, line %q", envErr, envErr.Line())
	}
	checkReleased(t, svc, logDir, log, "auth")
}

// A codex session whose endpoint does not answer never ends by itself: it
// prints "Reconnecting... waiting for network" for ever. The supervisor
// stops it once it has done nothing else for StallAfter, as a failure of
// its environment, and the task is not held until the timebox.
func TestEnvStalledSessionStops(t *testing.T) {
	err, log, svc, logDir := runEnvFake(t, "envfail-codex-refused.jsonl", transcript.FormatCodex, "exec sleep 600", 300*time.Millisecond)
	var envErr *EnvError
	if !errors.As(err, &envErr) || envErr.Failure.Kind != transcript.FailUnreachable || envErr.Sessions != 2 {
		t.Fatalf("Run: %v, want an unreachable endpoint after 2 sessions; it said:\n%s", err, log)
	}
	if !strings.Contains(log.String(), "only retried a failure of its environment") {
		t.Errorf("the supervisor said:\n%s", log)
	}
	checkReleased(t, svc, logDir, log, "unreachable")
}

// runEnvFake runs a coder supervisor on task a with a fake CLI of the
// format that prints the captured stream and then runs tail; stall, when
// set, is the supervisor's StallAfter. It returns what Run returned.
func runEnvFake(t *testing.T, capture, format, tail string, stall time.Duration) (error, *syncBuffer, *ops.Service, string) {
	t.Helper()
	stream, err := filepath.Abs("../transcript/testdata/" + capture)
	if err != nil {
		t.Fatal(err)
	}
	r := startFake(t, "cat "+stream+"\n"+tail, format, stall)
	return r.wait(t, "after its sessions failed"), r.log, r.svc, r.logDir
}

// checkReleased checks that task a went back to UNCLAIMED with no anomaly
// after two sessions recorded as stopped for their environment (kind).
func checkReleased(t *testing.T, svc *ops.Service, logDir string, log *syncBuffer, kind string) {
	t.Helper()
	st, err := svc.State(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	task := st.Task("a")
	if task.Status != contracts.Unclaimed || task.AssignedTo != "" {
		t.Errorf("task a is %s held by %q, want UNCLAIMED", task.Status, task.AssignedTo)
	}
	if len(st.Anomalies) != 0 {
		t.Errorf("anomalies: %+v", st.Anomalies)
	}
	var outcomes []string
	for _, ev := range task.History {
		if ev.Event == ops.SessionEventTag {
			outcomes = append(outcomes, ev.Extra["outcome"].(string))
			if !strings.Contains(ev.Reason, "failed for its environment ("+kind+")") {
				t.Errorf("session recorded as %q", ev.Reason)
			}
		}
	}
	if strings.Join(outcomes, ",") != "stopped,stopped" {
		t.Errorf("sessions recorded: %v, want two stopped (no crash)", outcomes)
	}
	logs, _ := filepath.Glob(filepath.Join(logDir, "coder-1", "*-a.jsonl"))
	if len(logs) != 2 {
		t.Errorf("session logs %v, want 2", logs)
	}
	if !strings.Contains(log.String(), "released a: its agent cannot work here ("+kind+")") {
		t.Errorf("the supervisor said:\n%s", log)
	}
}

// A reviewer whose CLI cannot work releases its review (and a planner,
// which holds no task, just stops); neither blocks nor logs an anomaly.
func TestEnvFailureReviewerAndPlanner(t *testing.T) {
	auth := &transcript.Failure{Kind: "auth", Message: "Not logged in · Please run /login", Fix: "set ANTHROPIC_API_KEY"}
	for _, tc := range []struct {
		role contracts.Role
		id   string
		task *contracts.Task
		want []string
	}{
		{contracts.RoleReviewer, "code-reviewer-1", &contracts.Task{ID: "a"}, []string{"session a stopped", "session a stopped", "task release"}},
		{contracts.RolePlanner, "planner-1", nil, nil},
	} {
		f := &fakeBoard{}
		s, log := newSup(tc.role, tc.id, f)
		w := &work{task: tc.task}
		var err error
		for s.runs = 1; s.runs <= 2; s.runs++ {
			err = s.envFailed(context.Background(), w, &session{failure: auth, out: &tailWriter{}, started: time.Now()})
			if s.runs == 1 && err != nil {
				t.Fatalf("%s: the first failure stopped: %v", tc.id, err)
			}
		}
		if !errors.Is(err, ErrEnvironment) {
			t.Errorf("%s: %v, want ErrEnvironment", tc.id, err)
		}
		if got := f.verbs(); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: calls %q, want %q\n%s", tc.id, got, tc.want, log)
		}
	}
}
