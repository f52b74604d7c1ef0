package doctor

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// oneKeyFix is what to do about an allowed-signers file that lets one key
// sign for several agents.
const oneKeyFix = `give each agent a key of its own and a line of its own naming it alone (coder-1 namespaces="git" ssh-ed25519 AAAA...), and start it with git liza agent ROLE --key PATH`

// Signers checks the allowed-signers file a guarded remote takes state
// commits by (liza.allowedSigners, here or on a remote this machine can
// read): one principal per agent. A key that may sign for several agents
// lets any of them act as the others; one that signs for a coder and a
// reviewer, or for the operator and an agent, lets its holder approve its
// own code or act as the operator, and fails. With sandboxed, it says
// what a shared machine means for keys.
func Signers(repo *refstore.Repo, sandboxed bool) []Check {
	var out []Check
	if repo != nil {
		out = append(out, signersFile(repo)...)
	}
	if sandboxed {
		out = append(out, Check{
			Name: "signing keys", Level: Warn,
			Detail: "--sandboxed: the agents on this machine run as one user, and each can read whatever that user can, the other agents' signing keys included: " +
				"a key says which agent signed only where no other agent can read it",
			Fix: "run each agent in a sandbox of its own (a container or VM per agent) holding its key alone: git liza agent ROLE --key PATH",
		})
	}
	return out
}

// signersFile checks repo's allowed-signers file, or its remote's.
func signersFile(repo *refstore.Repo) []Check {
	c := Check{Name: "signers", Level: OK}
	file, where := allowedSigners(repo)
	if file == "" {
		if repo.RemoteOf() == "" {
			c.Detail = "liza.allowedSigners is not set: state commits need no signature (local mode)"
			return []Check{c}
		}
		c.Level = Warn
		c.Detail = "liza.allowedSigners is not set " + where + ": state commits need no signature, and any clone may write as any agent"
		c.Fix = "on the remote: git config liza.allowedSigners FILE, FILE holding one line per agent; " + oneKeyFix
		return []Check{c}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		c.Level, c.Code = Fail, contracts.CodeInvalid
		c.Detail = fmt.Sprintf("liza.allowedSigners %s: %v", file, err)
		c.Fix = "make it a readable allowed-signers file (ssh-keygen(1), ALLOWED SIGNERS)"
		return []Check{c}
	}
	var out []Check
	for _, p := range signerProblems(string(data)) {
		out = append(out, Check{Name: "signers", Level: p.level, Detail: fmt.Sprintf("%s: %s", file, p.text), Fix: oneKeyFix})
	}
	if len(out) == 0 {
		c.Detail = fmt.Sprintf("%s (liza.allowedSigners %s): one key per agent", file, where)
		out = append(out, c)
	}
	return out
}

// allowedSigners finds the allowed-signers file: liza.allowedSigners of
// this repository (relative to its git directory, as the server hook
// reads it), else of its remote when that is a directory here. where says
// which.
func allowedSigners(repo *refstore.Repo) (file, where string) {
	if f, ok := repo.Config("liza.allowedSigners"); ok && f != "" {
		if !filepath.IsAbs(f) {
			f = filepath.Join(repo.GitDir, f)
		}
		return f, "here"
	}
	name := repo.RemoteOf()
	if name == "" {
		return "", "here"
	}
	url, _ := repo.Config("remote." + name + ".url")
	dir := strings.TrimPrefix(url, "file://")
	if !filepath.IsAbs(dir) {
		return "", "here (remote " + name + "'s cannot be seen from here)"
	}
	rr, err := refstore.Open(dir)
	if err != nil {
		return "", "here"
	}
	where = "on remote " + name
	if f, ok := rr.Config("liza.allowedSigners"); ok && f != "" {
		if !filepath.IsAbs(f) {
			f = filepath.Join(rr.GitDir, f)
		}
		return f, where
	}
	return "", where
}

// signerProblem is one finding in an allowed-signers file.
type signerProblem struct {
	level, text string
}

// sampleIDs stand for the agents a pattern could match: two of each role,
// and the operator.
var sampleIDs = []string{"human", "planner-1", "planner-2", "coder-1", "coder-2", "code-reviewer-1", "code-reviewer-2"}

// signerProblems reads an allowed-signers file: each line is principals
// (comma separated, patterns allowed), options, a key type and the key.
// It reports a principal that is a pattern matching several agents, and a
// key that may sign for several principals (on one line or several),
// failing when those take in a coder and a reviewer, or the operator and
// an agent.
func signerProblems(data string) []signerProblem {
	type keyUse struct {
		lines []int
		names []string // principals as written
		ids   []string // sample ids they match
	}
	keys := map[string]*keyUse{}
	var order []string
	var out []signerProblem
	for n, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		key := ""
		for i := 1; i+1 < len(f); i++ {
			if strings.HasPrefix(f[i], "ssh-") || strings.HasPrefix(f[i], "ecdsa-") || strings.HasPrefix(f[i], "sk-") {
				key = f[i] + " " + f[i+1]
				break
			}
		}
		if key == "" {
			continue
		}
		if strings.Contains(line, "cert-authority") {
			out = append(out, signerProblem{Warn, fmt.Sprintf("line %d is a certificate authority: every certificate it signs may sign for %s", n+1, f[0])})
		}
		u := keys[key]
		if u == nil {
			u = &keyUse{}
			keys[key] = u
			order = append(order, key)
		}
		u.lines = append(u.lines, n+1)
		for _, p := range strings.Split(f[0], ",") {
			if strings.HasPrefix(p, "!") {
				continue // a negation narrows, it grants nothing
			}
			u.names = append(u.names, p)
			var matched []string
			for _, id := range sampleIDs {
				if ok, _ := path.Match(p, id); ok {
					matched = append(matched, id)
				}
			}
			if strings.ContainsAny(p, "*?") && len(matched) > 0 {
				out = append(out, signerProblem{Warn, fmt.Sprintf("line %d: the pattern %s lets one key sign as every agent it matches (%s, ...)", n+1, p, strings.Join(matched, ", "))})
			}
			for _, id := range matched {
				if !slices.Contains(u.ids, id) {
					u.ids = append(u.ids, id)
				}
			}
		}
	}
	for _, k := range order {
		u := keys[k]
		if len(u.ids) < 2 && len(u.names) < 2 {
			continue
		}
		roles := map[contracts.Role]bool{}
		for _, id := range u.ids {
			r := contracts.RoleHuman
			if id != "human" {
				r, _ = contracts.ParseAgentID(id)
			}
			roles[r] = true
		}
		lines := make([]string, len(u.lines))
		for i, l := range u.lines {
			lines[i] = fmt.Sprint(l)
		}
		where := "the key on line " + strings.Join(lines, ", ")
		switch {
		case roles[contracts.RoleCoder] && roles[contracts.RoleReviewer]:
			out = append(out, signerProblem{Fail, fmt.Sprintf("%s signs as a coder and as a reviewer (%s): its holder approves its own code", where, strings.Join(u.names, ", "))})
		case roles[contracts.RoleHuman] && len(roles) > 1:
			out = append(out, signerProblem{Fail, fmt.Sprintf("%s signs as the operator and as an agent (%s): the agent holding it acts as the operator", where, strings.Join(u.names, ", "))})
		case len(u.names) > 1:
			out = append(out, signerProblem{Warn, fmt.Sprintf("%s signs as several agents (%s): each can act as the others", where, strings.Join(u.names, ", "))})
		}
	}
	return out
}
