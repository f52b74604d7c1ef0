package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// refusingAPI is a model endpoint on 127.0.0.1 that refuses every request
// with status, as each API does (Anthropic's Messages, OpenAI's
// Responses, the Gemini API): a key it does not take (401), a rate limit
// (429), an unknown model (404).
func refusingAPI(t *testing.T, status int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		typ := map[int]string{401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}[status]
		body := map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": "refused by the test's endpoint"}}
		if strings.HasSuffix(r.URL.Path, "/responses") || strings.HasSuffix(r.URL.Path, "/models") && r.Header.Get("x-api-key") == "" {
			code := map[int]string{401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}[status]
			body = map[string]any{"error": map[string]any{"message": "refused by the test's endpoint", "type": "invalid_request_error", "code": code}}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// envProject is a project with a board and one task, hello, for a team
// run as root with --sandboxed; it returns the project root and a runner
// of commands there with env.
func envProject(t *testing.T) (string, string, func(env []string, args ...string) (string, string, int)) {
	t.Helper()
	base, err := os.MkdirTemp(varTmp(), "git-liza-envfail-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	writeFile(t, filepath.Join(root, "specs", "vision.md"), "# Vision\n\nhello.txt says hello.\n")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = root, env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		return stdout.String(), stderr.String(), code
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "TZ=UTC", "LANG=C.UTF-8"}
	for _, args := range [][]string{
		{"git", "init", "-q", "-b", "main"}, {"git", "add", "."},
		{"git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", "commit", "-q", "-m", "vision"},
		{"git", "liza", "init", "--spec", "specs/vision.md", "Say hello"},
		{"git", "liza", "task", "add", "--id", "hello", "--desc", "Write hello.txt", "--spec", "specs/vision.md", "--done", "hello.txt says hello", "--scope", "IN: hello.txt"},
	} {
		if out, errOut, code := run(env, args...); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	return root, home, run
}

// TestAgentCLIEnvFailures runs the real CLIs without what they need to
// authenticate (as root with --sandboxed): doctor says the CLI is not
// ready and names the fix; a team does not start (exit 5, one line). A
// claude or codex whose key the endpoint refuses gets as far as its sessions, which
// fail for their environment: the supervisor stops after two (exit 5, one
// line with the CLI's words and the fix), the task is UNCLAIMED again,
// nothing is BLOCKED and no anomaly is logged.
func TestAgentCLIEnvFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs are not run with -short")
	}
	e2eOnly(t)
	if os.Geteuid() != 0 {
		t.Skip("the presets' --sandboxed flags are for root: not running as root")
	}
	if _, err := exec.LookPath("git-liza"); err != nil {
		t.Skip("git-liza is not on PATH (TestMain puts it there)")
	}
	for _, c := range agentCLIs {
		path, ok := findCLI(c.name, c.program)
		if !ok {
			t.Run(c.name, func(t *testing.T) { t.Skipf("%s is not installed", c.program) })
			continue
		}
		cliPath := filepath.Dir(path) + ":" + os.Getenv("PATH")
		t.Run(c.name+"/no-credentials", func(t *testing.T) {
			_, home, run := envProject(t)
			env := []string{"HOME=" + home, "PATH=" + cliPath, "GIT_CONFIG_NOSYSTEM=1", "TZ=UTC", "LANG=C.UTF-8",
				"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
				"CODEX_HOME=" + filepath.Join(home, ".codex")}
			want := map[string]string{
				"claude": "claude is not logged in (claude auth status: loggedIn false) and no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN is set: set ANTHROPIC_API_KEY, or log claude in as this user: claude auth login (or claude setup-token, then set CLAUDE_CODE_OAUTH_TOKEN)",
				"codex":  "codex is not logged in (codex login status) and neither CODEX_API_KEY nor OPENAI_API_KEY is set: set CODEX_API_KEY, or log codex in as this user: codex login (or printenv OPENAI_API_KEY | codex login --with-api-key)",
				"gemini": "gemini has no auth method: no GEMINI_API_KEY, no Vertex AI settings, no security.auth.selectedType in " + filepath.Join(home, ".gemini", "settings.json") + ": set GEMINI_API_KEY (or choose an auth type in ~/.gemini/settings.json: security.auth.selectedType)",
			}[c.name]
			before, _, _ := run(env, "git", "rev-parse", "refs/liza/state")
			out, errOut, code := run(env, "git", "liza", "doctor", "--cli", c.name, "--sandboxed")
			if code != 5 || !strings.Contains(out, "fail agent auth") || !strings.Contains(errOut, "a team cannot run here: agent auth: ") {
				t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
			}
			out, errOut, code = run(env, "git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "0", "--cli", c.name, "--sandboxed")
			if code != 5 || errOut != "git-liza: "+want+"\n" {
				t.Fatalf("run: exit %d, stderr %q, want 5 and one line\n%s", code, errOut, out)
			}
			if after, _, _ := run(env, "git", "rev-parse", "refs/liza/state"); after != before {
				t.Fatalf("the refused team moved the board")
			}
		})
		if c.name == "gemini" {
			continue // its sessions with a refused key: not run here
		}
		t.Run(c.name+"/key-refused", func(t *testing.T) {
			root, home, run := envProject(t)
			api := refusingAPI(t, http.StatusUnauthorized)
			writeFile(t, filepath.Join(home, ".codex", "config.toml"), fmt.Sprintf(`model = "scripted"
model_provider = "scripted"
[model_providers.scripted]
name = "scripted"
base_url = "%s/v1"
wire_api = "responses"
env_key = "SCRIPTED_KEY"
`, api))
			env := []string{"HOME=" + home, "PATH=" + cliPath, "GIT_CONFIG_NOSYSTEM=1", "TZ=UTC", "LANG=C.UTF-8",
				"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
				// Claude Code retries a refused key ten times (2.5 minutes)
				// by default.
				"CLAUDE_CODE_MAX_RETRIES=1",
				"ANTHROPIC_API_KEY=sk-refused", "ANTHROPIC_BASE_URL=" + api,
				"CODEX_HOME=" + filepath.Join(home, ".codex"), "SCRIPTED_KEY=sk-refused"}
			out, errOut, code := run(env, "git", "liza", "doctor", "--cli", c.name, "--sandboxed")
			if code != 5 || !strings.Contains(out, "refuses the key in ") {
				t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
			}
			out, errOut, code = run(env, "git", "liza", "agent", "coder", "--cli", c.name, "--sandboxed", "--poll", "200ms", "--backoff", "200ms")
			wantLine := map[string]string{
				"claude": "git-liza: coder-1 stopped: 2 sessions in a row failed for their environment (auth): Failed to authenticate. API Error: 401 refused by the test's endpoint; fix: set ANTHROPIC_API_KEY (or log claude in: claude auth login, or claude setup-token for CLAUDE_CODE_OAUTH_TOKEN)\n",
				"codex":  "git-liza: coder-1 stopped: 2 sessions in a row failed for their environment (auth): unexpected status 401 Unauthorized: refused by the test's endpoint, url: " + api + "/v1/responses; fix: set CODEX_API_KEY (or OPENAI_API_KEY), or log codex in: codex login\n",
			}[c.name]
			if code != 5 || errOut != wantLine {
				t.Fatalf("agent: exit %d, stderr %q\nwant %q\nstdout:\n%s", code, errOut, wantLine, out)
			}
			if !strings.Contains(out, "released hello: its agent cannot work here (auth)") {
				t.Errorf("the supervisor's output:\n%s", out)
			}
			show, _, _ := run(env, "git", "liza", "show", "--json", "hello")
			if !strings.Contains(show, `"status": "UNCLAIMED"`) || strings.Contains(show, `"outcome": "crash"`) {
				t.Errorf("hello:\n%s", show)
			}
			board, _, _ := run(env, "git", "liza", "show", "--json")
			if strings.Contains(board, "BLOCKED") || strings.Contains(board, "retry_loop") {
				t.Errorf("the board has a BLOCKED task or an anomaly:\n%s", board)
			}
			logs, _ := filepath.Glob(filepath.Join(root, ".git", "liza", "logs", "sessions", "coder-1", "*-hello.jsonl"))
			if len(logs) != 2 {
				t.Errorf("session logs %v, want 2", logs)
			}

			// A whole team: run stops with the supervisor's one line, once
			// (exit 5); the task is UNCLAIMED again.
			out, errOut, code = run(env, "git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "0", "--cli", c.name, "--sandboxed", "--poll", "200ms", "--backoff", "200ms")
			if code != 5 || errOut != wantLine {
				t.Fatalf("run: exit %d, stderr %q\nwant %q\nstdout:\n%s", code, errOut, wantLine, out)
			}
			show, _, _ = run(env, "git", "liza", "show", "--json", "hello")
			board, _, _ = run(env, "git", "liza", "show", "--json")
			if !strings.Contains(show, `"status": "UNCLAIMED"`) || strings.Contains(board, "BLOCKED") || strings.Contains(board, "retry_loop") {
				t.Errorf("after run, hello:\n%s", show)
			}
		})
	}
}
