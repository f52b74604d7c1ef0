package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/transcript"
)

// A Preset is an agent CLI a supervisor knows by name: how to start one
// non-interactive session of it in a task's worktree, with the prompt as
// the last argument.
//
// Every preset runs in one of two situations. With Sandboxed (the operator
// says the machine is an isolated sandbox: a container, a VM, a CI job) it
// turns the CLI's own sandbox and permission prompts off, since the machine
// is the boundary. Without it, the CLI keeps its own sandbox, configured so
// that the agent can write exactly what its work needs: its worktree, the
// worktree's own git directory (.git/worktrees/ID, where git keeps a linked
// worktree's index and HEAD) and the repository's git directory (objects,
// refs, refs/liza/state), so that it can commit and run git liza.
type Preset struct {
	Name    string
	Program string
	// Format is the machine-readable stream the preset's flags make the
	// CLI print, as package transcript reads it ("claude", "codex",
	// "gemini").
	Format string
	// Package is the npm package the CLI ships in, for the fix line of a
	// refusal.
	Package string
	// MinVersion is the oldest release the preset's flags were verified
	// with; an older CLI is refused before anything is claimed.
	MinVersion string
	// Needs lists the programs the CLI's own sandbox needs on PATH, when
	// not Sandboxed, on Linux (see needsOn).
	Needs []string
	// Stubs are files the CLI's own sandbox leaves at the top of the
	// directory it runs in (empty files and directories, never work):
	// they are kept out of git status (info/exclude, anchored to the top of
	// each worktree) and removed after each session.
	Stubs []string
	// check refuses a situation the CLI's own sandbox cannot run in.
	check func() error
	// mcpRefusal says why a session cannot have git liza's MCP server
	// (nil: it can); settings is the content of the per-session settings
	// file the CLI reads it from (MCPServer.Settings), for a CLI that
	// takes it from no flag.
	mcpRefusal func(s Session) error
	settings   func(s Session) ([]byte, error)
	// args returns the arguments before the prompt, and the environment
	// the session adds.
	args func(s Session) (args, env []string, err error)
}

// Session is what a preset needs to know of one agent session.
type Session struct {
	// Sandboxed: the machine is an isolated sandbox (--sandboxed).
	Sandboxed bool
	// Dir is where the agent runs: its task worktree, or a reviewer's
	// checkout, or the main checkout for a planner.
	Dir string
	// Writable are the directories outside Dir the agent must be able to
	// write: the objects, refs and reflogs of the repository's git
	// directory (and in remote mode of a remote on this machine), and
	// Dir's own git directory.
	Writable []string
	// Protected are the parts of those git directories that must stay
	// read-only, even where the sandbox lets the agent write around them
	// (a planner's Dir, the main checkout, holds .git): config, hooks/,
	// info/, liza/ and the like (see sessionDirs).
	Protected []string
	// Network says the agent's commands need the network (git liza in
	// remote mode pushes to the remote).
	Network bool
	// MCP is git liza's MCP server, when the session's CLI starts it.
	MCP *MCPServer
}

// Presets are the agent CLIs known by name.
var Presets = map[string]*Preset{
	"claude": {
		Name: "claude", Program: "claude", Format: transcript.FormatClaude, Package: "@anthropic-ai/claude-code", MinVersion: "2.1.328",
		Needs: []string{"bwrap", "socat"},
		// Claude Code's Linux sandbox leaves these empty files where its
		// Bash tool runs (the mount points of the files it protects); in a
		// worktree they would make every submit refuse a dirty worktree.
		Stubs: []string{".bash_profile", ".bashrc", ".claude", ".gitconfig", ".gitmodules", ".idea", ".mcp.json",
			".profile", ".ripgreprc", ".vscode", ".zprofile", ".zshrc"},
		args: claudeArgs,
	},
	"codex": {
		Name: "codex", Program: "codex", Format: transcript.FormatCodex, Package: "@openai/codex", MinVersion: "0.169.0",
		args: codexArgs, check: codexHome,
	},
	"gemini": {
		Name: "gemini", Program: "gemini", Format: transcript.FormatGemini, Package: "@google/gemini-cli", MinVersion: "0.61.0",
		args: geminiArgs, check: geminiContainer, mcpRefusal: geminiMCPRefusal, settings: geminiSettings,
	},
}

