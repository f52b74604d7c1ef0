package ops

import (
	"cmp"
	"slices"

	"github.com/liza-dev/git-liza/contracts"
)

// The merge queue: the APPROVED tasks in the order they land, taken in
// batches of at most config.merge_batch. Each task of a batch is merged
// onto the one before it (git merge-tree, as a single merge), the
// integration test runs once on the last, and a pass lands them all in one
// state commit. A batch whose test fails is bisected (see bisection) until
// the tasks that break the test are isolated; what passes on the way
// lands.

// queueTask is what the order of the queue reads of an APPROVED task.
type queueTask struct {
	ID        string
	Priority  int
	Approved  string // when it was approved (the last "approved" event)
	DependsOn []string
}

// queueTaskOf is what the queue's order knows of the approved task t.
func queueTaskOf(t *contracts.Task) queueTask {
	return queueTask{ID: t.ID, Priority: t.Priority, Approved: approvedAt(t), DependsOn: t.DependsOn}
}

// approvedAt is when t was last approved, in the seed's time format ("" when
// its history does not say).
func approvedAt(t *contracts.Task) string {
	for i := len(t.History) - 1; i >= 0; i-- {
		if e := t.History[i]; e != nil && e.Event == "approved" {
			return e.Time
		}
	}
	return ""
}

// approvalOrder compares two approval times; one that does not parse
// comes last.
func approvalOrder(a, b string) int {
	ta, errA := contracts.ParseTime(a)
	tb, errB := contracts.ParseTime(b)
	switch {
	case errA != nil || errB != nil:
		return cmp.Compare(boolInt(errA != nil), boolInt(errB != nil))
	}
	return ta.Compare(tb)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// queueOrder puts the approved tasks in the order they merge: priority
// first (1 before 5), then approval time, then id; a task whose
// dependency is neither merged (merged reports it) nor earlier in the
// order waits, and so does everything that depends on it. It returns the
// first cap tasks of that order (cap < 1: all) and the approved tasks
// left waiting for a dependency.
func queueOrder(approved []queueTask, merged func(id string) bool, cap int) (order []queueTask, waiting []queueTask) {
	rest := slices.Clone(approved)
	slices.SortStableFunc(rest, func(a, b queueTask) int {
		if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
			return c
		}
		if c := approvalOrder(a.Approved, b.Approved); c != 0 {
			return c
		}
		return CompareIDs(a.ID, b.ID)
	})
	in := map[string]bool{}
	// Each round takes the first task of the order whose dependencies
	// are met: a dependency later in the order (lower priority, approved
	// later) thus goes first, and its dependant right after it.
	for cap < 1 || len(order) < cap {
		i := slices.IndexFunc(rest, func(t queueTask) bool {
			for _, d := range t.DependsOn {
				if !in[d] && !merged(d) {
					return false
				}
			}
			return true
		})
		if i < 0 {
			break
		}
		order = append(order, rest[i])
		in[rest[i].ID] = true
		rest = slices.Delete(rest, i, i+1)
	}
	return order, rest
}

// bisection is the plan of a batch's test runs: which prefix of the
// tasks still pending is tested next. The batch is tested whole; a
// failure tests its first half; a half that passes lands, and the next
// test halves what is left of the range known to fail; a failing range of
// one task is that task, which is isolated without another run; then the
// tasks after it, which no run has judged, are tested together as a new
// batch. One breaking task in eight costs five runs: the whole batch,
// three halvings, and the rest together.
//
// It knows nothing of git: the merge queue asks it what to do, does it,
// and tells it the outcome (BisectPlan, in the tests, replays it against a
// set of breaking tasks).
type bisection struct {
	pending int // tasks not yet landed or isolated, in order
	// known > 0: the first known pending tasks, merged in order onto
	// what landed, fail the test. 0: nothing is known of pending.
	known int
}

// bisectStep is what to do next: test the first Test pending tasks, or
// isolate the first pending task (Isolate), which fails the test alone.
type bisectStep struct {
	Test    int
	Isolate bool
}

// next is the next step; ok is false when nothing is pending.
func (b *bisection) next() (step bisectStep, ok bool) {
	switch {
	case b.pending == 0:
		return bisectStep{}, false
	case b.known == 1:
		return bisectStep{Isolate: true}, true
	case b.known == 0:
		return bisectStep{Test: b.pending}, true
	}
	return bisectStep{Test: b.known / 2}, true
}

// passed records that the first n pending tasks passed: they land.
func (b *bisection) passed(n int) {
	b.pending -= n
	if b.known > 0 {
		b.known -= n
	}
}

// failed records that the first n pending tasks failed.
func (b *bisection) failed(n int) { b.known = n }

// isolated records that the first pending task was isolated: the tasks
// after it are judged afresh.
func (b *bisection) isolated() {
	b.pending--
	b.known = 0
}

// dropped records that the pending task at index i left the batch
// without a test (a conflict, a dependency that failed): what was known of
// the ranges holding it no longer holds.
func (b *bisection) dropped(i int) {
	b.pending--
	if i < b.known {
		b.known = 0
	} else if b.known > b.pending {
		b.known = b.pending
	}
}

// dependants are the ids among pending (in order) that depend, directly
// or through one another, on a task in gone.
func dependants(pending []queueTask, gone map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, t := range pending {
		for _, d := range t.DependsOn {
			if gone[d] || out[d] {
				out[t.ID] = true
				break
			}
		}
	}
	return out
}
