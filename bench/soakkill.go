package main

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// soakKills is what a soak with -soak-kill did to the team and what the
// team made of it: the processes it killed (kill -9), by kind; what the
// team's log says of them (supervisors started again or given up on,
// agent sessions that crashed); and the board and the repository once the
// team stopped (every task merged is the soak's own condition).
type soakKills struct {
	Every     string         `json:"every"`
	Killed    map[string]int `json:"killed"`
	Restarted int            `json:"supervisors_restarted"`
	GivenUp   int            `json:"supervisors_given_up"`
	Crashed   int            `json:"sessions_crashed"`
	Blocked   int            `json:"tasks_blocked"`
	Valid     bool           `json:"board_valid"`
	FsckClean bool           `json:"fsck_clean"`
	Worktrees int            `json:"worktrees_left"`
	Left      []string       `json:"left_running,omitempty"`
}

// soakAgent is the team runs' agent made to be started again on its task
// after a kill: its commit is made only when there is one to make.
var soakAgent = strings.Replace(teamAgent, "\tgit commit -q -m \"$LIZA_TASK\"\n", "\tgit diff --cached --quiet || git commit -q -m \"$LIZA_TASK\"\n", 1)

// killer kills a random process of the team about every every.
type killer struct {
	every time.Duration
	next  time.Time
	k     *soakKills
	// supervisors are the times each agent's supervisor was killed: one
	// killed twice within agent.CrashWindow is spared, as run gives up on
	// a supervisor at its third death in that window (which the soak
	// would then wait on for ever).
	supervisors map[string][]time.Time
}

// look kills one of run's descendants (never run itself: nothing would
// start it again) when the time has come.
func (kl *killer) look(run int) {
	if kl == nil || time.Now().Before(kl.next) {
		return
	}
	kl.next = time.Now().Add(kl.every/2 + rand.N(kl.every))
	// A kind first, then one of its processes: picked among processes
	// alone, the long-lived ones (supervisors, keepers) would take most of
	// the kills, and a git that runs for milliseconds almost none.
	byKind := map[string][]int{}
	agents := map[int]string{}
	for _, pid := range descendants(run) {
		kind, agent := killKind(pid)
		if kind == "supervisor" {
			if kl.spared(agent) {
				continue
			}
			agents[pid] = agent
		}
		byKind[kind] = append(byKind[kind], pid)
	}
	if len(byKind) == 0 {
		return
	}
	kinds := slices.Sorted(maps.Keys(byKind))
	kind := kinds[rand.N(len(kinds))]
	pids := byKind[kind]
	pid := pids[rand.N(len(pids))]
	if killPID(pid) {
		kl.k.Killed[kind]++
		if id := agents[pid]; id != "" {
			kl.supervisors[id] = append(kl.supervisors[id], time.Now())
		}
	}
}

// spared says whether agent id's supervisor was killed twice within
// agent.CrashWindow.
func (kl *killer) spared(id string) bool {
	n := 0
	for _, at := range kl.supervisors[id] {
		if time.Since(at) < crashWindow {
			n++
		}
	}
	return n >= 2
}

// crashWindow is agent.CrashWindow (the bench does not link git-liza).
const crashWindow = 5 * time.Minute

// descendants are the pids under pid, nearest first.
func descendants(pid int) []int {
	var out []int
	for next := []int{pid}; len(next) > 0; {
		var below []int
		for _, p := range next {
			below = append(below, childrenOf(p)...)
		}
		out = append(out, below...)
		next = below
	}
	return out
}

// killKind names what pid runs: a supervisor (and the agent it
// supervises), an agent's session, the keeper of the sessions' groups, a
// git-liza command, git, or other.
func killKind(pid int) (kind, agent string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "other", ""
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	name := filepath.Base(args[0])
	if strings.HasPrefix(name, "git-liza") && len(args) > 1 && args[1] == "agent" {
		if i := slices.Index(args, "--agent"); i >= 0 && i+1 < len(args) {
			agent = args[i+1]
		}
		return "supervisor", agent
	}
	return commandKind(name, args), ""
}

// commandKind names what a process other than a supervisor runs.
func commandKind(name string, args []string) string {
	switch {
	case strings.HasPrefix(name, "git-liza"):
		return "git-liza command"
	case name == "git" && len(args) > 1 && args[1] == "liza":
		return "git-liza command"
	case strings.HasPrefix(name, "git"):
		return "git"
	case (name == "sh" || name == "bash") && slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, "agent.sh") }):
		return "session"
	case (name == "sh" || name == "bash") && len(args) > 2 && strings.Contains(args[2], "kept="):
		return "session keeper"
	}
	return "other"
}

// after reads the log of a soak with kills, and looks at the board and
// the repository once the team has stopped.
func (k *soakKills) after(b *bench, repo, log string) {
	k.Restarted = strings.Count(log, "; starting it again in ")
	k.GivenUp = strings.Count(log, ": not starting it again")
	k.Crashed = strings.Count(log, " agent crashed (")
	if out, err := command(repo, b.env, "git", "liza", "status", "--json").Output(); err == nil {
		k.Blocked = strings.Count(string(out), `"status":"BLOCKED"`)
	}
	k.Valid = command(repo, b.env, "git", "liza", "validate").Run() == nil
	out, err := command(repo, b.env, "git", "fsck", "--no-dangling", "--no-progress").CombinedOutput()
	k.FsckClean = err == nil && len(strings.TrimSpace(string(out))) == 0
	if out, err := command(repo, b.env, "git", "worktree", "list", "--porcelain").Output(); err == nil {
		k.Worktrees = strings.Count(string(out), "worktree ") - 1
	}
	// Nothing of the team outlives it: no supervisor still names this
	// repository.
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, repo) {
			pid := strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/cwd")
			var n int
			fmt.Sscan(pid, &n)
			if n != os.Getpid() {
				kind, _ := killKind(n)
				k.Left = append(k.Left, pid+" "+kind)
			}
		}
	}
}

func printKills(k *soakKills) {
	if k == nil {
		return
	}
	var kinds []string
	total := 0
	for _, kind := range slices.Sorted(maps.Keys(k.Killed)) {
		kinds = append(kinds, fmt.Sprintf("%d %s", k.Killed[kind], kind))
		total += k.Killed[kind]
	}
	fmt.Printf("  killed (kill -9, about every %s): %d processes: %s\n", k.Every, total, strings.Join(kinds, ", "))
	fmt.Printf("  supervisors started again: %d, given up on: %d; agent sessions that crashed: %d; tasks BLOCKED: %d\n", k.Restarted, k.GivenUp, k.Crashed, k.Blocked)
	fmt.Printf("  after: board valid %v, git fsck clean %v, worktrees left %d, processes left %d %v\n", k.Valid, k.FsckClean, k.Worktrees, len(k.Left), k.Left)
}
