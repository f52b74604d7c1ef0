package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// fakeRun is a coder supervisor, coder-1, running a fake agent CLI on a
// board that holds task a.
type fakeRun struct {
	svc      *ops.Service
	cfg      Config
	log      *syncBuffer // the supervisor's lines
	agentOut *syncBuffer // the agent's steps, as the terminal gets them
	logDir   string      // the session logs
	done     chan error  // what Run returned
	cancel   context.CancelFunc
}

// startFake starts coder-1's supervisor with a preset of the format
// whose program is the shell script body; stall, when set, is its
// StallAfter.
func startFake(t *testing.T, body, format string, stall time.Duration) *fakeRun {
	t.Helper()
	return startFakeOn(t, body, format, stall, nil)
}

// startFakeOn is startFake on a board that prep, when set, changes first
// (as the human).
func startFakeOn(t *testing.T, body, format string, stall time.Duration, prep func(svc *ops.Service)) *fakeRun {
	t.Helper()
	svc := newBoard(t)
	addTask(t, svc, "a")
	if prep != nil {
		prep(svc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	reg, err := svc.As("coder-1", 0).Register(ctx, ops.RegisterRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-cli")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fake := &Preset{Name: "fake", Program: script, Format: format,
		args: func(Session) ([]string, []string, error) { return []string{"-p"}, nil, nil }}
	r := &fakeRun{svc: svc, log: &syncBuffer{}, agentOut: &syncBuffer{}, logDir: filepath.Join(dir, "logs"),
		done: make(chan error, 1), cancel: cancel}
	r.cfg = Config{ID: "coder-1", Role: contracts.RoleCoder, Generation: reg.Generation, Repo: svc.Repo, Root: svc.Repo.MainWorkTree(),
		Launch: Launch{Command: []string{script}, Preset: fake, Sandboxed: true}, Board: svc.As("coder-1", reg.Generation),
		Log: r.log, AgentOut: r.agentOut, Poll: 10 * time.Millisecond, Backoff: time.Millisecond,
		PromptDir: filepath.Join(dir, "prompts"), LogDir: r.logDir, StallAfter: stall}
	go func() { r.done <- Run(ctx, r.cfg) }()
	// The supervisor stops before the test's directories are removed (the
	// cleanups run last first): a test that ends while it still writes
	// would find its repository half removed.
	t.Cleanup(func() {
		cancel()
		err := <-r.done
		r.done <- err
	})
	return r
}

// wait waits up to a minute for Run to return by itself.
func (r *fakeRun) wait(t *testing.T, what string) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(60 * time.Second):
		r.cancel()
		t.Fatalf("the supervisor did not stop %s; it said:\n%s", what, r.log)
		return nil
	}
}

// waitBlocked waits for task id to be BLOCKED (a minute at most) and
// returns it.
func (r *fakeRun) waitBlocked(t *testing.T, id string) *contracts.Task {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := r.svc.State(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if task := st.Task(id); task != nil && task.Status == contracts.Blocked {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s not blocked; the supervisor said:\n%s", id, r.log.String())
		}
	}
}
