package commands

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTeamStopsWhatItStarted: when one supervisor of a team cannot be
// started, the ones already running are stopped (and waited for) rather
// than left behind.
func TestTeamStopsWhatItStarted(t *testing.T) {
	dir := t.TempDir()
	// A stand-in supervisor, run as `sh agent ROLE --agent ID`.
	script := "trap 'echo stopped $3 >> log; exit 0' TERM\necho started $3 >> log\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(filepath.Join(dir, "agent"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	logged := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "log"))
		return string(b)
	}
	var started []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range started {
			_ = c.Process.Kill()
		}
	})
	start := func(c *exec.Cmd) error {
		if len(started) == 2 {
			return errors.New("out of processes")
		}
		if err := c.Start(); err != nil {
			return err
		}
		started = append(started, c)
		id := c.Args[slices.Index(c.Args, "--agent")+1]
		for i := 0; i < 600 && !strings.Contains(logged(), "started "+id); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		return nil
	}
	e := &Env{Dir: dir, Stdout: io.Discard, Stderr: io.Discard, Getenv: os.Getenv}
	err := e.team(context.Background(), teamSpec{planner: true, coders: 1, reviewers: 1, out: io.Discard, exe: "sh", start: start})
	if err == nil || !strings.Contains(err.Error(), "cannot start the supervisor of code-reviewer-1: out of processes") {
		t.Fatalf("team = %v, want the start failure", err)
	}
	for _, id := range []string{"planner-1", "coder-1"} {
		if !strings.Contains(logged(), "stopped "+id) {
			t.Errorf("the supervisor of %s was left running; log:\n%s", id, logged())
		}
	}
}
