package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
)

// TestAgentCLIsMCP runs the planner-less team of TestAgentCLIs (one coder,
// one code reviewer, one task) with each real agent CLI whose scripted
// model works the board through the MCP tools of git liza mcp alone: the
// coder calls checkpoint, commits through the shell tool with plain git,
// tries to submit another task and to pass an agent id (both refused, as
// tool errors it reads), and calls submit; the reviewer checks the commit
// through the shell, tries to reject another task (refused) and calls
// verdict. The
// task must reach MERGED with no git liza in any shell command the model
// sent, and refs/liza/state must hold the same operations, in the same
// order, as the same team driven through the git liza commands. The
// coder's checkpoint floods the task (1,500 assumptions): show_task comes
// back to both sessions cut, through each CLI, with what was cut said in
// it, and the reviewer's prompt comes with its context cut.
func TestAgentCLIsMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs are not run with -short")
	}
	e2eOnly(t)
	for _, p := range []string{"git-liza", "git-liza-mcp"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not on PATH (TestMain puts it there)", p)
		}
	}
	var (
		once sync.Once
		want []string
	)
	cliOps := func(t *testing.T) []string {
		once.Do(func() { want = shellTeamOps(t) })
		if want == nil {
			t.Fatal("the team driven by git liza commands did not reach MERGED")
		}
		return want
	}
	for _, c := range agentCLIs {
		for _, sandboxed := range []bool{true, false} {
			mode := "root-sandboxed"
			if !sandboxed {
				mode = "unprivileged"
			}
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				path, ok := findCLI(c.name, c.program)
				if !ok {
					t.Skipf("%s is not installed: .ci/run installs it (npm install --prefix %s %s@%s)", c.program, filepath.Join(agent.CLICache(), c.name), c.pkg, c.version)
				}
				if c.name == "gemini" && !sandboxed && agent.ContainerEngine() == "" {
					t.Skip("gemini's own sandbox is a docker or podman container, and no container engine answers here")
				}
				runMCPTeam(t, c.name, path, sandboxed, cliOps)
			})
		}
	}
}

// The coder's attempts that must be refused: another task, and an agent
// id (no tool takes one).
var (
	attackTask  = map[string]any{"task": "other"}
	attackAgent = map[string]any{"agent": "coder-2"}
)

// floodAssumptions are the coder's checkpoint's assumptions: 1,500 of
// them, 90 KB, more than any tool result carries, so that the task comes
// back to both sessions cut (the result over 40,000 characters, with a
// note), and the reviewer's prompt with its context cut.
var floodAssumptions = func() []string {
	var as []string
	for i := range 1500 {
		as = append(as, fmt.Sprintf("assumption %04d: the greeting is one line of plain ASCII text", i))
	}
	return as
}()

// mcpStep is one turn of a scripted session: a call of an MCP tool of the
// liza server with its arguments, or a shell command.
type mcpStep struct {
	tool  string
	args  map[string]any
	shell string
}

// mcpSession is what the scripted model saw of one Liza session at its
// end: the tool calls the conversation held and their results, in order.
type mcpSession struct {
	calls   []toolRef
	results []toolResult
	// missing names a step's tool the session did not offer.
	missing string
	// promptCut: the session's prompt said its context was cut to fit.
	promptCut bool
}

