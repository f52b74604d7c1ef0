package contracts

import (
	"slices"
	"strings"
	"time"
)

// TaskSummary is what the board index keeps of a task: what choosing and
// checking claims and reviews reads, what the board shows of a task it
// does not list and what its alarms look at, so that those read one small
// record per task instead of every task file.
type TaskSummary struct {
	ID                 string
	Status             Status
	Priority           int
	Created            string
	AssignedTo         string
	ReviewingBy        string
	LeaseExpires       string
	ReviewLeaseExpires string
	DependsOn          StringList
	Paths              StringList
	Iteration          int
	ReviewCycles       int  // review_cycles_current
	FailedBy           int  // how many coders failed it
	Reassigned         bool // a second coder took it over
}

// Summary is t's entry in the board index.
func (t *Task) Summary() *TaskSummary {
	return &TaskSummary{
		ID: t.ID, Status: t.Status, Priority: t.Priority, Created: t.Created,
		AssignedTo: t.AssignedTo, ReviewingBy: t.ReviewingBy,
		LeaseExpires: t.LeaseExpires, ReviewLeaseExpires: t.ReviewLeaseExpires,
		DependsOn: t.DependsOn, Paths: t.Paths,
		Iteration: t.Iteration, ReviewCycles: t.ReviewCyclesCurrent, FailedBy: len(t.FailedBy),
		Reassigned: wasReassigned(t),
	}
}

// Claimable reports whether a coder may claim t (seed 004): its status is
// UNCLAIMED, REJECTED or INTEGRATION_FAILED and every task it depends on is
// MERGED. statusOf reports the status of another task; an unknown dependency
// makes t unclaimable.
func Claimable(t *TaskSummary, statusOf func(id string) (Status, bool)) bool {
	if t == nil {
		return false
	}
	switch t.Status {
	case Unclaimed, Rejected, IntegrationFailed:
	default:
		return false
	}
	for _, dep := range t.DependsOn {
		if statusOf == nil {
			return false
		}
		if s, ok := statusOf(dep); !ok || s != Merged {
			return false
		}
	}
	return true
}

// StatusOf reports the status of the task id, live or archived, in the
// shape Claimable and Best take.
func (st *State) StatusOf(id string) (Status, bool) {
	if t := st.Task(id); t != nil {
		return t.Status, true
	}
	return "", false
}

// Task returns the live or archived task id, or nil.
func (st *State) Task(id string) *Task {
	for _, list := range [][]*Task{st.Tasks, st.Archive} {
		for _, t := range list {
			if t != nil && t.ID == id {
				return t
			}
		}
	}
	return nil
}

// Less orders tasks best first: lowest priority number, then oldest created
// (tasks with a valid timestamp before those without), then natural id order
// (task-2 before task-10).
func Less(a, b *TaskSummary) bool { return orderOf(a).compare(orderOf(b)) < 0 }

// claimOrder is a task with its created time read, as Less orders it.
type claimOrder struct {
	t       *TaskSummary
	created time.Time
	dated   bool // created is a valid timestamp
}

func orderOf(t *TaskSummary) claimOrder {
	at, err := ParseTime(t.Created)
	return claimOrder{t: t, created: at, dated: err == nil}
}

func (a claimOrder) compare(b claimOrder) int {
	switch {
	case a.t.Priority != b.t.Priority:
		return compareInt(a.t.Priority, b.t.Priority)
	case a.dated && b.dated && !a.created.Equal(b.created):
		return a.created.Compare(b.created)
	case a.dated != b.dated:
		if a.dated {
			return -1
		}
		return 1
	}
	return compareNatural(a.t.ID, b.t.ID)
}

// ownSentBack reports whether t is agent's own work sent back to it
// (REJECTED or INTEGRATION_FAILED and assigned to agent), which a claim
// takes before any other task.
func ownSentBack(t *TaskSummary, agent string) bool {
	return agent != "" && t.AssignedTo == agent && (t.Status == Rejected || t.Status == IntegrationFailed)
}

// Best returns the best task for agent to claim, or nil: among claimable
// tasks that skip (when not nil) does not exclude, a REJECTED or
// INTEGRATION_FAILED task already assigned to agent comes first, then the
// order of Less.
func Best(tasks []*TaskSummary, statusOf func(string) (Status, bool), agent string, skip func(*TaskSummary) bool) *TaskSummary {
	own := func(t *TaskSummary) bool { return ownSentBack(t, agent) }
	var best *TaskSummary
	for _, t := range tasks {
		if !Claimable(t, statusOf) || (skip != nil && skip(t)) {
			continue
		}
		if best == nil || own(t) && !own(best) || own(t) == own(best) && Less(t, best) {
			best = t
		}
	}
	return best
}

// SortBest sorts claimable tasks in the order Best picks them for agent,
// best first (as asking Best of each pair would), reading each task's
// created time once rather than at every comparison.
func SortBest(tasks []*TaskSummary, agent string) {
	type key struct {
		own   bool
		order claimOrder
	}
	keys := make([]key, len(tasks))
	for i, t := range tasks {
		keys[i] = key{own: ownSentBack(t, agent), order: orderOf(t)}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if a.own != b.own {
			if a.own {
				return -1
			}
			return 1
		}
		return a.order.compare(b.order)
	})
	for i, k := range keys {
		tasks[i] = k.order.t
	}
}

// SortIDs sorts ids in natural order (task-2 before task-10).
func SortIDs(ids []string) { slices.SortFunc(ids, compareNatural) }

// NaturalLess orders ids so that task-2 comes before task-10.
func NaturalLess(a, b string) bool { return compareNatural(a, b) < 0 }

// CompareNatural is NaturalLess as a comparison: -1, 0 or +1.
func CompareNatural(a, b string) int { return compareNatural(a, b) }

// compareNatural compares strings treating runs of digits as numbers.
func compareNatural(a, b string) int {
	x, y := a, b
	for x != "" && y != "" {
		cx, cy := leadingRun(x), leadingRun(y)
		x, y = x[len(cx):], y[len(cy):]
		if cx == cy {
			continue
		}
		if isDigit(cx[0]) && isDigit(cy[0]) {
			nx, ny := strings.TrimLeft(cx, "0"), strings.TrimLeft(cy, "0")
			if len(nx) != len(ny) {
				return compareInt(len(nx), len(ny))
			}
			if c := strings.Compare(nx, ny); c != 0 {
				return c
			}
			continue
		}
		return strings.Compare(cx, cy)
	}
	if c := compareInt(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// leadingRun returns the leading run of digits or of non-digits of s.
func leadingRun(s string) string {
	digit := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == digit {
		i++
	}
	return s[:i]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
