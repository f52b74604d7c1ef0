package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

// maxPrompt is the most a role's whole prompt may weigh.
const maxPrompt = 30 * 1024

// cmdLine is one `git liza ...` command line found in a text: the verb, the
// subverb when the verb has subcommands, and the flags it uses.
type cmdLine struct {
	where string
	words []string
	flags []string
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	verbWord = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// commandLines finds the git liza command lines of a text: in inline code
// spans, in fenced code blocks, and (for the generated context, which has
// no markup) anywhere on a line.
func commandLines(where, text string) []cmdLine {
	var spans []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			spans = append(spans, line)
			continue
		}
		if strings.Contains(line, "`") {
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				spans = append(spans, m[1])
			}
			continue
		}
		spans = append(spans, line)
	}
	var out []cmdLine
	for _, span := range spans {
		for _, part := range strings.Split(span, "git liza ")[1:] {
			if c, ok := parseCmdLine(where, part); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// parseCmdLine reads the words after "git liza ": the verb, then words
// until the first flag, then flags until a word that ends the clause.
func parseCmdLine(where, s string) (cmdLine, bool) {
	toks := tokens(s)
	if len(toks) == 0 {
		return cmdLine{}, false
	}
	c := cmdLine{where: where}
	for i, t := range toks {
		end := strings.ContainsAny(t[len(t)-1:], ",;.)") && !strings.HasSuffix(t, "...")
		t = strings.Trim(t, "[],;.()")
		switch {
		case strings.HasPrefix(t, "--"):
			name, _, _ := strings.Cut(strings.TrimPrefix(t, "--"), "=")
			c.flags = append(c.flags, name)
		case len(c.flags) == 0 && i < 2 && verbWord.MatchString(t):
			c.words = append(c.words, t)
		}
		if end {
			break
		}
	}
	return c, len(c.words) > 0
}

// tokens splits s at spaces, keeping a double-quoted string as one token.
func tokens(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func findCmd(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return name == "help"
}

// checkCommands fails the test for every command line that names a verb,
// a subverb or a flag the app does not have.
func checkCommands(t *testing.T, app *cli.Command, lines []cmdLine) {
	t.Helper()
	for _, l := range lines {
		cmd := findCmd(app.Commands, l.words[0])
		if cmd == nil {
			t.Errorf("%s: git liza %s: no such command", l.where, l.words[0])
			continue
		}
		label := l.words[0]
		if len(cmd.Commands) > 0 {
			var sub *cli.Command
			if len(l.words) >= 2 {
				sub = findCmd(cmd.Commands, l.words[1])
			}
			switch {
			case sub != nil:
				cmd, label = sub, label+" "+l.words[1]
			case len(cmd.Flags) > 0:
				// The command works alone too (discover, discover convert).
			case len(l.words) < 2:
				t.Errorf("%s: git liza %s: needs one of its subcommands", l.where, label)
				continue
			default:
				t.Errorf("%s: git liza %s %s: no such subcommand", l.where, label, l.words[1])
				continue
			}
		}
		for _, f := range l.flags {
			if !hasFlag(cmd.Flags, f) && !hasFlag(app.Flags, f) {
				t.Errorf("%s: git liza %s: no flag --%s", l.where, label, f)
			}
		}
	}
}

func TestCommandLines(t *testing.T) {
	got := commandLines("x", "run `git liza task block ID --reason \"a, b\" [--question Q]`, then\n"+
		"```\ngit liza verdict ID reject --reason \"...\"\n```\n"+
		"3. Stuck: git liza submit t1, and exit 0 --not-a-flag. Also git liza show ID\n"+
		"`git liza` alone is no command line")
	want := []cmdLine{
		{"x", []string{"task", "block"}, []string{"reason", "question"}},
		{"x", []string{"verdict"}, []string{"reason"}},
		{"x", []string{"submit"}, nil},
		{"x", []string{"show"}, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("commandLines = %+v, want %+v", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i].words, want[i].words) || !slices.Equal(got[i].flags, want[i].flags) {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestTextCommandsExist checks that every git liza command line in the
// embedded contract texts names a real command, subcommand and flags.
func TestTextCommandsExist(t *testing.T) {
	app := (&Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: os.Getenv}).app()
	var all []cmdLine
	for _, name := range contracts.TextNames() {
		text, _ := contracts.Text(name)
		all = append(all, commandLines(name, text)...)
	}
	if len(all) < 30 {
		t.Fatalf("found only %d command lines in the texts; the scan is broken", len(all))
	}
	checkCommands(t, app, all)

	// Each role's text teaches that role's own commands.
	want := map[string][]string{
		contracts.TextCoder:        {"checkpoint", "submit", "handoff", "task block", "anomaly", "discover", "show", "heartbeat"},
		contracts.TextCodeReviewer: {"verdict", "show", "anomaly"},
		contracts.TextPlanner:      {"task add", "task finalize", "task supersede", "task abandon", "task unblock", "task block", "show", "note"},
	}
	for name, verbs := range want {
		text, _ := contracts.Text(name)
		seen := map[string]bool{}
		for _, l := range commandLines(name, text) {
			seen[strings.Join(l.words, " ")] = true
			if len(l.words) > 0 {
				seen[l.words[0]] = true
			}
		}
		for _, v := range verbs {
			if !seen[v] {
				t.Errorf("%s does not show git liza %s", name, v)
			}
		}
	}
}

// lizaRepo makes a repository with a blackboard and returns an Env that
// runs git liza there.
func lizaRepo(t *testing.T) (string, func(args ...string) (string, int)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "Ada Operator", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Ada Operator", "GIT_COMMITTER_EMAIL": "ada@example.com",
		"LIZA_AGENT_ID": "",
	} {
		t.Setenv(k, v)
	}
	root := filepath.Join(dir, "proj")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "specs", "vision.md"), []byte("# Vision\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(root, "init", "-q", "-b", "main")
	git(root, "add", ".")
	git(root, "commit", "-q", "-m", "specs")
	run := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Dir: root, Getenv: os.Getenv,
			Clock: func() time.Time { return time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC) }}
		code := e.Run(context.Background(), append([]string{"git-liza"}, args...))
		return out.String() + errOut.String(), code
	}
	must := func(args ...string) string {
		t.Helper()
		out, code := run(args...)
		if code != 0 {
			t.Fatalf("git liza %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	must("init", "--spec", "specs/vision.md", "Add retries to the HTTP client")
	must("task", "add", "--id", "task-1", "--desc", "Retry 503 responses", "--spec", "specs/vision.md",
		"--done", "go test ./client passes", "--scope", "IN: client/ OUT: server/", "--paths", "client/**")
	must("--agent", "coder-1", "claim", "task-1")
	wt := filepath.Join(root, ".worktrees", "task-1")
	git(wt, "commit", "-q", "--allow-empty", "-m", "work")
	must("--agent", "coder-1", "checkpoint", "task-1", "--intent", "retry 503s", "--validation", "go test ./client", "--files", "client/retry.go")
	must("--agent", "coder-1", "submit", "task-1")
	must("--agent", "code-reviewer-1", "review", "task-1")
	must("task", "add", "--id", "task-2", "--desc", "Document retries", "--spec", "specs/vision.md",
		"--done", "README explains retries", "--scope", "docs")
	must("task", "block", "task-2", "--reason", "which policy?", "--question", "exponential?")
	must("note", "--for", "task-1", "keep the retry count configurable")
	return root, run
}

// TestPromptCommand builds each role's prompt from a real blackboard and
// checks what the agent is told: the context sections, the commands it
// names, and the size.
func TestPromptCommand(t *testing.T) {
	root, run := lizaRepo(t)
	app := (&Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: os.Getenv}).app()
	wt := filepath.Join(root, ".worktrees", "task-1")
	cases := []struct {
		args []string
		role string
		want []string
	}{
		{[]string{"planner"}, "planner", []string{
			"=== PLANNING CONTEXT ===\nWAKE TRIGGER: BLOCKED_TASKS\n",
			"GOAL: goal-1\nGOAL TEXT:\n  Add retries to the HTTP client\nGOAL SPEC: specs/vision.md\nSPRINT: sprint-1 (IN_PROGRESS)\n",
			"  - blocked:task-2: which policy? | questions: exponential?\n",
			"human_notes 1", "keep the retry count configurable",
		}},
		{[]string{"coder", "--task", "task-1"}, "coder", []string{
			"=== ASSIGNED TASK ===\nTASK ID: task-1\nWORKTREE: " + wt + "\n",
			"AGENT ID: coder-1\n", "PROJECT ROOT: " + root + "\n",
			"PATHS: client/**\n", "git liza submit task-1",
			"(for task-1, by human):\n  keep the retry count configurable\n",
		}},
		{[]string{"code-reviewer", "--task", "task-1"}, "code_reviewer", []string{
			"=== REVIEW TASK ===\nTASK ID: task-1\nWORKTREE: " + filepath.Join(root, ".worktrees", ".review", "code-reviewer-1", "task-1") + "\n",
			"AGENT ID: code-reviewer-1\n", "AUTHOR: coder-1\n", "DIFF: git diff ",
		}},
	}
	for _, tc := range cases {
		out, code := run(append([]string{"--json", "prompt"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("prompt %s: exit %d\n%s", tc.args, code, out)
		}
		var got struct {
			Role   string `json:"role"`
			Bytes  int    `json:"bytes"`
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("prompt %s --json: %v\n%s", tc.args, err, out)
		}
		if got.Role != tc.role || got.Bytes != len(got.Prompt) {
			t.Errorf("prompt %s: role %q, bytes %d for a prompt of %d", tc.args, got.Role, got.Bytes, len(got.Prompt))
		}
		t.Logf("%s prompt: %d bytes", tc.role, got.Bytes)
		if got.Bytes >= maxPrompt {
			t.Errorf("%s prompt is %d bytes, want under %d", tc.role, got.Bytes, maxPrompt)
		}
		for _, w := range tc.want {
			if !strings.Contains(got.Prompt, w) {
				t.Errorf("%s prompt lacks %q", tc.role, w)
			}
		}
		// The plain output is the same prompt, and the commands it names,
		// texts and context alike, are real.
		plain, _ := run(append([]string{"prompt"}, tc.args...)...)
		if plain != got.Prompt {
			t.Errorf("prompt %s: plain output differs from --json's prompt", tc.args)
		}
		checkCommands(t, app, commandLines(tc.role+" prompt", got.Prompt))
	}

	// --tools: the prompt of a session that has git liza's MCP tools; the
	// coder's names the resource of the contract it leaves out.
	out, code := run("prompt", "coder", "--task", "task-1", "--tools")
	for _, w := range []string{"TOOLS: checkpoint, submit, block, handoff, anomaly, discover, status, show_task, log_task, validate (MCP server liza",
		"Before editing: the checkpoint tool (or git liza checkpoint task-1", "or the MCP resource liza://contract/MULTI_AGENT_MODE."} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("prompt coder --tools: exit %d, lacks %q", code, w)
		}
	}
	plain, _ := run("prompt", "coder", "--task", "task-1")
	if strings.Contains(plain, "TOOLS:") || !strings.Contains(plain, "read them with git liza prompt --text MULTI_AGENT_MODE.") {
		t.Errorf("prompt coder without --tools:\n%s", plain)
	}

	// --trigger picks the planner's trigger; bad requests change nothing
	// and exit 1.
	out, code = run("prompt", "planner", "--trigger", "human_notes")
	if code != 0 || !strings.Contains(out, "WAKE TRIGGER: HUMAN_NOTES\n") {
		t.Errorf("prompt planner --trigger human_notes: exit %d\n%s", code, out)
	}
	for _, bad := range []struct {
		args []string
		msg  string
	}{
		{[]string{"prompt", "coder"}, "git-liza: a coder prompt needs --task ID\n"},
		{[]string{"prompt", "code-reviewer", "--task", "task-2"}, "git-liza: task task-2 has no commit to review\n"},
		{[]string{"prompt", "coder", "--task", "task-9"}, "git-liza: no task task-9\n"},
		{[]string{"prompt", "planner", "--task", "task-1"}, "git-liza: --task is for coder and code-reviewer prompts\n"},
		{[]string{"prompt", "planner", "--trigger", "soon"}, `git-liza: unknown trigger "soon"`},
		{[]string{"prompt", "judge"}, `git-liza: unknown role "judge" (roles: planner, coder, code-reviewer)` + "\n"},
		{[]string{"--agent", "coder-2", "prompt", "planner"}, "git-liza: agent coder-2 is not a planner\n"},
		{[]string{"prompt"}, "git-liza: usage: git liza prompt ROLE"},
		{[]string{"prompt", "--list", "--tools"}, "git-liza: usage: git liza prompt ROLE"},
	} {
		out, code := run(bad.args...)
		if code != 1 || !strings.HasPrefix(out, bad.msg) {
			t.Errorf("%s: exit %d, output %q; want exit 1 and %q", bad.args, code, out, bad.msg)
		}
	}
}

func TestPromptTexts(t *testing.T) {
	var out bytes.Buffer
	e := &Env{Stdout: &out, Stderr: &out, Dir: t.TempDir(), Getenv: func(string) string { return "" }}
	if code := e.Run(context.Background(), []string{"git-liza", "prompt", "--list"}); code != 0 {
		t.Fatalf("prompt --list: exit %d\n%s", code, out.String())
	}
	if got, want := out.String(), strings.Join(contracts.TextNames(), "\n")+"\n"; got != want {
		t.Errorf("prompt --list = %q, want %q", got, want)
	}
	out.Reset()
	if code := e.Run(context.Background(), []string{"git-liza", "prompt", "--text", "roles/CODER"}); code != 0 {
		t.Fatalf("prompt --text: exit %d\n%s", code, out.String())
	}
	if want, _ := contracts.Text("roles/CODER"); out.String() != want {
		t.Errorf("prompt --text roles/CODER printed %.60q, want the coder text", out.String())
	}
	out.Reset()
	if code := e.Run(context.Background(), []string{"git-liza", "--json", "prompt", "--text", "CORE.md"}); code != 0 {
		t.Fatalf("prompt --json --text: exit %d\n%s", code, out.String())
	}
	var doc struct {
		Name  string `json:"name"`
		Bytes int    `json:"bytes"`
		Text  string `json:"text"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Name != "CORE" || doc.Bytes != len(doc.Text) || !strings.HasPrefix(doc.Text, "# ") {
		t.Errorf("prompt --json --text CORE.md = %s (%v)", out.String(), err)
	}
	out.Reset()
	if code := e.Run(context.Background(), []string{"git-liza", "prompt", "--text", "NOPE"}); code != 1 || !strings.HasPrefix(out.String(), `git-liza: no contract text "NOPE"`) {
		t.Errorf("prompt --text NOPE: exit %d\n%s", code, out.String())
	}
}
