package contracts

import (
	"slices"
	"strings"
	"testing"
)

// TestRoleTools: each role's tools are the ones the issue and CLI.md name,
// everyone's four last; a role without a session has none.
func TestRoleTools(t *testing.T) {
	everyone := []string{"status", "show_task", "log_task", "validate"}
	for role, want := range map[Role][]string{
		RoleCoder:    append([]string{"checkpoint", "submit", "block", "handoff", "anomaly", "discover"}, everyone...),
		RoleReviewer: append([]string{"verdict"}, everyone...),
		RolePlanner:  append([]string{"task_add", "task_edit", "finalize", "supersede", "abandon", "unblock", "note_done", "discover_convert"}, everyone...),
	} {
		if got := RoleTools(role); !slices.Equal(got, want) {
			t.Errorf("RoleTools(%s) = %q, want %q", role, got, want)
		}
	}
	if got := RoleTools(Role("human")); got != nil {
		t.Errorf("RoleTools(human) = %q", got)
	}
	if MCPServer != "liza" {
		t.Errorf("MCPServer = %q: Claude Code names the tools mcp__liza__*", MCPServer)
	}
}

// TestBuildPromptTools: a session that has the MCP tools is told which,
// and each step names its tool next to the shell command, which keeps
// working; a session without them is told of no tool at all.
func TestBuildPromptTools(t *testing.T) {
	tk := sampleTask()
	coder := PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk}
	plain, err := BuildPrompt(coder)
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, plain, []string{"Before editing: git liza checkpoint task-3 --intent", "then: git liza submit task-3"},
		[]string{"TOOLS:", "the checkpoint tool", "the submit tool", "MCP"})
	coder.Tools = true
	p, err := BuildPrompt(coder)
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, p, []string{
		"TOOLS: checkpoint, submit, block, handoff, anomaly, discover, status, show_task, log_task, validate (MCP server liza: bound to your agent id and task; a refusal says why and what to fix)\n",
		"read the task: the show_task tool (or git liza show task-3)",
		"Before editing: the checkpoint tool (or git liza checkpoint task-3 --intent",
		"then: the submit tool (or git liza submit task-3), and exit 0",
		"Stuck: the block tool (or git liza task block task-3 --reason",
		"Out of context: the handoff tool (or git liza handoff task-3 --summary",
	}, nil)

	tk.Status = ReadyForReview
	tk.ReviewCommit = "2222222222222222222222222222222222222222"
	rev := PromptContext{AgentID: "code-reviewer-1", Role: RoleReviewer, ProjectRoot: "/p", Task: tk, Tools: true}
	p, err = BuildPrompt(rev)
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, p, []string{
		"TOOLS: verdict, status, show_task, log_task, validate (MCP server liza",
		"Verdict: the verdict tool (or git liza verdict task-3 approve --commit " + tk.ReviewCommit,
	}, []string{"checkpoint,"})

	pl := Planning(planState())
	p, err = BuildPrompt(PromptContext{AgentID: "planner-1", Role: RolePlanner, Planning: &pl, Tools: true})
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, p, []string{
		"TOOLS: task_add, task_edit, finalize, supersede, abandon, unblock, note_done, discover_convert, status,",
		"each git liza command below has the tool of the same name",
	}, []string{"verdict,"})

	// The tools cost a few hundred bytes, no more.
	if d := len(p) - len(strings.Replace(p, "TOOLS:", "", 1)); d == 0 {
		t.Error("no TOOLS line")
	}
}

// TestPromptToolsSize reports the size of each role's prompt with and
// without the tools (bytes; tokens ≈ bytes/4), and bounds the growth.
func TestPromptToolsSize(t *testing.T) {
	tk := sampleTask()
	rv := sampleTask()
	rv.ReviewCommit = "2222222222222222222222222222222222222222"
	pl := Planning(planState())
	for _, pc := range []PromptContext{
		{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk},
		{AgentID: "code-reviewer-1", Role: RoleReviewer, ProjectRoot: "/p", Task: rv},
		{AgentID: "planner-1", Role: RolePlanner, ProjectRoot: "/p", Planning: &pl},
	} {
		without, err := BuildPrompt(pc)
		if err != nil {
			t.Fatal(err)
		}
		pc.Tools = true
		with, err := BuildPrompt(pc)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-8s without tools %5d bytes (~%d tokens), with %5d bytes (~%d tokens): %+d", pc.Role,
			len(without), len(without)/4, len(with), len(with)/4, len(with)-len(without))
		if len(with)-len(without) > 600 {
			t.Errorf("%s: the tools add %d bytes to the prompt", pc.Role, len(with)-len(without))
		}
	}
}
