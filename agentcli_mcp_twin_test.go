package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The twin of TestAgentCLIsMCP's team, driven by the git liza commands,
// and how the operations on two boards are compared.

// shellAgent is an agent that works the board through the git liza
// commands, as a session's shell would: the twin of the scripted MCP
// sessions, step for step.
const shellAgent = `#!/bin/sh
set -e
cd "$LIZA_WORKTREE"
case "$LIZA_ROLE" in
coder)
	git liza checkpoint "$LIZA_TASK" --intent "write hello.txt" --validation "grep hello hello.txt prints hello" --files hello.txt ASSUMPTIONS
	echo hello > hello.txt
	git add hello.txt
	git commit -q -m "hello from the shell agent"
	git liza submit "$LIZA_TASK" ;;
*reviewer)
	git liza verdict "$LIZA_TASK" approve --commit "$LIZA_REVIEW_COMMIT" ;;
esac
`

// shellTeamOps runs the team with shellAgent as its agent command and
// returns the operations on its refs/liza/state (see stateOps), or nil
// when the task was not merged.
func shellTeamOps(t *testing.T) []string {
	base, root, bin := teamBase(t, "liza-mcp-twin-")
	// The checkpoint's assumptions are the MCP sessions' (floodAssumptions).
	var flags strings.Builder
	for _, a := range floodAssumptions {
		flags.WriteString(` --assumption "` + a + `"`)
	}
	writeFile(t, filepath.Join(base, "agent.sh"), strings.Replace(shellAgent, " ASSUMPTIONS", flags.String(), 1))
	env := []string{"HOME=" + filepath.Join(base, "home"), "PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "TZ=UTC", "LANG=C.UTF-8"}
	setupHelloRepo(t, root)
	who := teamUser{uid: os.Geteuid(), gid: os.Getegid()}
	run := runAs(t, who, root, env)
	initHelloBoard(run)
	team := exec.Command("git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "1", "--poll", "200ms", "--sandboxed", "--", "sh", filepath.Join(base, "agent.sh"))
	team.Dir, team.Env = root, env
	rt := startTeam(t, team)
	merged := waitMerged(root, env, who, rt, 60*time.Second)
	rt.stop()
	if !merged {
		t.Logf("the team driven by git liza commands:\n%s\nboard:\n%s", rt.out.String(), show(root, env, who))
		return nil
	}
	return stateOps(t, run("git", "log", "--reverse", "--format=%B%x00", "refs/liza/state"))
}

// stateOps are the operations of the state commits in log (messages
// separated by NUL, oldest first), each as ROLE: OP/KIND, in the order
// each actor made them: the human's, then the coder's, then the
// reviewer's. (The two supervisors run side by side: which registers
// first, or whether the coder's session ends before the review is
// claimed, is theirs to race, not an operation's difference.)
func stateOps(t *testing.T, log string) []string {
	t.Helper()
	byActor := map[string][]string{}
	for _, msg := range strings.Split(log, "\x00") {
		msg = strings.TrimSpace(msg)
		if msg == "" {
			continue
		}
		tr := trailersOf(msg)
		op := tr["Liza-Op"]
		if k := tr["Liza-Kind"]; k != "" {
			op += "/" + k
		}
		if g := tr["Liza-Generation"]; g != "" {
			op += " generation " + g
		}
		// What the operation was asked, but for the commits and the
		// supervisors' records (a host's pid, a session's log and usage).
		if in := tr["Liza-Input"]; in != "" && tr["Liza-Op"] != "register" {
			op += " " + sameInput(in)
		}
		who := tr["Liza-Agent"]
		if i := strings.LastIndex(who, "-"); i > 0 {
			who = who[:i] // the role, not the number
		}
		byActor[who] = append(byActor[who], who+": "+op)
	}
	var ops []string
	for _, who := range []string{"human", "coder", "code-reviewer"} {
		ops = append(ops, byActor[who]...)
		delete(byActor, who)
	}
	for who := range byActor {
		t.Errorf("a state commit by %s, who is not on the team", who)
	}
	return ops
}

// gitLizaRE is a shell command that runs git liza or one of its
// programs (git-liza, git-liza-mcp, ...), not a path that names them.
var gitLizaRE = regexp.MustCompile(`(^|[\s;&|(])git(-|\s+)liza(-[a-z]+)?($|[\s;&|)])`)

// shaRE is a commit id.
var shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// sameInput is an operation's input (JSON) as compared between two
// boards: commit ids are SHA, and empty values (null, [], {}, "") are
// left out, as they are from the state the operation writes.
func sameInput(in string) string {
	var v any
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		return in
	}
	var norm func(x any) any
	norm = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if e = norm(e); e != nil {
					out[k] = e
				}
			}
			if len(out) == 0 {
				return nil
			}
			return out
		case []any:
			if len(x) == 0 {
				return nil
			}
			for i, e := range x {
				x[i] = norm(e)
			}
			return x
		case string:
			if x == "" {
				return nil
			}
			if shaRE.MatchString(x) {
				return "SHA"
			}
		}
		return x
	}
	b, _ := json.Marshal(norm(v))
	return string(b)
}

// trailersOf reads the Key: value lines of a message's last paragraph.
func trailersOf(msg string) map[string]string {
	out := map[string]string{}
	paras := strings.Split(msg, "\n\n")
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.ContainsAny(k, " \t") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// TestGitLizaRE: what the end-to-end test counts as a shell call of git
// liza, and what it does not (a path that names the programs).
func TestGitLizaRE(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git liza submit hello":                             true,
		"cd wt && git liza checkpoint hello --intent x":     true,
		"x;git  liza status":                                true,
		"(git-liza status)":                                 true,
		"git-liza-mcp":                                      true,
		"cd /root/.cache/git-liza/mcp-test/x && git commit": false,
		"cd /var/tmp/git-liza-agentcli-1/proj && git add .": false,
		"git log -1":                                        false,
	} {
		if got := gitLizaRE.MatchString(cmd); got != want {
			t.Errorf("%q: matched %v, want %v", cmd, got, want)
		}
	}
}
