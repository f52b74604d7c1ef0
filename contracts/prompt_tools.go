package contracts

import (
	"fmt"
	"strings"
)

// MCPServer is the name under which the agent CLIs register git liza's
// MCP server for a session (package mcpserver serves it under the same
// name): Claude Code calls its tools mcp__liza__checkpoint and the like.
const MCPServer = "liza"

// The MCP tools of each role (package mcpserver registers them; CLI.md
// spells them). Everyone's come last.
var (
	everyoneTools = []string{"status", "show_task", "log_task", "validate"}
	roleTools     = map[Role][]string{
		RoleCoder:    {"checkpoint", "submit", "block", "handoff", "anomaly", "discover"},
		RoleReviewer: {"verdict"},
		RolePlanner:  {"task_add", "task_edit", "finalize", "supersede", "abandon", "unblock", "note_done", "discover_convert"},
	}
)

// RoleTools lists the MCP tools a session of role has, or nil for a role
// with no sessions.
func RoleTools(r Role) []string {
	own, ok := roleTools[r]
	if !ok {
		return nil
	}
	return append(append([]string(nil), own...), everyoneTools...)
}

// toolsLine writes the TOOLS field of a session that has the MCP tools.
func toolsLine(w *promptWriter, pc PromptContext) {
	if !pc.Tools {
		return
	}
	w.field("TOOLS", strings.Join(RoleTools(pc.Role), ", ")+
		fmt.Sprintf(" (MCP server %s: bound to your agent id and task; a refusal says why and what to fix)", MCPServer))
}

// tool is a step's command: the shell command alone, or with the tools
// the tool first and the command, which does the same, beside it.
func tool(pc PromptContext, name, command string) string {
	if !pc.Tools {
		return command
	}
	return "the " + name + " tool (or " + command + ")"
}

// plannerToolsStep tells a planner with the tools how the shell commands
// of its steps map to them.
const plannerToolsStep = "With the TOOLS: each git liza command below has the tool of the same name (git liza task add: task_add; git liza note --done: note_done); use the tool, the command does the same."