// claudeStream makes Claude Code print one JSON event per line: its
// init, each message with its tool calls and results, and the result with
// the session's usage and cost (--verbose is required with -p).
var claudeStream = []string{"--output-format", "stream-json", "--verbose"}

// claudeArgs: `claude --output-format stream-json --verbose -p PROMPT`.
// Sandboxed, every permission check is
// skipped (--dangerously-skip-permissions), which Claude Code refuses to
// do as root unless IS_SANDBOX=1 says the machine is a sandbox. Otherwise
// its Bash sandbox (bubblewrap) is turned on and required, commands in it
// run without asking, nothing runs outside it, and the git directories are
// added to what it may write; file edits are accepted in the worktree
// (--permission-mode acceptEdits) and the git directories (--add-dir).
func claudeArgs(s Session) ([]string, []string, error) {
	mcp, err := claudeMCP(s)
	if err != nil {
		return nil, nil, err
	}
	if s.Sandboxed {
		args := append(slices.Clone(claudeStream), "--dangerously-skip-permissions")
		return append(append(args, mcp...), "-p"), []string{"IS_SANDBOX=1"}, nil
	}
	settings := map[string]any{"sandbox": map[string]any{
		"enabled":                  true,
		"failIfUnavailable":        true,
		"autoAllowBashIfSandboxed": true,
		"allowUnsandboxedCommands": false,
		"filesystem":               claudeFilesystem(s),
		"network":                  map[string]any{"allowLocalBinding": true},
	}}
	b, err := json.Marshal(settings)
	if err != nil {
		return nil, nil, err
	}
	args := append(slices.Clone(claudeStream), "--permission-mode", "acceptEdits", "--settings", string(b))
	args = append(args, mcp...)
	if len(mcp) > 0 {
		// Its permission checks are on: the server's tools run without
		// asking (a rule naming the server covers each of its tools).
		args = append(args, "--allowedTools", "mcp__"+contracts.MCPServer)
	}
	for _, d := range s.Writable {
		args = append(args, "--add-dir", d)
	}
	return append(args, "-p"), nil, nil
}

// claudeFilesystem is the sandbox's filesystem setting: the writable
// directories, and denyWrite for the protected parts of the git
// directory, which Claude Code's sandbox keeps read-only even inside a
// directory it may write.
func claudeFilesystem(s Session) map[string]any {
	fs := map[string]any{"allowWrite": s.Writable}
	if len(s.Protected) > 0 {
		fs["denyWrite"] = s.Protected
	}
	return fs
}

// codexStream runs codex non-interactively, printing its events as JSON
// lines: the thread's id, each item (commands with their output and exit
// code, messages, file changes) as it starts and completes, each turn's
// usage.
var codexStream = []string{"exec", "--json"}

// codexArgs: `codex exec --json -c allow_login_shell=false PROMPT`, which
// never stops to ask and prints its events as JSON lines (--json). Sandboxed, with
// no sandbox and no approvals (--dangerously-bypass-approvals-and-sandbox).
// Otherwise in its workspace-write sandbox with the git directories as more
// writable roots (--add-dir): without them a linked worktree's
// .git/worktrees/ID is read-only in that sandbox and no commit can be made.
// The sandbox has no network unless remote mode needs it.
func codexArgs(s Session) ([]string, []string, error) {
	// Its shell tool runs commands in a login shell by default, whose
	// profile resets PATH: git liza (and the tools the supervisor's PATH
	// names) would not be found.
	args := append(slices.Clone(codexStream), "-c", "allow_login_shell=false")
	args = append(args, codexMCP(s)...)
	if s.Sandboxed {
		return append(args, "--dangerously-bypass-approvals-and-sandbox"), nil, nil
	}
	args = append(args, "--sandbox", "workspace-write")
	for _, d := range s.Writable {
		args = append(args, "--add-dir", d)
	}
	if s.Network {
		args = append(args, "-c", "sandbox_workspace_write.network_access=true")
	}
	return args, nil, nil
}

