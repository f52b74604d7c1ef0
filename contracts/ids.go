package contracts

import (
	"regexp"
	"strings"
)

// MaxIDLen is the longest id allowed for tasks, agents and other entities.
const MaxIDLen = 64

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

func kebab(id string) bool {
	return len(id) <= MaxIDLen && idPattern.MatchString(id)
}

// ValidID checks that id is kebab-case ([a-z0-9-], not starting with a dash)
// and at most MaxIDLen characters, so it is safe as a file name, a branch
// name and a ref component.
func ValidID(id string) error {
	return validID("id", id)
}

// ValidTaskID is ValidID with an error message that names a task id.
func ValidTaskID(id string) error {
	return validID("task id", id)
}

func validID(kind, id string) error {
	if kebab(id) {
		return nil
	}
	return Invalidf("invalid %s %q: ids are kebab-case ([a-z0-9-], at most %d characters)", kind, id, MaxIDLen)
}

// Role is an agent role. Its values are the seed's agent role enum.
type Role string

// The roles. RoleHuman is the operator who runs a command with no agent id.
const (
	RoleHuman    Role = "human"
	RolePlanner  Role = "planner"
	RoleCoder    Role = "coder"
	RoleReviewer Role = "code_reviewer"
)

// agentPrefixes maps agent id prefixes to the roles they name.
var agentPrefixes = []struct {
	Role   Role
	Prefix string
}{
	{RolePlanner, "planner-"},
	{RoleCoder, "coder-"},
	{RoleReviewer, "code-reviewer-"},
}

// agentIDPattern is what an agent id looks like: its role's prefix and a
// number from 1, as the seeds number agents (coder-1, code-reviewer-2). A
// suffix of any other shape would let one id pass for another's in ref
// names, file names and allowed-signers patterns.
var agentIDPattern = regexp.MustCompile(`^(planner|coder|code-reviewer)-[1-9][0-9]{0,8}$`)

// ParseAgentID returns the role an agent id names by its prefix: planner-N,
// coder-N or code-reviewer-N, N a number from 1. The empty id is the human
// operator.
func ParseAgentID(id string) (Role, error) {
	if id == "" {
		return RoleHuman, nil
	}
	if !agentIDPattern.MatchString(id) {
		return "", Invalidf("invalid agent id %q: agent ids are planner-N, coder-N or code-reviewer-N, N a number from 1", id)
	}
	for _, r := range agentPrefixes {
		if strings.HasPrefix(id, r.Prefix) {
			return r.Role, nil
		}
	}
	return "", Invalidf("invalid agent id %q", id)
}

// IDPrefix is how the role's agent ids begin and how a person writes the
// role on the command line: planner, coder or code-reviewer.
func (r Role) IDPrefix() string {
	for _, p := range agentPrefixes {
		if p.Role == r {
			return strings.TrimSuffix(p.Prefix, "-")
		}
	}
	return string(r)
}

// ActorName names who acted, as commit trailers and history entries do:
// the agent id, or "human" for the operator.
func ActorName(agent string) string {
	if agent == "" {
		return string(RoleHuman)
	}
	return agent
}
