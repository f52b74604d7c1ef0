package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/refstore"
)

// buildMCP builds git-liza-mcp for the test.
func buildMCP(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "git-liza-mcp")
	if b, err := exec.Command("go", "build", "-o", out, "../git-liza-mcp").CombinedOutput(); err != nil {
		t.Fatalf("go build git-liza-mcp: %v\n%s", err, b)
	}
	return out
}

// rootOwnedRepo is a repository in a directory whose every parent is
// owned by root and writable by no one else (the package's directory, not
// the temporary one), as gemini wants for its system settings; when the
// test is not root, a temporary one.
func rootOwnedRepo(t *testing.T) *refstore.Repo {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		d, err := os.MkdirTemp(".", "mcp-doctor-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if dir, err = filepath.Abs(d); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, b)
	}
	repo, err := refstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMCPCheckRealCLIs: each installed CLI, given the server as a session
// gives it, lists it (gemini and Claude Code connect to it), and not the
// servers an agent committed in the checkout (.mcp.json,
// .gemini/settings.json: another server, and one named liza).
func TestMCPCheckRealCLIs(t *testing.T) {
	if os.Getenv("LIZA_E2E") != "1" {
		t.Skip("runs the real agent CLIs, an end-to-end run: LIZA_E2E=1 go test -run '^TestMCPCheckRealCLIs$' ./doctor (.ci/run sets LIZA_E2E=1)")
	}
	mcp := buildMCP(t)
	for _, cli := range agent.PresetNames() {
		t.Run(cli, func(t *testing.T) {
			program := agent.CachedCLI(cli, cli)
			if program == "" {
				t.Skipf("%s is not installed", cli)
			}
			repo := rootOwnedRepo(t)
			root := repo.MainWorkTree()
			writeFile(t, filepath.Join(root, ".mcp.json"), `{"mcpServers":{"planted":{"command":"/bin/true"},"liza":{"command":"/bin/false"}}}`)
			writeFile(t, filepath.Join(root, ".gemini", "settings.json"), `{"mcpServers":{"liza":{"command":"/bin/false"}}}`)
			t.Setenv("CODEX_HOME", t.TempDir())
			l, err := agent.Resolve(cli, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			l.Command[0], l.MCP = program, mcp
			c := MCP(context.Background(), Request{Repo: repo, Launch: l, EUID: os.Geteuid()})
			t.Logf("%s %s: %s", c.Level, c.Name, c.Detail)
			if cli == "gemini" && os.Geteuid() != 0 {
				if c.Level != Warn || !strings.Contains(c.Detail, "root") {
					t.Errorf("gemini as a user: %+v", c)
				}
				return
			}
			if c.Level != OK || !strings.Contains(c.Detail, "lists liza") {
				t.Errorf("%+v", c)
			}
		})
	}
}

// TestMCPCheckWarnings: without git-liza-mcp, and for a command of one's
// own, a team runs on the shell commands: a warning that says so.
func TestMCPCheckWarnings(t *testing.T) {
	l, _ := agent.Resolve("codex", nil, true)
	c := MCP(context.Background(), Request{Launch: l})
	if c.Level != Warn || !strings.Contains(c.Detail, "git-liza-mcp is not installed") || c.Fix != mcpInstall {
		t.Errorf("no git-liza-mcp: %+v", c)
	}
	l, _ = agent.Resolve("", []string{"/bin/sh"}, true)
	l.MCP = "/bin/git-liza-mcp"
	if c := MCP(context.Background(), Request{Launch: l}); c.Level != Warn || !strings.Contains(c.Detail, "command of your own") {
		t.Errorf("a command of one's own: %+v", c)
	}
	l, _ = agent.Resolve("gemini", nil, false)
	l.MCP = "/bin/git-liza-mcp"
	if c := MCP(context.Background(), Request{Launch: l}); c.Level != Warn || !strings.Contains(c.Detail, "container") {
		t.Errorf("gemini in its own sandbox: %+v", c)
	}
}

// TestMCPCheckClaudeInit: what Claude Code's init event says of the
// servers decides the check; a CLI that prints none leaves it unknown.
func TestMCPCheckClaudeInit(t *testing.T) {
	for _, tc := range []struct{ init, level, detail string }{
		{`[{"name":"liza","status":"connected"}]`, OK, "claude lists liza (connected), and no other server"},
		{`[{"name":"liza","status":"failed"}]`, Fail, "claude's liza server: failed"},
		{`[{"name":"liza","status":"connected"},{"name":"planted","status":"connected"}]`, Fail, "claude lists MCP servers besides liza"},
		{`[]`, Fail, "claude does not list the liza server"},
		{``, Warn, "cannot tell whether claude starts git liza's MCP server: claude printed no init event"},
	} {
		script := `echo '{"type":"system","subtype":"init","mcp_servers":` + tc.init + `}'`
		if tc.init == "" {
			script = "echo hello"
		}
		l := fakeCLI(t, "claude", script)
		l.MCP = "/bin/git-liza-mcp"
		c := MCP(context.Background(), Request{Launch: l})
		if c.Level != tc.level || !strings.HasPrefix(c.Detail, tc.detail) {
			t.Errorf("init %s: %s %s, want %s %s", tc.init, c.Level, c.Detail, tc.level, tc.detail)
		}
	}
}
