package commands

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/testrepo"
)

// deadProcess is a process of this machine that has ended, as a note
// records it.
func deadProcess(t *testing.T) proc.Owner {
	t.Helper()
	c := exec.Command("sleep", "0")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	return proc.Owner{PID: c.Process.Pid, Host: host}
}

// TestRegisterTakesOverAGoneSupervisor: a supervisor killed at any point
// after its registration (an out-of-memory kill, run's restarts under kill
// -9) has noted itself, since it notes itself before it registers; the next
// registration of its id on this machine takes the id over at once, where
// it was refused until the lease ran out, and removes the notes of the
// processes gone. An older git-liza's note (ID, written after registering)
// of another gone process beside it does not stand in the way; a note of a
// live process, or none, leaves the id to its holder.
func TestRegisterTakesOverAGoneSupervisor(t *testing.T) {
	dir := testrepo.New(t, nil)
	var out bytes.Buffer
	e := &Env{Dir: dir, Stdout: &out, Stderr: &out, Getenv: os.Getenv}
	s, err := e.openAs(&cli.Command{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ops.Init(context.Background(), ops.InitRequest{Goal: "goal"}); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(s.repo.CommonDir, "liza", "supervisors")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	holdBy := func(o proc.Owner) {
		t.Helper()
		_, err := s.ops.As("coder-1", 0).Register(context.Background(), ops.RegisterRequest{Replace: true, Host: fmt.Sprintf("%s pid %d", o.Host, o.PID)})
		if err != nil {
			t.Fatal(err)
		}
	}
	note := func(name string, o proc.Owner) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(notes, name), []byte(o.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// No note: the id stays its holder's.
	dead := deadProcess(t)
	holdBy(dead)
	if _, err := e.register(context.Background(), s, "coder-1", false); err == nil || !strings.Contains(err.Error(), "already supervised") {
		t.Fatalf("register over a registration nobody noted = %v, want it refused", err)
	}

	// Its note, and an older git-liza's note of another gone process.
	note(fmt.Sprintf("coder-1.%d", dead.PID), dead)
	note("coder-1", deadProcess(t))
	reg, err := e.register(context.Background(), s, "coder-1", false)
	if err != nil {
		t.Fatalf("register over a gone supervisor noted here: %v", err)
	}
	if want := fmt.Sprintf("generation 1 on %s pid %d", dead.Host, dead.PID); reg.Replaced != want {
		t.Errorf("replaced %q, want %q", reg.Replaced, want)
	}
	left, _ := filepath.Glob(filepath.Join(notes, "*"))
	if mine := filepath.Join(notes, fmt.Sprintf("coder-1.%d", os.Getpid())); len(left) != 1 || left[0] != mine {
		t.Errorf("notes left %v, want only this process's", left)
	}

	// A live process's note: its id stays its own.
	forgetSupervisor(s.repo, "coder-1")
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Process.Kill()
	host, _ := os.Hostname()
	o := proc.Owner{PID: live.Process.Pid, Host: host}
	o.Start, _ = proc.StartTime(o.PID)
	holdBy(o)
	note(fmt.Sprintf("coder-1.%d", o.PID), o)
	if _, err := e.register(context.Background(), s, "coder-1", false); err == nil || !strings.Contains(err.Error(), "already supervised") {
		t.Fatalf("register over a live supervisor = %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(notes, fmt.Sprintf("coder-1.%d", os.Getpid()))); err == nil {
		t.Error("a refused registration left this process's note")
	}
}
