//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunKilled starts a team with git liza run, whose coders' sessions
// work on their tasks, and ends run the three ways a script or a terminal
// does without Ctrl-C: its output closed (git liza run | head, once head
// has its lines), SIGTERM to run alone (timeout, kill), and SIGKILL to run
// alone (kill -9, an OOM kill), which leaves run no chance to clean up.
// Each time, within a generous bound, no supervisor and no agent session
// of the team is still running, and no agent registration or task on the
// board holds a lease past the stop.
func TestRunKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a team")
	}
	bin := gitLizaBin(t)
	for _, how := range []string{"output-closed", "sigterm", "sighup", "sigkill"} {
		t.Run(how, func(t *testing.T) { runKilled(t, bin, how) })
	}
}

// survivorBound is how long a team may take to stop once run is gone:
// "a few seconds", with room for a loaded machine.
const survivorBound = 20 * time.Second

func runKilled(t *testing.T, bin, how string) {
	f := newTeamFixture(t, bin, "kill test")
	proj, marks, env, must, agentScript := f.proj, f.marks, f.env, f.must, f.agent

	run := exec.Command("git-liza", "run", "--coders", "2", "--reviewers", "1", "--no-planner", "--poll", "100ms", "--", "sh", agentScript)
	run.Dir, run.Env = proj, env
	// run's own process group, as a job of a shell's: signals reach run
	// alone, never its supervisors (each leads a group of its own).
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var errOut bytes.Buffer
	run.Stderr = &errOut
	// Its output is a pipe this test reads, as head would.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	run.Stdout = pw
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&out, pr)
		close(copied)
	}()
	waited := make(chan error, 1)
	go func() { waited <- run.Wait() }()
	// Whatever happens, nothing this test started outlives it.
	var pids []int
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
	})

	sessions := map[string]int{}
	deadline := time.Now().Add(60 * time.Second)
	for len(sessions) < 2 {
		for _, id := range []string{"a", "b"} {
			if b, err := os.ReadFile(filepath.Join(marks, id)); err == nil {
				if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					sessions[id] = n
				}
			}
		}
		if time.Now().After(deadline) {
			<-copied
			t.Fatalf("the coders' sessions did not start:\n%s%s", out.String(), errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	supervisors := map[string]int{}
	for id, a := range readBoard(t, must).Agents {
		if n := hostPID(a.Host); n != 0 {
			supervisors[id] = n
		}
	}
	if len(supervisors) != 3 {
		t.Fatalf("want the board to name 3 supervisors' pids, got %v", supervisors)
	}
	for _, p := range supervisors {
		pids = append(pids, p)
	}
	for _, p := range sessions {
		pids = append(pids, p)
	}

	stopped := time.Now()
	switch how {
	case "output-closed":
		pr.Close()
	case "sigterm":
		_ = syscall.Kill(run.Process.Pid, syscall.SIGTERM)
	case "sighup":
		_ = syscall.Kill(run.Process.Pid, syscall.SIGHUP)
	case "sigkill":
		_ = syscall.Kill(run.Process.Pid, syscall.SIGKILL)
	}
	var alive []string
	for {
		alive = alive[:0]
		for id, p := range supervisors {
			if running(p) {
				alive = append(alive, fmt.Sprintf("the supervisor of %s (pid %d)", id, p))
			}
		}
		for id, p := range sessions {
			if running(p) {
				alive = append(alive, fmt.Sprintf("the session on %s (pid %d)", id, p))
			}
		}
		if len(alive) == 0 || time.Since(stopped) > survivorBound {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	gone := time.Since(stopped)
	if len(alive) != 0 {
		t.Errorf("%d survivors %s after run was stopped (%s): %s", len(alive), survivorBound, how, strings.Join(alive, ", "))
	} else {
		t.Logf("%s: no supervisor or session left %s after run was stopped", how, gone.Round(10*time.Millisecond))
	}

	var runErr error
	select {
	case runErr = <-waited:
	case <-time.After(survivorBound):
		t.Fatalf("run still running %s after it was stopped (%s)", survivorBound, how)
	}
	if how != "output-closed" {
		<-copied
	}
	switch how {
	case "output-closed", "sigterm", "sighup":
		// Told to stop, run stops its team and ends as a clean stop does;
		// it does not die of SIGPIPE (exit 141 in a shell) or SIGHUP.
		if runErr != nil {
			t.Errorf("run after %s: %v\nstderr:\n%s", how, runErr, errOut.String())
		}
	}
	if want := "git-liza: run: its output was closed: stopped the team (each coder's task parked with its work)\n"; how == "output-closed" && errOut.String() != want {
		t.Errorf("run's stderr after its output was closed:\n%s\nwant:\n%s", errOut.String(), want)
	}

	// The board: every registration ended, every lease over.
	now := time.Now()
	board := readBoard(t, must)
	var stuck []string
	for id, a := range board.Agents {
		if a.SupervisorLease != "" || a.Host != "" || leaseAfter(a.LeaseExpires, now) {
			stuck = append(stuck, fmt.Sprintf("%s (supervisor_lease %q, lease_expires %q, host %q)", id, a.SupervisorLease, a.LeaseExpires, a.Host))
		}
	}
	for _, task := range board.Tasks {
		if leaseAfter(task.LeaseExpires, now) {
			stuck = append(stuck, fmt.Sprintf("task %s (lease_expires %s, %s)", task.ID, task.LeaseExpires, task.Status))
		}
	}
	if len(stuck) != 0 {
		t.Errorf("%d stuck leases after run was stopped (%s): %s\nrun's stderr:\n%s", len(stuck), how, strings.Join(stuck, "; "), errOut.String())
	}
}

// killBoard is what the kill and restart tests read of git liza show
// --json.
type killBoard struct {
	Agents map[string]struct {
		Status          string `json:"status"`
		LeaseExpires    string `json:"lease_expires"`
		SupervisorLease string `json:"supervisor_lease"`
		Host            string `json:"host"`
		Generation      int    `json:"generation"`
		StopReason      string `json:"stop_reason"`
	} `json:"agents"`
	Tasks []killTask `json:"tasks"`
}

type killTask struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Assigned     string `json:"assigned_to"`
	LeaseExpires string `json:"lease_expires"`
}

// hostPID is the pid of the supervisor a registration's host names
// ("HOSTNAME pid N"), 0 when it names none.
func hostPID(host string) int {
	f := strings.Fields(host)
	if len(f) != 3 || f[1] != "pid" {
		return 0
	}
	n, _ := strconv.Atoi(f[2])
	return n
}

func readBoard(t *testing.T, must func(string, ...string) string) killBoard {
	t.Helper()
	var b killBoard
	if err := json.Unmarshal([]byte(must("git-liza", "show", "--json")), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// leaseAfter reports whether a lease (a seed timestamp, or none) runs
// past now.
func leaseAfter(expires string, now time.Time) bool {
	if expires == "" {
		return false
	}
	at, err := time.Parse(time.RFC3339, expires)
	return err != nil || at.After(now)
}

// running reports whether a process has pid and is not a zombie.
func running(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
