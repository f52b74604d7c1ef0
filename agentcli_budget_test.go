package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentCLIBudget runs a coder through the real Claude Code (as root
// with --sandboxed) against a scripted model that keeps calling its shell
// tool, each answer reporting 600 input tokens, under a 2,000-token
// session budget: each session is stopped within one model request of
// crossing it (its fourth answer makes 2,400), recorded as stopped with
// the figures and with the tokens its answers reported, and after three
// such sessions the task is given up (BLOCKED for the planner).
func TestAgentCLIBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs are not run with -short")
	}
	e2eOnly(t)
	if _, err := exec.LookPath("git-liza"); err != nil {
		t.Skip("git-liza is not on PATH (TestMain puts it there)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the --sandboxed run is the root one: not running as root")
	}
	c := agentCLIs[0]
	path, ok := findCLI(c.name, c.program)
	if !ok {
		t.Skipf("%s is not installed", c.program)
	}
	base, root, bin := teamBase(t, "git-liza-budget-")
	model := newScriptedModel(t)
	coderAnswers := 0
	model.script = func(tn turn) reply {
		if tn.shellTool != "" && coderRE.MatchString(tn.text) {
			model.mu.Lock()
			coderAnswers++
			model.mu.Unlock()
			return reply{tool: tn.shellTool, command: "echo still working"}
		}
		return reply{text: "ok"}
	}
	model.usage = func(tn turn) tokenUsage {
		if coderRE.MatchString(tn.text) {
			return tokenUsage{input: 600}
		}
		return tokenUsage{input: 1}
	}
	env := cliEnv(t, filepath.Join(base, "home"), bin+":"+filepath.Dir(path)+":/usr/local/bin:/usr/bin:/bin", model)
	run := widgetProject(t, root, env)
	run("git", "liza", "budget", "--session-tokens", "2000")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	team := exec.CommandContext(ctx, "git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "0",
		"--poll", "200ms", "--cli", c.name, "--sandboxed")
	team.Dir, team.Env = root, env
	var out bytes.Buffer
	team.Stdout, team.Stderr = &out, &out
	team.Cancel = func() error { return team.Process.Signal(os.Interrupt) }
	team.WaitDelay = 30 * time.Second
	if err := team.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var board string
	for deadline := time.Now().Add(4 * time.Minute); ; {
		board = run("git", "liza", "show", "widget")
		if strings.Contains(board, "status: BLOCKED") {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			team.Wait()
			t.Fatalf("the task was not blocked within 4 minutes\nteam:\n%s\nboard:\n%s\nmodel:\n%s", out.String(), board, model.report())
		}
		time.Sleep(300 * time.Millisecond)
	}
	took := time.Since(start)
	cancel()
	team.Wait()

	var task struct {
		BlockedReason string `json:"blocked_reason"`
		History       []struct {
			Event   string `json:"event"`
			Outcome string `json:"outcome"`
			Reason  string `json:"reason"`
			Usage   *struct {
				Input int64 `json:"input_tokens"`
			} `json:"usage"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(run("git", "liza", "show", "--json", "widget")), &task); err != nil {
		t.Fatal(err)
	}
	const why = "budget_exceeded: session spent 2,400 tokens of its 2,000 (session_tokens)"
	if !strings.Contains(task.BlockedReason, why) {
		t.Errorf("blocked reason %q does not say %q", task.BlockedReason, why)
	}
	var sessions int
	for _, ev := range task.History {
		if ev.Event != "session_ended" {
			continue
		}
		sessions++
		if ev.Outcome != "stopped" || !strings.HasPrefix(ev.Reason, why) {
			t.Errorf("session %d: %s, %q; want stopped for its budget", sessions, ev.Outcome, ev.Reason)
		}
		if ev.Usage == nil || ev.Usage.Input < 2400 || ev.Usage.Input > 3000 {
			t.Errorf("session %d recorded %+v; want the 2,400 (or, after one more answer, 3,000) input tokens its answers reported", sessions, ev.Usage)
		}
	}
	model.mu.Lock()
	answers := coderAnswers
	model.mu.Unlock()
	if sessions != 3 || answers > 3*5 {
		t.Errorf("%d sessions, %d coder answers: want 3 sessions of at most 5 answers each (stopped within one of the fourth)\nteam:\n%s", sessions, answers, out.String())
	}
	t.Logf("3 sessions stopped at their budget in %s, %d coder answers in all", took.Round(100*time.Millisecond), answers)
}