// geminiArgs: `gemini --output-format stream-json --approval-mode yolo
// --skip-trust -p PROMPT`, which prints its events as JSON lines and runs
// every tool call without asking, in a workspace it trusts for the
// session. Sandboxed, that is all. Otherwise gemini runs in its own
// sandbox, a docker or podman container (--sandbox), with the git
// directories mounted writable (SANDBOX_MOUNTS). Its other sandbox, the
// Linux tool sandbox of security.toolSandboxing, is not used: in 0.61.0 it
// is set only in settings files (a system one must be owned by root), and
// a session under it ended after its first shell command without giving
// the command's output to the model.
func geminiArgs(s Session) ([]string, []string, error) {
	args := []string{"--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust"}
	var env []string
	if s.MCP != nil {
		args = append(args, "--allowed-mcp-server-names", contracts.MCPServer)
		env = append(env, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="+s.MCP.Settings)
	}
	if s.Sandboxed {
		return append(args, "-p"), env, nil
	}
	mounts := make([]string, 0, len(s.Writable)+len(s.Protected))
	for _, d := range s.Writable {
		mounts = append(mounts, d+":"+d+":rw")
	}
	for _, d := range s.Protected {
		mounts = append(mounts, d+":"+d+":ro")
	}
	if len(mounts) > 0 {
		env = append(env, "SANDBOX_MOUNTS="+strings.Join(mounts, ","))
	}
	return append(args, "--sandbox", "-p"), env, nil
}

// geminiContainer refuses gemini's own sandbox without a container engine
// that answers.
func geminiContainer() error {
	if ContainerEngine() != "" {
		return nil
	}
	return fmt.Errorf("gemini's own sandbox runs in a docker or podman container, and neither answers here (docker info, podman info): install and start one, or pass --sandboxed on an isolated machine")
}

// ContainerEngine is the first of docker and podman that is installed and
// answers `info`, or "".
func ContainerEngine() string {
	for _, engine := range []string{"docker", "podman"} {
		path, err := exec.LookPath(engine)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = exec.CommandContext(ctx, path, "info").Run()
		cancel()
		if err == nil {
			return engine
		}
	}
	return ""
}

// codexHome refuses a CODEX_HOME under a temporary directory: codex will
// not make the helper its sandbox runs there (codex-linux-sandbox), and
// every command of the agent then fails.
func codexHome() error {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		home = filepath.Join(h, ".codex")
	}
	for _, tmp := range []string{os.TempDir(), "/tmp"} {
		if rel, err := filepath.Rel(tmp, home); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return fmt.Errorf("codex's sandbox does not start with its home %s under the temporary directory %s: set CODEX_HOME (or HOME) elsewhere, or pass --sandboxed on an isolated machine", home, tmp)
		}
	}
	return nil
}

// PresetNames lists the preset names in order.
func PresetNames() []string {
	return slices.Sorted(maps.Keys(Presets))
}

// Launch is how a supervisor starts its agent: a preset, or a command
// given after --.
type Launch struct {
	// Command is the program (an absolute path) and, for a command given
	// after --, its arguments.
	Command []string
	// Preset is set for a named CLI; its arguments are built per session.
	Preset *Preset
	// Sandboxed: the machine is an isolated sandbox (--sandboxed).
	Sandboxed bool
	// MCP is the program git-liza-mcp (an absolute path) a preset's
	// sessions start as git liza's MCP server, or "" when it is not
	// installed: the sessions then run without it, on the shell commands.
	MCP string
}

// Resolve picks the agent command: the words after `--` when given, else
// the named preset (default claude). It does not look for the program.
func Resolve(cli string, args []string, sandboxed bool) (Launch, error) {
	if len(args) > 0 {
		if cli != "" {
			return Launch{}, fmt.Errorf("give either --cli or a command after --, not both")
		}
		return Launch{Command: slices.Clone(args), Sandboxed: sandboxed}, nil
	}
	if cli == "" {
		cli = "claude"
	}
	p, ok := Presets[cli]
	if !ok {
		return Launch{}, fmt.Errorf("unknown agent CLI %q (presets: %s; or give a command after --)", cli, strings.Join(PresetNames(), ", "))
	}
	return Launch{Command: []string{p.Program}, Preset: p, Sandboxed: sandboxed}, nil
}

// Format is how the session's output is read: the preset's stream
// format, or plain text for a command given after --.
func (l Launch) Format() string {
	if l.Preset == nil || l.Preset.Format == "" {
		return transcript.FormatText
	}
	return l.Preset.Format
}

