package contracts

import "strings"

// MaxIDLen is the longest id allowed for tasks, agents and other entities.
const MaxIDLen = 64

// kebab reports whether id is 1 to MaxIDLen characters of [a-z0-9-], not
// starting with a dash. It is written out rather than a regular expression
// so that no expression is compiled before main runs (TestIDChecksMatch
// holds it to the expression it replaced).
func kebab(id string) bool {
	if id == "" || len(id) > MaxIDLen || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
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

// agentIDShape reports whether id looks like an agent id: its role's prefix and a
// number from 1, as the seeds number agents (coder-1, code-reviewer-2). A
// suffix of any other shape would let one id pass for another's in ref
// names, file names and allowed-signers patterns. It is
// ^(planner|coder|code-reviewer)-[1-9][0-9]{0,8}$, written out.
func agentIDShape(id string) bool {
	for _, r := range agentPrefixes {
		if n, ok := strings.CutPrefix(id, r.Prefix); ok {
			if n == "" || len(n) > 9 || n[0] == '0' {
				return false
			}
			for i := 0; i < len(n); i++ {
				if n[i] < '0' || n[i] > '9' {
					return false
				}
			}
			return true
		}
	}
	return false
}

// ParseAgentID returns the role an agent id names by its prefix: planner-N,
// coder-N or code-reviewer-N, N a number from 1. The empty id is the human
// operator.
func ParseAgentID(id string) (Role, error) {
	if id == "" {
		return RoleHuman, nil
	}
	if !agentIDShape(id) {
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