// mcpScript is the scripted model's script for a team that works through
// the MCP tools; sessions keeps what each role's session saw at its end.
func mcpScript(mu *sync.Mutex, sessions map[string]*mcpSession) func(turn) reply {
	return func(tn turn) reply {
		var role string
		var steps []mcpStep
		if m := coderRE.FindStringSubmatch(tn.text); m != nil {
			role = "coder"
			steps = []mcpStep{
				{tool: "checkpoint", args: map[string]any{"intent": "write hello.txt", "validation": "grep hello hello.txt prints hello", "files_to_modify": []string{"hello.txt"},
					"assumptions": floodAssumptions}},
				{tool: "show_task", args: map[string]any{"task": m[1]}},
				{shell: fmt.Sprintf(`cd %s && echo hello > hello.txt && git add hello.txt && git commit -q -m "hello from the scripted model" && git log -1 --format="committed as %%an <%%ae>"`, m[2])},
				{tool: "submit", args: attackTask},
				{tool: "submit", args: attackAgent},
				{tool: "submit", args: map[string]any{}},
			}
		} else if m := reviewerRE.FindStringSubmatch(tn.text); m != nil {
			role = "reviewer"
			steps = []mcpStep{
				{shell: fmt.Sprintf(`cd %s && git rev-parse HEAD | grep -qx %s && grep -q hello hello.txt && echo REVIEWED`, m[2], m[3])},
				{tool: "show_task", args: map[string]any{"task": m[1]}},
				{tool: "verdict", args: map[string]any{"verdict": "reject", "task": "other", "reason": "reject another coder's work"}},
				{tool: "verdict", args: map[string]any{"verdict": "approve", "commit": m[3]}},
			}
		}
		if role == "" || tn.shellTool == "" {
			// Not a Liza session, or a CLI's side request about one
			// (gemini routes the prompt to a model first).
			return reply{text: "ok"}
		}
		done, searched := 0, false
		for _, c := range tn.calls {
			if c.name == "ToolSearch" {
				searched = true
				continue
			}
			done++
		}
		end := func(missing string) reply {
			mu.Lock()
			sessions[role] = &mcpSession{calls: tn.calls, results: tn.results, missing: missing,
				promptCut: strings.Contains(tn.text, "was cut to fit this prompt")}
			mu.Unlock()
			if missing != "" {
				return reply{text: "The tool " + missing + " is not offered: stopping."}
			}
			return reply{text: "The work is done and recorded on the board."}
		}
		if done >= len(steps) {
			return end("")
		}
		st := steps[done]
		if st.shell != "" {
			if tn.shellTool == "" {
				return end("the shell tool")
			}
			return reply{tool: tn.shellTool, command: st.shell}
		}
		ref, ok := tn.tool(st.tool)
		if !ok {
			// Claude Code names MCP tools without offering them: a
			// model loads them with ToolSearch first, as the request
			// says.
			if !searched && slices.Contains(tn.deferred, "mcp__liza__"+st.tool) {
				return reply{tool: "ToolSearch", args: map[string]any{"query": "select:" + strings.Join(tn.deferred, ","), "max_results": len(tn.deferred)}}
			}
			return end(st.tool)
		}
		return reply{tool: ref.name, namespace: ref.namespace, args: st.args}
	}
}

