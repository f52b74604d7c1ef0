//go:build unix

package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunInterruptParks starts a team with git liza run, whose coders'
// sessions work on their tasks, stops it the way Ctrl-C does (SIGINT to
// its process group), and reads the board as the person who pressed it
// would: the tasks are parked by their coders, with no alarm.
func TestRunInterruptParks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a team")
	}
	bin := gitLizaBin(t)
	f := newTeamFixture(t, bin, "park test")
	proj, marks, env, must, agentScript := f.proj, f.marks, f.env, f.must, f.agent

	run := exec.Command("git-liza", "run", "--coders", "2", "--reviewers", "1", "--no-planner", "--poll", "100ms", "--", "sh", agentScript)
	run.Dir, run.Env = proj, env
	var out strings.Builder
	run.Stdout, run.Stderr = &out, &out
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, ea := os.Stat(filepath.Join(marks, "a"))
		_, eb := os.Stat(filepath.Join(marks, "b"))
		if ea == nil && eb == nil {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
			run.Wait()
			t.Fatalf("the coders' sessions did not start:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Ctrl-C: the terminal interrupts the whole foreground group.
	syscall.Kill(-run.Process.Pid, syscall.SIGINT)
	if err := run.Wait(); err != nil {
		t.Fatalf("run after SIGINT: %v\n%s", err, out.String())
	}
	t.Logf("run:\n%s", out.String())
	if !strings.Contains(out.String(), "parked") {
		t.Errorf("run said nothing of parking its tasks:\n%s", out.String())
	}

	var board struct {
		Tasks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Parked *struct {
				By string `json:"by"`
			} `json:"parked"`
			AssignedTo string `json:"assigned_to"`
		} `json:"tasks"`
		Alarms []struct {
			Message string `json:"message"`
		} `json:"alarms"`
	}
	if err := json.Unmarshal([]byte(must("git-liza", "status", "--json")), &board); err != nil {
		t.Fatal(err)
	}
	if len(board.Tasks) != 2 {
		t.Fatalf("want 2 tasks on the board, got %+v", board.Tasks)
	}
	for _, task := range board.Tasks {
		if task.Status != "CLAIMED" || task.Parked == nil || task.Parked.By != task.AssignedTo {
			t.Errorf("task %s: status %s, parked %+v, assigned to %s; want CLAIMED and parked by its coder", task.ID, task.Status, task.Parked, task.AssignedTo)
		}
	}
	if len(board.Alarms) != 0 {
		t.Errorf("want no alarm after a clean stop, got %+v", board.Alarms)
	}
	text := must("git-liza", "status")
	if strings.Count(text, " parked ") != 2 || !strings.Contains(text, "git liza run or git liza agent coder resumes it") {
		t.Errorf("status does not show both tasks parked and how they resume:\n%s", text)
	}
	if w := must("git-liza", "watch", "--once"); strings.Contains(w, "LEASE EXPIRED") {
		t.Errorf("watch --once alarms after a clean stop:\n%s", w)
	}
}
