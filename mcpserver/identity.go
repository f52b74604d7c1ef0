package mcpserver

import (
	"strconv"

	"github.com/liza-dev/git-liza/contracts"
)

// Identity is who the server acts for. It comes from the environment the
// agent's supervisor sets for the session (LIZA_AGENT_ID,
// LIZA_AGENT_GENERATION, LIZA_TASK, LIZA_WORKTREE, LIZA_PROJECT_ROOT,
// LIZA_PROMPT_FILE), which the presets repeat in the server's own
// configuration; never from a tool's arguments: no tool takes an agent id.
type Identity struct {
	// Agent is the agent id; empty for the human operator (--human).
	Agent string
	// Role is the agent's role, from the prefix of its id.
	Role contracts.Role
	// Generation is the supervisor registration the session runs under
	// (0: none, as for an agent run by hand).
	Generation int
	// Task is the coder's task or the task under review; empty for a
	// planner, and for a coder or reviewer run without a supervisor (its
	// tools then name the task).
	Task string
	// Worktree is where the session works; Root the main checkout.
	Worktree, Root string
	// PromptFile is the prompt the supervisor gave the session.
	PromptFile string
}

// Human reports whether the server acts for the human operator.
func (id Identity) Human() bool { return id.Agent == "" }

// FromEnv reads the identity of the session from getenv. With human, the
// server acts for the operator and the environment may name no agent (an
// agent's session that starts `git liza mcp --human` is refused: the
// operator's levers are not an agent's). Without it, LIZA_AGENT_ID must name
// an agent and LIZA_ROLE, when set, must be its role.
func FromEnv(getenv func(string) string, human bool) (Identity, error) {
	id := Identity{
		Agent: getenv("LIZA_AGENT_ID"), Task: getenv("LIZA_TASK"),
		Worktree: getenv("LIZA_WORKTREE"), Root: getenv("LIZA_PROJECT_ROOT"), PromptFile: getenv("LIZA_PROMPT_FILE"),
	}
	if human {
		if id.Agent != "" {
			return Identity{}, contracts.Invalidf("git liza mcp --human acts for the human operator, but LIZA_AGENT_ID is %s: an agent's session gets its own tools from git liza mcp", id.Agent)
		}
		return Identity{Root: id.Root}, nil
	}
	if id.Agent == "" {
		return Identity{}, contracts.Invalidf("git liza mcp acts as the agent whose supervisor started the session, and LIZA_AGENT_ID is not set: for the operator's levers run git liza mcp --human")
	}
	role, err := contracts.ParseAgentID(id.Agent)
	if err != nil {
		return Identity{}, err
	}
	id.Role = role
	if r := getenv("LIZA_ROLE"); r != "" && r != role.IDPrefix() {
		return Identity{}, contracts.Invalidf("LIZA_ROLE is %s but agent %s is a %s", r, id.Agent, role.IDPrefix())
	}
	if g := getenv("LIZA_AGENT_GENERATION"); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 0 {
			return Identity{}, contracts.Invalidf("LIZA_AGENT_GENERATION is %q, not a generation number", g)
		}
		id.Generation = n
	}
	if id.Task != "" {
		if err := contracts.ValidTaskID(id.Task); err != nil {
			return Identity{}, err
		}
		if role == contracts.RolePlanner {
			return Identity{}, contracts.Invalidf("LIZA_TASK is %s, but a planner's session has no task", id.Task)
		}
	}
	return id, nil
}
