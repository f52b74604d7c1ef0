package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// mcpRun runs coder-1's supervisor with Claude Code's flags on a program
// that writes its arguments, one file per session, and exits 0; it
// returns the arguments of the first n sessions and the supervisor's
// lines.
func mcpRun(t *testing.T, mcp string, n int) ([][]string, string) {
	t.Helper()
	svc := newBoard(t)
	addTask(t, svc, "a")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	reg, err := svc.As("coder-1", 0).Register(ctx, ops.RegisterRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "argv")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "claude")
	// Each session writes its arguments to a hidden file and renames it
	// to its pid: the glob below never sees a file half written.
	body := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > " + out + "/.tmp$$ && mv " + out + "/.tmp$$ " + out + "/$$\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	cfg := Config{ID: "coder-1", Role: contracts.RoleCoder, Generation: reg.Generation, Repo: svc.Repo, Root: svc.Repo.MainWorkTree(),
		Launch: Launch{Command: []string{script}, Preset: Presets["claude"], Sandboxed: true, MCP: mcp}, Board: svc.As("coder-1", reg.Generation),
		Log: log, AgentOut: &syncBuffer{}, Poll: 10 * time.Millisecond, Backoff: time.Millisecond,
		PromptDir: filepath.Join(dir, "prompts"), LogDir: filepath.Join(dir, "logs")}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(out, "[0-9]*"))
		if len(files) >= n {
			cancel()
			<-done
			done <- nil
			var runs [][]string
			for _, f := range files[:n] {
				b, _ := os.ReadFile(f)
				runs = append(runs, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"))
			}
			return runs, log.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions did not start; the supervisor said:\n%s", n, log)
		}
	}
}

// TestSessionMCP: a session gets the server with its own identity (its
// agent, generation, task, worktree and prompt) in the CLI's
// configuration, and a prompt that names the tools.
func TestSessionMCP(t *testing.T) {
	mcpNoted.Clear()
	runs, log := mcpRun(t, "/opt/bin/git-liza-mcp", 1)
	argv := runs[0]
	conf, ok := flagValue(argv, "--mcp-config")
	if !ok || !slices.Contains(argv, "--strict-mcp-config") {
		t.Fatalf("no server: %q", argv[:len(argv)-1])
	}
	var c struct {
		MCPServers map[string]struct {
			Command string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(conf), &c); err != nil {
		t.Fatal(err)
	}
	srv := c.MCPServers[contracts.MCPServer]
	env := srv.Env
	if srv.Command != "/opt/bin/git-liza-mcp" || env["LIZA_AGENT_ID"] != "coder-1" || env["LIZA_ROLE"] != "coder" || env["LIZA_TASK"] != "a" ||
		env["LIZA_AGENT_GENERATION"] == "" || !strings.HasSuffix(env["LIZA_WORKTREE"], filepath.Join(".worktrees", "a")) || env["LIZA_PROJECT_ROOT"] == "" {
		t.Errorf("the server: %s", conf)
	}
	prompt := argv[len(argv)-1]
	if b, err := os.ReadFile(env["LIZA_PROMPT_FILE"]); err != nil || string(b) != prompt {
		t.Errorf("LIZA_PROMPT_FILE %s does not hold the session's prompt (%v)", env["LIZA_PROMPT_FILE"], err)
	}
	if !strings.Contains(prompt, "\nTOOLS: checkpoint, submit,") || !strings.Contains(prompt, "the submit tool (or git liza submit a)") {
		t.Errorf("the prompt does not name the tools")
	}
	if strings.Contains(log, "git-liza-mcp") {
		t.Errorf("the supervisor spoke of the server:\n%s", log)
	}
}

// TestSessionWithoutMCP: without git-liza-mcp the sessions run on the
// shell commands, their prompts name no tool, and the supervisor says so
// once, with the install line.
func TestSessionWithoutMCP(t *testing.T) {
	mcpNoted.Clear()
	runs, log := mcpRun(t, "", 2)
	for _, argv := range runs {
		if slices.Contains(argv, "--mcp-config") || strings.Contains(argv[len(argv)-1], "TOOLS:") || !strings.Contains(argv[len(argv)-1], "git liza submit a") {
			t.Errorf("a session without the server: %q", argv)
		}
	}
	if n := strings.Count(log, "go install github.com/liza-dev/git-liza/git-liza-mcp@latest"); n != 1 {
		t.Errorf("the supervisor said %d times that git-liza-mcp is missing:\n%s", n, log)
	}
}