// runMCPTeam runs the team with the CLI at cliPath, its model scripted by
// mcpScript, and checks what the test's comment says. want gives the
// operations of the same team driven by git liza commands.
func runMCPTeam(t *testing.T, name, cliPath string, sandboxed bool, want func(*testing.T) []string) {
	model := newScriptedModel(t)
	var mu sync.Mutex
	sessions := map[string]*mcpSession{}
	model.script = mcpScript(&mu, sessions)
	tm := newMCPTeam(t, name, cliPath, sandboxed, true, model)
	root, env, who, run, team := tm.root, tm.env, tm.who, tm.run, tm.cmd
	start := time.Now()
	rt := startTeam(t, team)
	fail := func(format string, a ...any) {
		t.Helper()
		rt.stop()
		model.logToFile()
		t.Fatalf("%s\nteam output:\n%s\nmodel:\n%s\nboard:\n%s", fmt.Sprintf(format, a...), rt.out.String(), model.report(), show(root, env, who))
	}
	if !waitMerged(root, env, who, rt, 120*time.Second) {
		fail("the task was not merged: %s", lastReason(show(root, env, who)))
	}
	took := time.Since(start)
	rt.stop()

	// The work is the coder's, committed with plain git through the
	// shell tool.
	if got := run("git", "show", "integration:hello.txt"); got != "hello\n" {
		fail("integration:hello.txt = %q", got)
	}
	if got := run("git", "log", "-1", "--format=%an <%ae>", "integration"); got != "coder-1 <coder-1@liza.invalid>\n" {
		fail("the merged commit's author is %q", got)
	}
	// The board was worked through the tools: no shell command the
	// model sent runs git liza, and each of the tools was called.
	model.mu.Lock()
	sent := slices.Clone(model.sent)
	model.mu.Unlock()
	var called []string
	for _, r := range sent {
		if gitLizaRE.MatchString(r.command) {
			fail("the model ran git liza through the shell: %q", r.command)
		}
		if r.args != nil && r.tool != "ToolSearch" {
			called = append(called, toolRef{namespace: r.namespace, name: r.tool}.full())
		}
	}
	for _, tool := range []string{"checkpoint", "submit", "verdict"} {
		if !slices.ContainsFunc(called, func(c string) bool { return c == tool || strings.HasSuffix(c, "_"+tool) }) {
			fail("the model never called the %s tool (called: %v)", tool, called)
		}
	}
	// Each refused attempt came back to the model as a tool error that
	// says its exit-code class, and the calls after it went on.
	mu.Lock()
	coder, reviewer := sessions["coder"], sessions["reviewer"]
	mu.Unlock()
	if coder == nil || reviewer == nil {
		fail("a session did not reach the end of its script: coder %v, reviewer %v", coder != nil, reviewer != nil)
	}
	for _, s := range []*mcpSession{coder, reviewer} {
		if s.missing != "" {
			fail("a session was not offered the tool %s", s.missing)
		}
	}
	// The flooded task came back to each session cut, as the CLI gave it
	// to the model: within what it keeps, with the note.
	for role, s := range map[string]*mcpSession{"coder": coder, "reviewer": reviewer} {
		shown := 0
		for i, c := range s.calls {
			if i < len(s.results) && strings.HasSuffix(c.full(), "show_task") {
				shown++
				if r := s.results[i]; len(r.text) > 50_000 || !strings.Contains(r.text, "This result was cut to fit") || r.isError {
					fail("the %s's show_task came back as %d characters (error %v): %.300q", role, len(r.text), r.isError, r.text)
				}
			}
		}
		if shown != 1 {
			fail("the %s's session holds %d results of show_task, want 1", role, shown)
		}
	}
	// The reviewer's prompt carries the checkpoint, cut to fit; the
	// coder's, made before it, had nothing to cut.
	if !reviewer.promptCut || coder.promptCut {
		fail("prompts cut: the reviewer's %v, the coder's %v; want the reviewer's only", reviewer.promptCut, coder.promptCut)
	}
	checkRefusals(name, "coder", coder, "submit", []string{"not other", "agent"}, fail)
	checkRefusals(name, "reviewer", reviewer, "verdict", []string{"not other"}, fail)
	// The history verifies by replay, and it is the history of the same
	// team driven by git liza commands.
	if got := run("git", "liza", "validate", "--history"); !strings.HasPrefix(got, "VALID (") {
		fail("validate --history after the run: %s", got)
	}
	got := stateOps(t, run("git", "log", "--reverse", "--format=%B%x00", "refs/liza/state"))
	if w := want(t); !slices.Equal(got, w) {
		fail("the operations on refs/liza/state differ from the team driven by git liza commands:\n got: %s\nwant: %s", strings.Join(got, " "), strings.Join(w, " "))
	}
	t.Logf("%s %s: UNCLAIMED to MERGED through the MCP tools in %s", name, map[bool]string{true: "--sandboxed", false: "with its own sandbox"}[sandboxed], took.Round(time.Second))
}

// checkRefusals checks a session's attempts to act beyond itself: the
// results of its calls of tool are, in order, one refusal of the input
// per entry of wants (each naming it), then the call that was done.
func checkRefusals(cli, role string, s *mcpSession, tool string, wants []string, fail func(string, ...any)) {
	var results []toolResult
	for i, c := range s.calls {
		if i < len(s.results) && (c.full() == tool || strings.HasSuffix(c.full(), "_"+tool)) {
			results = append(results, s.results[i])
		}
	}
	if len(results) != len(wants)+1 {
		fail("the %s's session holds %d results of %s, want %d (%d refused, one done): %+v", role, len(results), tool, len(wants)+1, len(wants), s)
	}
	for i, want := range wants {
		r := results[i]
		refused := strings.Contains(r.text, `exit 1 (refused`) && strings.Contains(r.text, want)
		if cli == "gemini" && want == "agent" {
			// gemini checks the arguments against the tool's schema
			// itself (additionalProperties false): the call never
			// reaches the server.
			refused = refused || strings.Contains(r.text, "must NOT have additional properties")
		}
		if !refused {
			fail("the %s's attempt %d came back as %q, want a refusal with exit 1 naming %q", role, i+1, r.text, want)
		}
		// The Messages API marks a tool error (is_error) and gemini
		// answers it as an error; the Responses API has no such mark:
		// codex gives the model the refusal's text alone.
		if !r.isError && cli != "codex" {
			fail("the %s's attempt %d came back to the model as a result that is not an error: %q", role, i+1, r.text)
		}
	}
	if last := results[len(wants)]; strings.Contains(last.text, "exit ") || last.isError {
		fail("the %s's %s was refused: %q", role, tool, last.text)
	}
}

