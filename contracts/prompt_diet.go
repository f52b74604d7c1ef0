package contracts

import (
	"slices"
	"strings"
)

// coderLeavesOut are the sections of MULTI_AGENT_MODE a coder's prompt
// leaves out (seed 002's context diet: "Actor: execution only, no
// additional context"), as a coder does not act on them: the other roles'
// boundaries and who merges (its own are the role section's "You may
// not"), the table of task states (its own moves are the role section's
// steps, and git-liza refuses the forbidden ones), and the circuit
// breaker's mechanics (what a coder does about a trip is in Kill switches).
// Every other section, and the whole of CORE and of the coder's role
// section, stays in its prompt.
var coderLeavesOut = []string{"Roles and their boundaries", "Task states", "Circuit breaker"}

// multiAgentFor is the multi-agent contract as role's prompt carries it:
// the whole text, or for a coder the text without the sections in
// coderLeavesOut and a closing line that names them and where to read
// them (with the tools, the MCP resource too).
func multiAgentFor(role Role, tools bool) string {
	text := strings.TrimSpace(mustText(TextMultiAgent))
	if role != RoleCoder {
		return text
	}
	var kept []string
	skip := false
	for _, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			skip = slices.Contains(coderLeavesOut, strings.TrimSpace(h))
		}
		if !skip {
			kept = append(kept, line)
		}
	}
	where := "git liza prompt --text " + TextMultiAgent
	if tools {
		where += " or the MCP resource liza://contract/" + TextMultiAgent
	}
	names := strings.Join(coderLeavesOut[:len(coderLeavesOut)-1], ", ") + " and " + coderLeavesOut[len(coderLeavesOut)-1]
	return strings.TrimSpace(strings.Join(kept, "\n")) + "\n\nLeft out of this prompt, as a coder does not act on them: the sections " +
		names + " of " + TextMultiAgent + "; read them with " + where + "."
}
