package ops_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

// TestBisectPlan: which tasks each run of a failing batch tests, in
// order. One breaking task in eight costs at most five runs wherever it
// is (the batch, three halvings, the rest together), the others all
// land, and a batch that passes costs one.
func TestBisectPlan(t *testing.T) {
	for _, tc := range []struct {
		n      int
		breaks []int
		runs   string
		failed []int
	}{
		{8, nil, "[[0 1 2 3 4 5 6 7]]", nil},
		{8, []int{5}, "[[0 1 2 3 4 5 6 7] [0 1 2 3] [4 5] [4] [6 7]]", []int{5}},
		{8, []int{0}, "[[0 1 2 3 4 5 6 7] [0 1 2 3] [0 1] [0] [1 2 3 4 5 6 7]]", []int{0}},
		{8, []int{7}, "[[0 1 2 3 4 5 6 7] [0 1 2 3] [4 5] [6]]", []int{7}},
		{3, []int{1}, "[[0 1 2] [0] [1] [2]]", []int{1}},
		{2, []int{1}, "[[0 1] [0]]", []int{1}},
		{1, []int{0}, "[[0]]", []int{0}},
		// Two breaking tasks: each is isolated, the rest lands.
		{8, []int{2, 6}, "[[0 1 2 3 4 5 6 7] [0 1 2 3] [0 1] [2] [3 4 5 6 7] [3 4] [5] [6] [7]]", []int{2, 6}},
	} {
		breaks := map[int]bool{}
		for _, b := range tc.breaks {
			breaks[b] = true
		}
		runs, landed, failed := ops.BisectPlan(tc.n, breaks)
		if got := fmt.Sprint(runs); got != tc.runs {
			t.Errorf("%d tasks, %v break: runs %s, want %s", tc.n, tc.breaks, got, tc.runs)
		}
		if !slices.Equal(failed, tc.failed) {
			t.Errorf("%d tasks, %v break: isolated %v, want %v", tc.n, tc.breaks, failed, tc.failed)
		}
		if len(landed)+len(failed) != tc.n {
			t.Errorf("%d tasks, %v break: %d landed and %d isolated", tc.n, tc.breaks, len(landed), len(failed))
		}
	}
	// Wherever the one breaking task is in a batch of eight, five runs
	// at most.
	for b := 0; b < 8; b++ {
		runs, landed, _ := ops.BisectPlan(8, map[int]bool{b: true})
		if len(runs) > 5 || len(landed) != 7 {
			t.Errorf("task %d breaks: %d runs, %d landed; want at most 5 runs and 7 landed", b, len(runs), len(landed))
		}
	}
}

// TestQueueOrder: priority first, then approval time, then id; a
// dependency goes before its dependant whatever their priorities, and a
// task whose dependency is neither merged nor in the order waits.
func TestQueueOrder(t *testing.T) {
	tasks := []string{
		"late|1|2026-01-17T10:05:00Z|",
		"early|1|2026-01-17T10:01:00Z|",
		"low|5|2026-01-17T10:00:00Z|",
		"needs-low|1|2026-01-17T10:00:00Z|low",
		"needs-gone|1|2026-01-17T10:00:00Z|gone",
		"needs-merged|3|2026-01-17T10:00:00Z|old",
	}
	order, waiting := ops.QueueOrder(tasks, []string{"old"}, 0)
	if want := []string{"early", "late", "needs-merged", "low", "needs-low"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if want := []string{"needs-gone"}; !slices.Equal(waiting, want) {
		t.Errorf("waiting %v, want %v", waiting, want)
	}
	// The cap takes the first of the order; the rest waits.
	order, waiting = ops.QueueOrder(tasks, []string{"old"}, 2)
	if want := []string{"early", "late"}; !slices.Equal(order, want) {
		t.Errorf("order capped at 2: %v, want %v", order, want)
	}
	if len(waiting) != 4 {
		t.Errorf("capped at 2: %d waiting, want 4", len(waiting))
	}
}