// mcpTeam is the hello team, ready to run (cmd) with the CLI name.
type mcpTeam struct {
	root string
	env  []string
	who  teamUser
	run  func(args ...string) string
	cmd  *exec.Cmd
}

// newMCPTeam sets up the hello team with the CLI at cliPath, its model
// model, as root with --sandboxed or as an unprivileged user without.
// withMCP, git-liza-mcp is installed beside git-liza and the preset
// gives each session the liza server; without, it is not installed, and
// the sessions run on the shell commands.
func newMCPTeam(t *testing.T, name, cliPath string, sandboxed, withMCP bool, model *scriptedModel) *mcpTeam {
	t.Helper()
	who := teamUser{uid: os.Geteuid(), gid: os.Getegid()}
	if sandboxed {
		if os.Geteuid() != 0 {
			t.Skip("the --sandboxed run is the root one: not running as root")
		}
	} else {
		who = unprivileged(t)
	}
	var base, root, bin string
	if name == "gemini" {
		base, root, bin = rootOnlyBase(t)
	} else {
		base, root, bin = teamBase(t, "liza-mcp-team-")
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	if withMCP {
		self, _ := exec.LookPath("git-liza-mcp")
		if err := copyFile(self, filepath.Join(bin, "git-liza-mcp"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cliBin := filepath.Dir(cliPath)
	if who.uid != os.Geteuid() {
		cliBin = shareCLI(t, cliPath, filepath.Join(base, "cli"))
	}
	path := bin + ":" + cliBin + ":/usr/local/bin:/usr/bin:/bin"
	if withMCP && !presetRegistersMCP(name, sandboxed) {
		t.Fatalf("the %s preset does not give its sessions git liza's MCP server: %s", name, agent.Presets[name].Flags(sandboxed))
	}
	env := cliEnv(t, home, path, model)
	setupHelloRepo(t, root)
	if who.uid != os.Geteuid() {
		if err := chownAll(base, who.uid, who.gid); err != nil {
			t.Fatal(err)
		}
	}
	run := runAs(t, who, root, env)
	initHelloBoard(run)
	args := []string{"git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "1", "--poll", "200ms", "--cli", name}
	if sandboxed {
		args = append(args, "--sandboxed")
	}
	team := asUser(who, args...)
	team.Dir, team.Env = root, env
	return &mcpTeam{root: root, env: env, who: who, run: run, cmd: team}
}

// lastReason is the last reason the task's history gives (a session's
// end, a block), for the first line of a failure.
func lastReason(board string) string {
	last := "no reason on the board"
	for _, line := range strings.Split(board, "\n") {
		if _, r, ok := strings.Cut(line, "reason: "); ok {
			last = r
		}
	}
	return last
}

// rootOnlyBase is teamBase in a directory that no one but root may
// write, nor any directory above it (the user's cache directory, as
// root): gemini reads a session's settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH,
// under .git/liza/) only there, and under /var/tmp the preset runs its
// sessions without the server, saying so.
func rootOnlyBase(t *testing.T) (base, root, bin string) {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache directory for the team: %v", err)
	}
	parent := filepath.Join(cache, "git-liza", "mcp-test")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if base, err = os.MkdirTemp(parent, "team-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root, bin = filepath.Join(base, "proj"), filepath.Join(base, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := exec.LookPath("git-liza")
	if err := copyFile(self, filepath.Join(bin, "git-liza"), 0o755); err != nil {
		t.Fatal(err)
	}
	return base, root, bin
}

// presetRegistersMCP says whether the preset passes the CLI the
// configuration of git liza mcp.
func presetRegistersMCP(name string, sandboxed bool) bool {
	flags := agent.Presets[name].Flags(sandboxed)
	return strings.Contains(flags, "mcp")
}

// setupHelloRepo writes the project of the hello team.
func setupHelloRepo(t *testing.T, root string) {
	t.Helper()
	writeFile(t, filepath.Join(root, "specs", "vision.md"), "# Vision\n\nhello.txt says hello.\n")
	writeFile(t, filepath.Join(root, "scripts", "integration-test.sh"), "#!/bin/sh\ngrep -q hello hello.txt\n")
	if err := os.Chmod(filepath.Join(root, "scripts", "integration-test.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// initHelloBoard makes the repository and its board of one task.
func initHelloBoard(run func(args ...string) string) {
	run("git", "init", "-q", "-b", "main")
	run("git", "add", ".")
	run("git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", "commit", "-q", "-m", "vision")
	run("git", "liza", "init", "--spec", "specs/vision.md", "Say hello")
	run("git", "liza", "hooks", "install")
	run("git", "liza", "task", "add", "--id", "hello", "--desc", "Write hello.txt", "--spec", "specs/vision.md",
		"--done", "hello.txt says hello", "--scope", "IN: hello.txt")
}

// waitMerged waits for the task to be merged, and says whether it was.
func waitMerged(root string, env []string, who teamUser, rt *runningTeam, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		st := show(root, env, who)
		if strings.Contains(st, "status: MERGED") {
			return true
		}
		if strings.Contains(st, "status: BLOCKED") {
			return false
		}
		select {
		case err := <-rt.exited:
			rt.exited <- err
			return false
		case <-time.After(300 * time.Millisecond):
		}
	}
	return false
}

// TestAgentCLIsMCPPromptSize measures what a coder's session sends its
// model before its first turn, without the liza server and with it: the
// bytes of the prompt (system prompt, instructions and messages: every
// string of the request outside its tools) and of the tools array, per
// CLI, as the scripted model receives them. Tokens are estimated as
// bytes/4. It checks that the liza tools are offered (or, in Claude Code,
// named for ToolSearch) with the server and not without.
func TestAgentCLIsMCPPromptSize(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs are not run with -short")
	}
	e2eOnly(t)
	if os.Geteuid() != 0 {
		t.Skip("measured in the --sandboxed runs, as root")
	}
	for _, c := range agentCLIs {
		t.Run(c.name, func(t *testing.T) {
			path, ok := findCLI(c.name, c.program)
			if !ok {
				t.Skipf("%s is not installed", c.program)
			}
			var sizes [2]turn
			for i, withMCP := range []bool{false, true} {
				sizes[i] = firstCoderTurn(t, c.name, path, withMCP)
				_, offered := sizes[i].tool("checkpoint")
				named := slices.Contains(sizes[i].deferred, "mcp__liza__checkpoint")
				if (offered || named) != withMCP {
					t.Errorf("%s, with the server %v: checkpoint offered %v, named for ToolSearch %v", c.name, withMCP, offered, named)
				}
			}
			kb := func(n int) string { return fmt.Sprintf("%d B (~%d tokens)", n, n/4) }
			t.Logf("%s coder's first request: prompt %s -> %s; tools %s -> %s (%d -> %d tools); total ~%d -> ~%d tokens",
				c.name, kb(sizes[0].promptBytes), kb(sizes[1].promptBytes), kb(sizes[0].toolsBytes), kb(sizes[1].toolsBytes),
				len(sizes[0].offered), len(sizes[1].offered),
				(sizes[0].promptBytes+sizes[0].toolsBytes)/4, (sizes[1].promptBytes+sizes[1].toolsBytes)/4)
		})
	}
}

// firstCoderTurn runs the hello team until its coder's session sends its
// first request, and returns what the scripted model made of it.
func firstCoderTurn(t *testing.T, name, cliPath string, withMCP bool) turn {
	t.Helper()
	model := newScriptedModel(t)
	got := make(chan turn, 1)
	model.script = func(tn turn) reply {
		if coderRE.MatchString(tn.text) && tn.shellTool != "" && len(tn.calls) == 0 {
			select {
			case got <- tn:
			default:
			}
		}
		return reply{text: "ok"}
	}
	tm := newMCPTeam(t, name, cliPath, true, withMCP, model)
	rt := startTeam(t, tm.cmd)
	defer rt.stop()
	select {
	case tn := <-got:
		return tn
	case err := <-rt.exited:
		rt.exited <- err
		t.Fatalf("the team stopped before its coder's first request: %v\n%s", err, rt.out.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("no request from the coder's session in 90 s\n%s", rt.out.String())
	}
	return turn{}
}