// Argv is the command line and the added environment of one session.
func (l Launch) Argv(s Session, prompt string) ([]string, []string, error) {
	if l.Preset == nil {
		return append(slices.Clone(l.Command), prompt), nil, nil
	}
	s.Sandboxed = l.Sandboxed
	args, env, err := l.Preset.args(s)
	if err != nil {
		return nil, nil, err
	}
	if s.MCP != nil && l.Preset.settings != nil {
		if err := writeSettings(s, l.Preset.settings); err != nil {
			return nil, nil, err
		}
	}
	argv := append([]string{l.Command[0]}, args...)
	return append(argv, prompt), env, nil
}

// Flags lists the flags a preset passes in a situation, with placeholders
// for the per-session values, as the README and doctor show them.
func (p *Preset) Flags(sandboxed bool) string {
	s := Session{Sandboxed: sandboxed, Dir: "WORKTREE",
		Writable:  []string{"GITDIR/objects", "GITDIR/refs", "GITDIR/logs", "WORKTREE_GITDIR"},
		Protected: []string{"GITDIR/config", "GITDIR/hooks", "GITDIR/info", "GITDIR/liza"}}
	if p.mcpRefusal == nil || p.mcpRefusal(Session{Sandboxed: sandboxed}) == nil {
		s.MCP = placeholderMCP
	}
	args, env, err := p.args(s)
	if err != nil {
		return err.Error()
	}
	for i, a := range args {
		if strings.ContainsAny(a, "{}\" ") {
			args[i] = "'" + a + "'"
		}
	}
	out := strings.Join(append(append(env, p.Program), args...), " ")
	return out + " PROMPT"
}

// CheckResult is what Check found of a preset's CLI.
type CheckResult struct {
	Version string
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)\b`) })

// Check decides before anything is claimed or registered whether the
// preset can run here: its program is installed at path and recent
// enough, the situation allows it (an agent CLI runs as root only on a
// machine declared a sandbox), and the programs its own sandbox needs are
// there. A refusal is a *contracts.Error with exit code 5 whose message
// names the fix.
func (p *Preset) Check(ctx context.Context, path string, sandboxed bool, euid int) (CheckResult, error) {
	var res CheckResult
	v, err := ProgramVersion(ctx, path)
	if err != nil {
		return res, contracts.Errorf(contracts.CodeMissingDep, "%s --version failed (%v): reinstall it with npm install -g %s@%s", path, err, p.Package, p.MinVersion)
	}
	res.Version = v
	if VersionLess(v, p.MinVersion) {
		return res, contracts.Errorf(contracts.CodeMissingDep, "%s %s is older than %s, the oldest release the %s preset works with: npm install -g %s@latest", p.Program, v, p.MinVersion, p.Name, p.Package)
	}
	if euid == 0 && !sandboxed {
		return res, contracts.Errorf(contracts.CodeMissingDep, "the %s preset would run as root outside a sandbox: pass --sandboxed if this machine is an isolated sandbox (a container, a VM), else run the team as an unprivileged user", p.Name)
	}
	if !sandboxed && p.check != nil {
		if err := p.check(); err != nil {
			return res, contracts.Errorf(contracts.CodeMissingDep, "%v", err)
		}
	}
	if !sandboxed {
		for _, need := range p.needsOn(runtime.GOOS) {
			if _, err := exec.LookPath(need); err != nil {
				return res, contracts.Errorf(contracts.CodeMissingDep, "%s's own sandbox needs %s, which is not installed: install it (Debian: apt-get install %s), or pass --sandboxed on an isolated machine", p.Name, need, debianPackage(need))
			}
		}
	}
	return res, nil
}

func debianPackage(program string) string {
	if program == "bwrap" {
		return "bubblewrap"
	}
	return program
}

// ProgramVersion runs `path --version` and returns the first version
// number it prints.
func ProgramVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", err
	}
	m := versionRE().FindString(string(out))
	if m == "" {
		return "", fmt.Errorf("no version number in %q", strings.TrimSpace(string(out)))
	}
	return m, nil
}

// VersionLess compares two x.y.z version numbers.
func VersionLess(a, b string) bool {
	pa, pb := versionRE().FindStringSubmatch(a), versionRE().FindStringSubmatch(b)
	if pa == nil || pb == nil {
		return false
	}
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}

// needsOn is what Needs asks for on system goos (runtime.GOOS): Claude
// Code's sandbox runs in bubblewrap, with socat, on Linux only; on macOS
// it is Seatbelt, which comes with the system.
func (p *Preset) needsOn(goos string) []string {
	if goos != "linux" {
		return nil
	}
	return p.Needs
}
