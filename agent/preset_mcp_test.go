package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mcpSession is a coder's session whose CLI starts git liza's MCP server;
// its worktree path holds a quote, a backslash and a space, which each
// CLI's configuration syntax must carry intact.
func mcpSession(settings string) Session {
	wt := `/p/.worktrees/task 3 "q" \b`
	return Session{Dir: wt, Writable: []string{"/p/.git"}, MCP: &MCPServer{
		Command: "/bin/git-liza-mcp",
		Env: []string{"LIZA_AGENT_ID=coder-1", "LIZA_AGENT_GENERATION=2", "LIZA_ROLE=coder", "LIZA_TASK=task-3",
			"LIZA_WORKTREE=" + wt, "LIZA_PROJECT_ROOT=/p", "LIZA_PROMPT_FILE=/p/.git/liza/prompts/coder-1/s.md"},
		Forward:  []string{"GIT_CONFIG_COUNT", "PATH"},
		Settings: settings,
	}}
}

func argvOf(t *testing.T, cli string, sandboxed bool, s Session) ([]string, []string) {
	t.Helper()
	l, err := Resolve(cli, nil, sandboxed)
	if err != nil {
		t.Fatal(err)
	}
	l.Command[0] = "/bin/" + cli
	argv, env, err := l.Argv(s, "PROMPT")
	if err != nil {
		t.Fatal(err)
	}
	if argv[len(argv)-1] != "PROMPT" {
		t.Fatalf("%s: the prompt is not last: %q", cli, argv)
	}
	return argv, env
}

// flagValue is the argument after the flag's first occurrence.
func flagValue(argv []string, flag string) (string, bool) {
	i := slices.Index(argv, flag)
	if i < 0 || i+1 >= len(argv) {
		return "", false
	}
	return argv[i+1], true
}

