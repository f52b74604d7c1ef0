package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/liza-dev/git-liza/contracts"
)

// MCPServer is git liza's MCP server (the program git-liza-mcp) as one
// session's CLI starts it. Each preset registers it under the name
// contracts.MCPServer, in its CLI's own configuration syntax, with the
// session's identity written into that configuration: the CLIs differ in
// what of their own environment they pass to an MCP server (Claude Code and
// gemini pass all of it, codex none of the supervisor's variables:
// measured), and the identity must not depend on it.
type MCPServer struct {
	// Command is git-liza-mcp, an absolute path. The presets start it
	// directly rather than as `git-liza mcp`, which would only run it in
	// a second process.
	Command string
	// Env is the session's identity as mcpserver.FromEnv reads it
	// (LIZA_AGENT_ID=..., in the order of identityKeys).
	Env []string
	// Forward names the variables of the session's environment the
	// server needs beside its identity (PATH, HOME, git's: the
	// containment of planted configuration, the signing key, the author),
	// for a CLI that does not pass its own environment on (codex).
	Forward []string
	// Settings is the per-session settings file a CLI that takes its MCP
	// servers from no flag reads it from (gemini), under the repository's
	// .git/liza/, where an agent's sandbox cannot write.
	Settings string
}

// identityKeys are the variables of the session's identity, in the order
// the server's configuration lists them.
var identityKeys = []string{"LIZA_AGENT_ID", "LIZA_AGENT_GENERATION", "LIZA_ROLE", "LIZA_TASK",
	"LIZA_WORKTREE", "LIZA_PROJECT_ROOT", "LIZA_PROMPT_FILE"}

// identityEnv picks the identity variables out of a session's environment
// (the last value of each wins, as for exec).
func identityEnv(env []string) []string {
	var out []string
	for _, k := range identityKeys {
		if v, ok := lookupEnv(env, k); ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// forwardNames are the names of env's variables the server needs from
// the session's environment besides its identity.
func forwardNames(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if (k == "PATH" || k == "HOME" || k == "TMPDIR" || strings.HasPrefix(k, "GIT_")) && !contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// placeholderMCP is the server as Preset.Flags shows it.
var placeholderMCP = &MCPServer{Command: "GIT_LIZA_MCP",
	Env:     []string{"LIZA_...=IDENTITY"},
	Forward: []string{"PATH", "HOME", "GIT_..."}, Settings: "SETTINGS"}

// envMap is env as a JSON object.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// claudeMCP: Claude Code's flags for the server: the configuration inline
// (--mcp-config takes a JSON string as well as a file), and only that one
// (--strict-mcp-config): without it, a .mcp.json an agent commits starts
// its servers in every later session in a checkout of that commit, another
// agent's among them (measured with 2.1.x: such a server connects in a -p
// session that skips permissions).
func claudeMCP(s Session) ([]string, error) {
	if s.MCP == nil {
		return nil, nil
	}
	conf := map[string]any{"mcpServers": map[string]any{contracts.MCPServer: map[string]any{
		"type": "stdio", "command": s.MCP.Command, "args": []string{}, "env": envMap(s.MCP.Env),
	}}}
	b, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	return []string{"--mcp-config", string(b), "--strict-mcp-config"}, nil
}

// codexMCP: codex's -c overrides for the server, each value in TOML. They
// win over what a project's .codex/config.toml says of a server of the
// same name (measured with 0.169.0), which codex reads only for a project
// the operator trusts; a server of another name there is not removed by
// them (see docs/mcp.md).
func codexMCP(s Session) []string {
	if s.MCP == nil {
		return nil
	}
	key := "mcp_servers." + contracts.MCPServer + "."
	env := make([]string, 0, len(s.MCP.Env))
	for _, kv := range s.MCP.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, k+"="+tomlString(v))
	}
	forward := make([]string, 0, len(s.MCP.Forward))
	for _, k := range s.MCP.Forward {
		forward = append(forward, tomlString(k))
	}
	return []string{
		"-c", key + "command=" + tomlString(s.MCP.Command),
		"-c", key + "args=[]",
		"-c", key + "env={" + strings.Join(env, ", ") + "}",
		"-c", key + "env_vars=[" + strings.Join(forward, ", ") + "]",
		"-c", key + "enabled=true",
		// codex exec never asks, so a tool call that needs approval is
		// refused ("requires approval, but approval policy is never"):
		// the server's tools are the session's own, approved up front.
		"-c", key + "default_tools_approval_mode=" + tomlString("approve"),
	}
}

// tomlString quotes s as a TOML basic string: backslash and quote
// escaped, and every control character (which TOML forbids raw).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// geminiMCPRefusal: gemini 0.61.0 takes MCP servers from settings files
// only. The one a session can be given without touching the user's or the
// worktree's is the system settings file, whose path
// GEMINI_CLI_SYSTEM_SETTINGS_PATH overrides and which wins over a
// workspace .gemini/settings.json an agent commits. Gemini reads it only
// when it and every directory above it are owned by root and writable by
// no one else, so the server is given only to a session run as root, in a
// repository whose path is such (in practice: --sandboxed in a container).
// Its own sandbox, a container, would not find the program either.
func geminiMCPRefusal(s Session) error {
	if !s.Sandboxed {
		return fmt.Errorf("gemini's own sandbox is a container, where git-liza-mcp is not")
	}
	if s.MCP == nil {
		return nil
	}
	for _, kv := range s.MCP.Env {
		// gemini expands $VAR in its settings' strings, and a string of
		// a settings file must be valid UTF-8.
		if strings.Contains(kv, "$") || !utf8.ValidString(kv) {
			return fmt.Errorf("gemini would change %q in its settings ($ expands a variable)", kv)
		}
	}
	return rootOnly(filepath.Dir(s.MCP.Settings))
}

// geminiSettings is the session's settings file: the server alone.
func geminiSettings(s Session) ([]byte, error) {
	conf := map[string]any{"mcpServers": map[string]any{contracts.MCPServer: map[string]any{
		"command": s.MCP.Command, "args": []string{}, "env": envMap(s.MCP.Env),
	}}}
	return json.MarshalIndent(conf, "", "  ")
}

// writeSettings writes the session's settings file, readable by all and
// writable by its owner only (gemini skips one others may write).
func writeSettings(s Session, content func(Session) ([]byte, error)) error {
	b, err := content(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.MCP.Settings), 0o755); err != nil {
		return err
	}
	tmp := s.MCP.Settings + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, s.MCP.Settings)
}

