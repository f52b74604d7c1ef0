package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/transcript"
)

// The command a scripted session runs and fails with, and what it says.
const (
	failingCommand = "ls /liza-no-such-widget"
	failingMessage = "/liza-no-such-widget"
)

// cliEnv is the environment that points each CLI at the scripted model,
// with its home (and codex's and gemini's settings) under home.
func cliEnv(t *testing.T, home, path string, model *scriptedModel) []string {
	t.Helper()
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), fmt.Sprintf(`model = "scripted"
model_provider = "scripted"
[model_providers.scripted]
name = "scripted"
base_url = "%s/v1"
wire_api = "responses"
`, model.url))
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "telemetry": {"enabled": false}
}
`)
	return []string{
		"HOME=" + home, "PATH=" + path, "GIT_CONFIG_NOSYSTEM=1", "TZ=UTC", "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + model.url, "ANTHROPIC_API_KEY=sk-scripted", "DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"CODEX_HOME=" + filepath.Join(home, ".codex"),
		"GEMINI_API_KEY=scripted", "GOOGLE_GEMINI_BASE_URL=" + model.url, "GEMINI_CLI_NO_RELAUNCH=true",
	}
}

// streamScript is a session of three turns: a shell call that succeeds,
// one that fails, and closing text. gemini reports a shell command that
// fails as a tool call that succeeded (its stream has no exit code): its
// session makes one more call, of its file reader on a missing file,
// which it reports as failed.
func streamScript(cli string) func(turn) reply {
	return func(tn turn) reply {
		if tn.shellTool == "" || !strings.Contains(tn.text, "LIZA-STREAM-CAPTURE") {
			return reply{text: "ok"}
		}
		switch tn.answers {
		case 0:
			return reply{tool: tn.shellTool, command: "echo LIZA-STREAM-OK"}
		case 1:
			return reply{tool: tn.shellTool, command: failingCommand}
		case 2:
			if cli == "gemini" {
				return reply{tool: "read_file", args: map[string]any{"file_path": failingMessage}}
			}
		}
		return reply{text: "The widget is missing: LIZA-STREAM-END."}
	}
}

// TestAgentCLIStreams runs each CLI once with its preset's flags (as root
// with --sandboxed) against a scripted model, and reads its stream: the
// two tool calls with their inputs, the first's result, the second's
// error, the model's text, the CLI's session id and its usage. With
// LIZA_STREAM_FIXTURES=DIR it keeps each raw stream as DIR/NAME.jsonl
// (transcript/testdata holds the ones the parsers' tests read).
func TestAgentCLIStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs are not run with -short")
	}
	e2eOnly(t)
	if os.Geteuid() != 0 {
		t.Skip("the presets' --sandboxed flags are for root: not running as root")
	}
	for _, c := range agentCLIs {
		t.Run(c.name, func(t *testing.T) {
			path, ok := findCLI(c.name, c.program)
			if !ok {
				t.Skipf("%s is not installed: .ci/run installs it (npm install --prefix %s %s@%s)", c.program, filepath.Join(agent.CLICache(), c.name), c.pkg, c.version)
			}
			base, err := os.MkdirTemp(varTmp(), "git-liza-stream-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			dir := filepath.Join(base, "work")
			writeFile(t, filepath.Join(dir, "README"), "scratch\n")
			if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			model := newScriptedModel(t)
			model.script = streamScript(c.name)
			env := cliEnv(t, filepath.Join(base, "home"), filepath.Dir(path)+":/usr/local/bin:/usr/bin:/bin", model)
			l, err := agent.Resolve(c.name, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			l.Command[0] = path
			argv, extra, err := l.Argv(agent.Session{Dir: dir}, "LIZA-STREAM-CAPTURE: run the shell commands you are given.")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = dir, append(env, extra...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			if d := os.Getenv("LIZA_STREAM_FIXTURES"); d != "" {
				if err := os.WriteFile(filepath.Join(d, c.name+".jsonl"), stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fail := func(format string, a ...any) {
				t.Helper()
				t.Fatalf("%s\nexit: %v\nstdout:\n%s\nstderr:\n%s\nmodel:\n%s", fmt.Sprintf(format, a...), runErr, stdout.String(), stderr.String(), model.report())
			}
			if runErr != nil {
				fail("the session failed")
			}
			var log bytes.Buffer
			w := transcript.NewWriter(&log, transcript.Header{Agent: "probe", CLI: c.name}, l.Format())
			w.Stdout().Write(stdout.Bytes())
			w.Stderr().Write(stderr.Bytes())
			w.End(transcript.End{Outcome: "done"})
			checkStream(t, c.name, fail, w)
		})
	}
}

// checkStream asserts what a user reading the session would look for.
func checkStream(t *testing.T, cli string, fail func(string, ...any), w *transcript.Writer) {
	t.Helper()
	var tools, okResult, errResult, text int
	wantTools, wantOK := 2, 1
	if cli == "gemini" {
		wantTools, wantOK = 3, 2 // the failed shell command reads as a success
	}
	var rendered []string
	for _, st := range w.Steps() {
		rendered = append(rendered, transcript.Render(st, 120))
		switch {
		case st.Kind == transcript.KindTool && strings.Contains(st.Input, "echo LIZA-STREAM-OK"):
			tools++
		case st.Kind == transcript.KindTool && strings.Contains(st.Input, failingMessage):
			tools++
		case st.Kind == transcript.KindResult && !st.Error && strings.Contains(st.Text, "LIZA-STREAM-OK"):
			okResult++
		case cli == "gemini" && st.Kind == transcript.KindResult && !st.Error && strings.Contains(st.Text, failingMessage):
			okResult++
		case st.Kind == transcript.KindResult && st.Error && strings.Contains(st.Text, failingMessage):
			errResult++
		case st.Kind == transcript.KindText && strings.Contains(st.Text, "LIZA-STREAM-END"):
			text++
		}
	}
	sum := w.Summary()
	steps := strings.Join(rendered, "\n")
	if tools != wantTools || okResult != wantOK || errResult != 1 || text != 1 {
		fail("steps: %d tool calls, %d results, %d tool errors, %d closing texts; want %d, %d, 1, 1:\n%s", tools, okResult, errResult, text, wantTools, wantOK, steps)
	}
	if sum.SessionID == "" || sum.Usage.InputTokens == 0 || sum.Usage.OutputTokens == 0 {
		fail("summary %+v: no session id or no usage\n%s", sum, steps)
	}
	if !strings.Contains(sum.LastToolError, failingMessage) || !strings.HasPrefix(sum.Quote(), "last tool error: ") {
		fail("summary %+v: the quote is not the tool error", sum)
	}
	t.Logf("summary: %+v\n%s", sum, steps)
}

// TestAgentCLITranscript runs a coder through the real CLI (as root with
// --sandboxed) on a task whose session calls its shell tool with a
// command that fails, then ends without submitting, three times: the task
// goes BLOCKED with a reason that quotes the tool's error, and the
// sessions' logs hold the call, its input and its error.
func TestAgentCLITranscript(t *testing.T) {
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
	for _, c := range agentCLIs[:2] { // claude and codex
		t.Run(c.name, func(t *testing.T) {
			path, ok := findCLI(c.name, c.program)
			if !ok {
				t.Skipf("%s is not installed: .ci/run installs it (npm install --prefix %s %s@%s)", c.program, filepath.Join(agent.CLICache(), c.name), c.pkg, c.version)
			}
			blockedByToolError(t, c.name, path)
		})
	}
}

func blockedByToolError(t *testing.T, name, cliPath string) {
	base, root, bin := teamBase(t, "git-liza-transcript-")
	model := newScriptedModel(t)
	model.script = func(tn turn) reply {
		if tn.shellTool != "" && coderRE.MatchString(tn.text) && tn.answers == 0 {
			return reply{tool: tn.shellTool, command: failingCommand}
		}
		return reply{text: "I could not find the widget."}
	}
	env := cliEnv(t, filepath.Join(base, "home"), bin+":"+filepath.Dir(cliPath)+":/usr/local/bin:/usr/bin:/bin", model)
	run := widgetProject(t, root, env)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	team := exec.CommandContext(ctx, "git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "0",
		"--poll", "200ms", "--cli", name, "--sandboxed")
	team.Dir, team.Env = root, env
	var out bytes.Buffer
	team.Stdout, team.Stderr = &out, &out
	team.Cancel = func() error { return team.Process.Signal(os.Interrupt) }
	team.WaitDelay = 30 * time.Second
	if err := team.Start(); err != nil {
		t.Fatal(err)
	}
	var board string
	for deadline := time.Now().Add(3 * time.Minute); ; {
		board = run("git", "liza", "show", "widget")
		if strings.Contains(board, "status: BLOCKED") {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			team.Wait()
			t.Fatalf("the task was not blocked within 3 minutes\nteam:\n%s\nboard:\n%s\nmodel:\n%s", out.String(), board, model.report())
		}
		time.Sleep(300 * time.Millisecond)
	}
	cancel()
	team.Wait()

	// The block reason quotes the tool's error, on one line.
	quote := map[string]string{
		"claude": "last tool error: Bash: Exit code 2 ls: cannot access '/liza-no-such-widget': No such file or directory",
		"codex":  "last tool error: shell: ls: cannot access '/liza-no-such-widget': No such file or directory",
	}[name]
	var task struct {
		Status        string `json:"status"`
		BlockedReason string `json:"blocked_reason"`
	}
	if err := json.Unmarshal([]byte(run("git", "liza", "show", "--json", "widget")), &task); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(task.BlockedReason, "3 agent sessions in a row ended without progress") ||
		!strings.HasSuffix(task.BlockedReason, "; "+quote) {
		t.Fatalf("the block reason does not quote the tool error %q:\n%s\nteam:\n%s", quote, board, out.String())
	}

	// Each session's log holds the call, its input and its error.
	logs, _ := filepath.Glob(filepath.Join(root, ".git", "liza", "logs", "sessions", "coder-1", "*-widget.jsonl"))
	if len(logs) != 3 {
		t.Fatalf("session logs %v, want 3", logs)
	}
	for _, l := range logs {
		h, recs, err := transcript.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		p := transcript.NewParser(h.Format)
		var call, failed bool
		var steps []string
		for _, r := range recs {
			for _, st := range p.Record(r) {
				steps = append(steps, transcript.Render(st, 160))
				call = call || st.Kind == transcript.KindTool && strings.Contains(st.Input, failingCommand)
				failed = failed || st.Kind == transcript.KindResult && st.Error && strings.Contains(st.Text, "No such file or directory")
			}
		}
		if h.Format != name || h.Task != "widget" || !call || !failed || recs[len(recs)-1].End == nil {
			t.Fatalf("%s (format %q): tool call %v, its error %v, end %v:\n%s", l, h.Format, call, failed, recs[len(recs)-1].End, strings.Join(steps, "\n"))
		}
		t.Logf("%s:\n%s", filepath.Base(l), strings.Join(steps, "\n"))
	}
	t.Logf("team output: %d lines, %d bytes", strings.Count(out.String(), "\n"), out.Len())

	// git liza logs shows the failed call, marked, in the task's latest
	// session; run's own output holds none of the agent's.
	shown := run("git", "liza", "logs", "widget")
	wantErr := map[string]string{"claude": "error  Bash: Exit code 2", "codex": "error  shell: "}[name]
	if !strings.Contains(shown, wantErr) || !strings.Contains(shown, "end    idle: ") {
		t.Fatalf("git liza logs widget does not show the tool error (%q) and the end:\n%s", wantErr, shown)
	}
	if strings.Contains(out.String(), "could not find the widget") {
		t.Fatalf("run printed the agent's text:\n%s", out.String())
	}
	t.Logf("git liza logs widget:\n%s", shown)
}

// widgetProject makes root a repository with a spec and a board whose
// goal is to build the widget, with its one task "widget"; it returns how
// to run a command there with env.
func widgetProject(t *testing.T, root string, env []string) func(args ...string) string {
	t.Helper()
	writeFile(t, filepath.Join(root, "specs", "vision.md"), "# Vision\n\nThe widget exists.\n")
	run := runAs(t, teamUser{uid: os.Geteuid(), gid: os.Getegid()}, root, env)
	run("git", "init", "-q", "-b", "main")
	run("git", "add", ".")
	run("git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", "commit", "-q", "-m", "vision")
	run("git", "liza", "init", "--spec", "specs/vision.md", "Build the widget")
	run("git", "liza", "task", "add", "--id", "widget", "--desc", "Build the widget", "--spec", "specs/vision.md",
		"--done", "the widget exists", "--scope", "IN: widget")
	return run
}
