package worktree

import (
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/proc"
)

// Every worktree git-liza makes is locked (git worktree add --lock) from
// the moment git registers it, with a reason that names what it is for and
// the process that owns it: "git-liza claim of ID by AGENT: pid N on HOST
// since TIME". A claim's lock goes when the claim commits; a throwaway
// worktree's stays until it is removed. So a registration whose owner is
// gone (proc.Owner.Gone) is a crash's leftover, and one whose owner runs
// is not to be touched.

// lockOwner is a parsed lock reason of git-liza's.
type lockOwner struct {
	what  string // "claim", "review", "merge test"
	task  string // "" in a lock written before tasks were named
	agent string
	kind  kind
	// stopped: the owner gave the worktree up (Abandon) and may run on.
	stopped bool
	proc.Owner
}

// stoppedBy starts the owner part of the lock of a worktree its owner gave
// up (Abandon): "git-liza claim of ID by AGENT: stopped, pid N on HOST".
const stoppedBy = "stopped, "

// ended says whether the owner is done with the worktree: it gave it up,
// or it is gone.
func (l lockOwner) ended() bool { return l.stopped || l.Gone() }

// end is how the owner ended, for a repair's line.
func (l lockOwner) end() string {
	if l.stopped {
		return "stopped"
	}
	return "died"
}

func claimLock(id, agent string) string {
	return fmt.Sprintf("git-liza claim of %s by %s: %s", id, agent, proc.Me())
}

func reviewLock(id, agent string) string {
	return fmt.Sprintf("git-liza review of %s by %s: %s", id, agent, proc.Me())
}

func mergeLock(id string) string {
	if id == "" { // a process's kept test worktree (Kept)
		return "git-liza merge test: " + proc.Me().String()
	}
	return fmt.Sprintf("git-liza merge test of %s: %s", id, proc.Me())
}

// parseLock reads a lock reason of git-liza's (ok is false for any other
// reason, such as a person's git worktree lock).
func parseLock(reason string) (lockOwner, bool) {
	rest, ok := strings.CutPrefix(reason, "git-liza ")
	if !ok {
		return lockOwner{}, false
	}
	head, tail, ok := strings.Cut(rest, ": ")
	if !ok {
		return lockOwner{}, false
	}
	tail, stopped := strings.CutPrefix(tail, stoppedBy)
	owner, ok := proc.ParseOwner(tail)
	if !ok || !strings.HasPrefix(tail, "pid ") {
		return lockOwner{}, false
	}
	l := lockOwner{Owner: owner, stopped: stopped}
	switch {
	case strings.HasPrefix(head, "claim"):
		l.what, l.kind = "claim", taskTree
	case strings.HasPrefix(head, "review"):
		l.what, l.kind = "review", reviewTree
	case strings.HasPrefix(head, "merge test"):
		l.what, l.kind = "merge test", mergeTree
	default:
		return lockOwner{}, false
	}
	head = strings.TrimPrefix(head, l.what)
	if t, ok := strings.CutPrefix(head, " of "); ok {
		head = t
		l.task, head, _ = strings.Cut(head, " ")
		head = " " + head
	}
	if a, ok := strings.CutPrefix(head, " by "); ok {
		l.agent = a
	}
	return l, true
}

// describe is "the claim of t1 by coder-1 (pid 12 on host)".
func (l lockOwner) describe() string {
	s := "the " + l.what
	if l.task != "" {
		s += " of " + l.task
	}
	if l.agent != "" {
		s += " by " + l.agent
	}
	return fmt.Sprintf("%s (pid %d on %s)", s, l.PID, l.Host)
}
