//go:build unix

package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestRunRestartsAKilledSupervisor kills a coder's supervisor outright, as
// an out-of-memory kill does, while its agent works on a task, under git
// liza run. run says so, starts it again, and the new supervisor takes the
// id over and resumes the task in a new session; the old session is gone.
// Killed twice more within the crash window, the supervisor is given up
// on: run says so, the board records why (its stop reason, which the
// notifier tells a person), the task is released, and run, left with no
// supervisor, ends with the failure.
func TestRunRestartsAKilledSupervisor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a team")
	}
	f := newTeamFixture(t, gitLizaBin(t), "restart test")
	run := exec.Command("git-liza", "run", "--coders", "1", "--reviewers", "0", "--no-planner", "--poll", "100ms", "--backoff", "100ms", "--", "sh", f.agent)
	run.Dir, run.Env = f.proj, f.env
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errOut lockedBuffer
	run.Stdout, run.Stderr = &out, &errOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- run.Wait() }()
	var pids []int
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
	})
	within := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 60 s\nrun's output:\n%s\nstderr:\n%s", what, out.String(), errOut.String())
			}
		}
	}

	// The coder's first session starts on a task.
	var task string
	var session int
	within("a coder's session", func() bool {
		task, session = sessionOf(f.marks)
		return session != 0
	})
	pids = append(pids, session)
	sup, gen := supervisorOf(t, f.must)
	if sup == 0 || gen != 1 {
		t.Fatalf("coder-1: supervisor pid %d, generation %d; want a pid, generation 1", sup, gen)
	}
	pids = append(pids, sup)

	// Killed outright, it is started again, and resumes the task.
	_ = syscall.Kill(sup, syscall.SIGKILL)
	within("a new session on "+task, func() bool {
		_, s := sessionOf(f.marks)
		return s != session && s != 0 && running(s)
	})
	_, next := sessionOf(f.marks)
	pids = append(pids, next)
	if running(session) {
		t.Errorf("the killed supervisor's session (pid %d) still runs", session)
	}
	if !strings.Contains(out.String(), "the supervisor of coder-1 died (signal: killed); starting it again in 100ms\n") {
		t.Errorf("run did not say it started coder-1 again:\n%s", out.String())
	}
	sup2, gen2 := supervisorOf(t, f.must)
	if sup2 == sup || gen2 != 2 {
		t.Errorf("after the restart coder-1 is pid %d generation %d, want a new pid, generation 2", sup2, gen2)
	}
	if got := taskOf(t, f.must, task); got.Assigned != "coder-1" || got.Status != "CLAIMED" {
		t.Errorf("task %s after the restart: %+v, want CLAIMED by coder-1", task, got)
	}

	// Killed twice more within the window, it is given up on.
	for i := 0; i < 2; i++ {
		within("coder-1 supervised again", func() bool {
			p, _ := supervisorOf(t, f.must)
			return p != 0 && p != sup && running(p)
		})
		sup, _ = supervisorOf(t, f.must)
		pids = append(pids, sup)
		_ = syscall.Kill(sup, syscall.SIGKILL)
	}
	var runErr error
	select {
	case runErr = <-waited:
	case <-time.After(60 * time.Second):
		t.Fatalf("run still runs with its one supervisor given up on:\n%s", out.String())
	}
	if ee, ok := runErr.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("run = %v, want exit 1\nstderr:\n%s", runErr, errOut.String())
	}
	if want := "git-liza: supervisors failed: coder-1 (signal: killed)\n"; !strings.HasSuffix(errOut.String(), want) {
		t.Errorf("run's stderr:\n%s\nwant it to end with %q", errOut.String(), want)
	}
	if !strings.Contains(out.String(), "the supervisor of coder-1 died 3 times in 5m0s (signal: killed): not starting it again\n") {
		t.Errorf("run did not say it gave coder-1 up:\n%s", out.String())
	}
	a := readBoard(t, f.must).Agents["coder-1"]
	if want := "the supervisor died 3 times in 5m0s, last: signal: killed"; a.StopReason != want || a.Host != "" {
		t.Errorf("coder-1 on the board: stop_reason %q, host %q; want %q and no host", a.StopReason, a.Host, want)
	}
	if got := taskOf(t, f.must, task); leaseAfter(got.LeaseExpires, time.Now()) {
		t.Errorf("task %s still leased after its coder was given up on: %+v", task, got)
	}
	if alerts := f.must("git-liza", "status"); !strings.Contains(alerts, "the supervisor died 3 times") {
		t.Errorf("status does not show why coder-1 stopped:\n%s", alerts)
	}
}

// supervisorOf is coder-1's supervisor's pid and generation on the board
// (pid 0 when none holds the id).
func supervisorOf(t *testing.T, must func(string, ...string) string) (int, int) {
	t.Helper()
	a := readBoard(t, must).Agents["coder-1"]
	return hostPID(a.Host), a.Generation
}

func taskOf(t *testing.T, must func(string, ...string) string, id string) killTask {
	t.Helper()
	for _, k := range readBoard(t, must).Tasks {
		if k.ID == id {
			return k
		}
	}
	t.Fatalf("no task %s on the board", id)
	return killTask{}
}

// sessionOf is the task a coder's session works on and its pid, from the
// fixture's marks (the latest, when there are two).
func sessionOf(marks string) (string, int) {
	var task string
	var pid int
	var at time.Time
	for _, id := range []string{"a", "b"} {
		path := filepath.Join(marks, id)
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(path)
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && fi.ModTime().After(at) {
			task, pid, at = id, n, fi.ModTime()
		}
	}
	return task, pid
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