// TestClaudeMCPArgs: Claude Code gets the server inline (--mcp-config) with
// the session's identity in its env, and only that server
// (--strict-mcp-config: a .mcp.json committed in the worktree starts
// nothing); with its permissions on, the server's tools are allowed.
func TestClaudeMCPArgs(t *testing.T) {
	for _, sandboxed := range []bool{true, false} {
		argv, _ := argvOf(t, "claude", sandboxed, mcpSession(""))
		conf, ok := flagValue(argv, "--mcp-config")
		if !ok {
			t.Fatalf("sandboxed=%v: no --mcp-config: %q", sandboxed, argv)
		}
		var c struct {
			MCPServers map[string]struct {
				Type, Command string
				Args          []string
				Env           map[string]string
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(conf), &c); err != nil {
			t.Fatalf("--mcp-config %s: %v", conf, err)
		}
		srv, ok := c.MCPServers["liza"]
		if !ok || len(c.MCPServers) != 1 || srv.Command != "/bin/git-liza-mcp" || srv.Type != "stdio" || len(srv.Args) != 0 {
			t.Errorf("sandboxed=%v: --mcp-config %s", sandboxed, conf)
		}
		if srv.Env["LIZA_AGENT_ID"] != "coder-1" || srv.Env["LIZA_WORKTREE"] != `/p/.worktrees/task 3 "q" \b` || len(srv.Env) != 7 {
			t.Errorf("sandboxed=%v: the server's env %v", sandboxed, srv.Env)
		}
		if !slices.Contains(argv, "--strict-mcp-config") {
			t.Errorf("sandboxed=%v: no --strict-mcp-config: a committed .mcp.json would start its servers", sandboxed)
		}
		allowed, _ := flagValue(argv, "--allowedTools")
		if want := map[bool]string{true: "", false: "mcp__liza"}[sandboxed]; allowed != want {
			t.Errorf("sandboxed=%v: --allowedTools %q, want %q", sandboxed, allowed, want)
		}
		// --mcp-config, --allowedTools and --add-dir take several values:
		// each is followed by a flag, never by the prompt.
		if i := slices.Index(argv, "-p"); i != len(argv)-2 {
			t.Errorf("sandboxed=%v: -p is not just before the prompt: %q", sandboxed, argv)
		}
	}
	// Without the server, none of it.
	s := mcpSession("")
	s.MCP = nil
	argv, _ := argvOf(t, "claude", false, s)
	for _, f := range []string{"--mcp-config", "--strict-mcp-config", "--allowedTools"} {
		if slices.Contains(argv, f) {
			t.Errorf("no server, but %s: %q", f, argv)
		}
	}
}

// TestCodexMCPArgs: codex gets the server through -c overrides (TOML
// values), its identity in env: codex starts its MCP servers with an
// environment of its own (measured: a variable of codex's own environment
// does not reach the server), so the variables the server needs beside it
// are named in env_vars.
func TestCodexMCPArgs(t *testing.T) {
	for _, sandboxed := range []bool{true, false} {
		argv, _ := argvOf(t, "codex", sandboxed, mcpSession(""))
		var overrides []string
		for i, a := range argv {
			if a == "-c" && strings.HasPrefix(argv[i+1], "mcp_servers.") {
				overrides = append(overrides, argv[i+1])
			}
		}
		want := []string{
			`mcp_servers.liza.command="/bin/git-liza-mcp"`,
			`mcp_servers.liza.args=[]`,
			`mcp_servers.liza.env={LIZA_AGENT_ID="coder-1", LIZA_AGENT_GENERATION="2", LIZA_ROLE="coder", LIZA_TASK="task-3", ` +
				`LIZA_WORKTREE="/p/.worktrees/task 3 \"q\" \\b", LIZA_PROJECT_ROOT="/p", LIZA_PROMPT_FILE="/p/.git/liza/prompts/coder-1/s.md"}`,
			`mcp_servers.liza.env_vars=["GIT_CONFIG_COUNT", "PATH"]`,
			`mcp_servers.liza.enabled=true`,
			`mcp_servers.liza.default_tools_approval_mode="approve"`,
		}
		if !slices.Equal(overrides, want) {
			t.Errorf("sandboxed=%v: overrides\n got %q\nwant %q", sandboxed, overrides, want)
		}
	}
}

// TestTOMLString: what codex's -c values quote.
func TestTOMLString(t *testing.T) {
	for in, want := range map[string]string{
		`a`: `"a"`, `"`: `"\""`, `\`: `"\\"`, "\n\t\x1b\x7f": `"\n\t\u001B\u007F"`, "é": `"é"`,
	} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestGeminiMCPArgs: gemini reads the server from a per-session settings
// file under .git/liza/ given as its system settings (which win over a
// workspace .gemini/settings.json), and starts no server of another name
// (--allowed-mcp-server-names).
func TestGeminiMCPArgs(t *testing.T) {
	settings := filepath.Join(t.TempDir(), "liza", "prompts", "coder-1", "s.gemini.json")
	argv, env := argvOf(t, "gemini", true, mcpSession(settings))
	if v, _ := flagValue(argv, "--allowed-mcp-server-names"); v != "liza" {
		t.Errorf("--allowed-mcp-server-names %q: %q", v, argv)
	}
	if !slices.Contains(env, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="+settings) {
		t.Errorf("env %q", env)
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if srv := c.MCPServers["liza"]; len(c.MCPServers) != 1 || srv.Command != "/bin/git-liza-mcp" || srv.Env["LIZA_TASK"] != "task-3" || len(srv.Env) != 7 {
		t.Errorf("settings %s", b)
	}
	if fi, err := os.Stat(settings); err != nil || fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("settings file mode %v, %v: gemini skips one others can write", fi.Mode(), err)
	}
}

// TestPresetFlagsMCP: docs/agent-clis.md's and doctor's command line shows the
// server's flags with placeholders.
func TestPresetFlagsMCP(t *testing.T) {
	for name, want := range map[string][]string{
		"claude": {`--mcp-config '{"mcpServers":{"liza":{"args":[],"command":"GIT_LIZA_MCP","env":{"LIZA_...":"IDENTITY"},"type":"stdio"}}}' --strict-mcp-config`},
		"codex":  {`-c 'mcp_servers.liza.command="GIT_LIZA_MCP"' -c mcp_servers.liza.args=[] -c 'mcp_servers.liza.env={LIZA_...="IDENTITY"}' -c 'mcp_servers.liza.env_vars=["PATH", "HOME", "GIT_..."]'`},
		"gemini": {"GEMINI_CLI_SYSTEM_SETTINGS_PATH=SETTINGS", "--allowed-mcp-server-names liza"},
	} {
		got := Presets[name].Flags(true)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s flags lack %s:\n%s", name, w, got)
			}
		}
	}
	if got := Presets["claude"].Flags(false); !strings.Contains(got, "--allowedTools mcp__liza") {
		t.Errorf("claude flags with its sandbox: %s", got)
	}
}
