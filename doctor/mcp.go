package doctor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
)

// mcpInstall is the fix line of a missing git-liza-mcp.
const mcpInstall = "go install github.com/liza-dev/git-liza/git-liza-mcp@latest"

// MCP checks that the preset's CLI, given git liza's MCP server as a
// session gives it (agent.Launch.MCPFlags, with a coder's identity), lists
// it, and no other: Claude Code's first stream event (its init, printed
// before it sends anything to its endpoint, which is a closed local port
// here), `codex mcp list --json`, `gemini mcp list` (which starts the
// server and says whether it connected). A team runs without the server
// (on the shell commands) when git-liza-mcp is not installed or the CLI
// cannot be given it here: a warning. A server the CLI is given but does
// not list or cannot start, or lists beside others, fails; a CLI that does
// not answer as the release the preset was verified with (no init event,
// no JSON) is a warning: nothing is known.
func MCP(ctx context.Context, r Request) Check {
	c := Check{Name: "mcp server", Level: Warn}
	l := r.Launch
	if l.Preset == nil {
		c.Detail = "a command of your own is not given git liza's MCP server; the agent has the shell commands"
		return c
	}
	if l.MCP == "" {
		c.Detail, c.Fix = "git-liza-mcp is not installed: "+l.Preset.Name+" sessions run without git liza's MCP tools, on the shell commands", mcpInstall
		return c
	}
	root := r.root()
	settings := filepath.Join(os.TempDir(), "git-liza-doctor-mcp", "settings.json")
	if r.Repo != nil {
		settings = filepath.Join(r.Repo.CommonDir, "liza", "doctor", "mcp-settings.json")
	}
	s := agent.Session{Dir: root, MCP: &agent.MCPServer{Command: l.MCP, Settings: settings,
		Env:     []string{"LIZA_AGENT_ID=coder-1", "LIZA_ROLE=coder", "LIZA_PROJECT_ROOT=" + root},
		Forward: []string{"PATH", "HOME"}}}
	if err := l.MCPRefusal(s); err != nil {
		c.Detail = l.Preset.Name + " sessions run without git liza's MCP tools, on the shell commands: " + err.Error()
		return c
	}
	program, err := exec.LookPath(l.Command[0])
	if err != nil {
		c.Detail = "cannot ask " + l.Command[0] + " for its MCP servers: " + err.Error()
		return c
	}
	args, env, err := l.MCPFlags(s)
	if err != nil {
		c.Level, c.Detail, c.Code = Fail, err.Error(), contracts.CodeMissingDep
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var servers map[string]string
	switch l.Preset.Name {
	case "claude":
		servers, err = claudeServers(ctx, program, root, args)
	case "codex":
		servers, err = codexServers(ctx, program, root, args)
	case "gemini":
		servers, err = geminiServers(ctx, program, root, env)
	}
	st := servers[contracts.MCPServer]
	switch {
	case err != nil:
		// The CLI did not answer as the release the preset was verified
		// with does: nothing is known either way.
		c.Detail = "cannot tell whether " + l.Preset.Name + " starts git liza's MCP server: " + err.Error()
	case st == "":
		c.Level, c.Detail, c.Code = Fail, fmt.Sprintf("%s does not list the %s server it is given (it lists %v)", l.Preset.Name, contracts.MCPServer, servers), contracts.CodeMissingDep
	case st != "connected" && !strings.HasPrefix(st, "configured"):
		c.Level, c.Detail, c.Code = Fail, fmt.Sprintf("%s's %s server: %s", l.Preset.Name, contracts.MCPServer, st), contracts.CodeMissingDep
	case len(servers) > 1:
		c.Level, c.Detail, c.Code = Fail, fmt.Sprintf("%s lists MCP servers besides %s: %v", l.Preset.Name, contracts.MCPServer, servers), contracts.CodeInvalid
		c.Fix = "remove them from the CLI's configuration"
	default:
		c.Level, c.Detail = OK, fmt.Sprintf("%s lists %s (%s), and no other server", l.Preset.Name, contracts.MCPServer, servers[contracts.MCPServer])
	}
	return c
}

// claudeServers reads Claude Code's init event: its MCP servers and each
// one's status. Claude Code prints it before it sends anything to its
// endpoint, which is a closed port here; it is stopped once read.
func claudeServers(ctx context.Context, program, dir string, mcp []string) (map[string]string, error) {
	args := append([]string{"--output-format", "stream-json", "--verbose"}, mcp...)
	cmd := exec.CommandContext(ctx, program, append(args, "-p", "ok")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	waited := false
	defer func() {
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ev struct {
			Type, Subtype string
			MCPServers    []struct{ Name, Status string } `json:"mcp_servers"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "system" || ev.Subtype != "init" {
			continue
		}
		servers := map[string]string{}
		for _, s := range ev.MCPServers {
			servers[s.Name] = s.Status
		}
		return servers, nil
	}
	// Its stderr is read once it has exited: until then exec's copy of
	// it may still be writing.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	waited = true
	return nil, fmt.Errorf("claude printed no init event: %s", lastLine(stderr.String()))
}

// codexServers reads `codex mcp list --json` given the session's -c
// overrides; codex does not start the servers to list them.
func codexServers(ctx context.Context, program, dir string, mcp []string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, program, append(append([]string{"mcp", "list"}, mcp...), "--json")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("codex mcp list: %v: %s", err, lastLine(stderr.String()))
	}
	var list []struct {
		Name      string
		Enabled   bool
		Transport struct {
			Command string
			Env     map[string]string
		}
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("codex mcp list --json: %v", err)
	}
	servers := map[string]string{}
	for _, s := range list {
		if !s.Enabled {
			continue
		}
		servers[s.Name] = "configured: " + s.Transport.Command
		if s.Name == contracts.MCPServer && s.Transport.Env["LIZA_AGENT_ID"] == "" {
			servers[s.Name] = "without the session's identity (no LIZA_AGENT_ID in its env)"
		}
	}
	return servers, nil
}

// geminiServers reads `gemini mcp list` with the session's settings:
// gemini starts each server and says whether it connected. A session
// starts only the server named by --allowed-mcp-server-names, which mcp
// list does not take: the other servers it lists are left out here.
func geminiServers(ctx context.Context, program, dir string, env []string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, program, "mcp", "list")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "GEMINI_CLI_TRUST_WORKSPACE=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("gemini mcp list: %v: %s", err, lastLine(string(out)))
	}
	for _, line := range strings.Split(string(out), "\n") {
		_, rest, ok := strings.Cut(line, " "+contracts.MCPServer+": ")
		if !ok {
			continue
		}
		if !strings.HasSuffix(rest, "Connected") {
			return map[string]string{contracts.MCPServer: strings.TrimSpace(rest)}, nil
		}
		return map[string]string{contracts.MCPServer: "connected"}, nil
	}
	return map[string]string{}, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return contracts.Printable(s)
}