// MCPRefusal says why a session cannot have git liza's MCP server (nil
// when it can): a command given after -- is not configured by git-liza,
// and a preset may not be able to give it in the session's situation.
func (l Launch) MCPRefusal(s Session) error {
	if l.Preset == nil {
		return fmt.Errorf("git-liza does not configure a command given after --")
	}
	s.Sandboxed = l.Sandboxed
	if l.Preset.mcpRefusal != nil {
		return l.Preset.mcpRefusal(s)
	}
	return nil
}

// mcpServer is git liza's MCP server for a session in sd named sname, or
// nil when the session runs without it: a command given after --,
// git-liza-mcp not installed, or a CLI that cannot be given it here. The
// last two are said once (per process) among the supervisor's lines.
func (s *sup) mcpServer(sd Session, sname string) *MCPServer {
	if s.Launch.Preset == nil {
		return nil
	}
	if s.Launch.MCP == "" {
		s.mcpNote("git-liza-mcp is not installed: agent sessions run without git liza's MCP tools, on the shell commands (install it: go install github.com/liza-dev/git-liza/git-liza-mcp@latest)")
		return nil
	}
	m := &MCPServer{Command: s.Launch.MCP, Settings: filepath.Join(s.PromptDir, s.ID, sname+".settings.json")}
	sd.MCP = m
	if err := s.Launch.MCPRefusal(sd); err != nil {
		s.mcpNote(fmt.Sprintf("%s sessions run without git liza's MCP tools, on the shell commands: %v", s.Launch.Preset.Name, err))
		return nil
	}
	return m
}

// mcpNoted holds the notes mcpNote has made.
var mcpNoted sync.Map

func (s *sup) mcpNote(msg string) {
	if _, done := mcpNoted.LoadOrStore(msg, true); !done {
		s.logf("%s", msg)
	}
}

// MCPFlags are the arguments and environment by which the preset's CLI
// is given the server of s, alone (doctor asks the CLI to list its
// servers with them); gemini's settings file is written.
func (l Launch) MCPFlags(s Session) ([]string, []string, error) {
	if l.Preset == nil || s.MCP == nil {
		return nil, nil, fmt.Errorf("no MCP server to configure")
	}
	s.Sandboxed = l.Sandboxed
	switch l.Preset.Name {
	case "claude":
		args, err := claudeMCP(s)
		return args, nil, err
	case "codex":
		return codexMCP(s), nil, nil
	case "gemini":
		if err := writeSettings(s, geminiSettings); err != nil {
			return nil, nil, err
		}
		return nil, []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + s.MCP.Settings}, nil
	}
	return nil, nil, fmt.Errorf("the %s preset has no MCP configuration", l.Preset.Name)
}
