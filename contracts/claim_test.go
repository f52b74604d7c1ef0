package contracts

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func statuses(tasks ...*TaskSummary) func(string) (Status, bool) {
	return func(id string) (Status, bool) {
		for _, t := range tasks {
			if t.ID == id {
				return t.Status, true
			}
		}
		return "", false
	}
}

func TestClaimable(t *testing.T) {
	merged, open := summaryOf("dep-1", Merged), summaryOf("dep-2", Approved)
	lookup := statuses(merged, open)
	for _, st := range Statuses {
		want := st == Unclaimed || st == Rejected || st == IntegrationFailed
		if got := Claimable(summaryOf("t", st), lookup); got != want {
			t.Errorf("Claimable(%s) = %v, want %v", st, got, want)
		}
	}
	withDeps := func(deps ...string) *TaskSummary {
		tk := summaryOf("t", Unclaimed)
		tk.DependsOn = deps
		return tk
	}
	for _, tc := range []struct {
		name     string
		t        *TaskSummary
		statusOf func(string) (Status, bool)
		want     bool
	}{
		{"merged dependency", withDeps("dep-1"), lookup, true},
		{"unmerged dependency", withDeps("dep-1", "dep-2"), lookup, false},
		{"unknown dependency", withDeps("dep-9"), lookup, false},
		{"no lookup, no deps", withDeps(), nil, true},
		{"no lookup, deps", withDeps("dep-1"), nil, false},
		{"nil task", nil, lookup, false},
	} {
		if got := Claimable(tc.t, tc.statusOf); got != tc.want {
			t.Errorf("%s: Claimable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLess(t *testing.T) {
	mk := func(id string, prio int, created string) *TaskSummary {
		tk := summaryOf(id, Unclaimed)
		tk.Priority, tk.Created = prio, created
		return tk
	}
	tasks := []*TaskSummary{
		mk("task-10", 2, t0),
		mk("task-9", 3, t0),
		mk("task-2", 2, t0),
		mk("task-1", 2, t1),
		mk("task-3", 1, t2),
		mk("task-02", 2, t0),
		mk("task-4", 2, ""),
		mk("task-5", 2, "2025-01-10T10:00:00+02:00"), // 08:00Z: oldest
		mk("task-2a", 2, t0),
		mk("task-2-b", 2, t0),
	}
	sort.SliceStable(tasks, func(i, j int) bool { return Less(tasks[i], tasks[j]) })
	var got []string
	for _, tk := range tasks {
		got = append(got, tk.ID)
	}
	want := []string{"task-3", "task-5", "task-02", "task-2", "task-2-b", "task-2a", "task-10", "task-1", "task-4", "task-9"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	for _, a := range tasks {
		if Less(a, a) {
			t.Errorf("Less(%s, %s)", a.ID, a.ID)
		}
		for _, b := range tasks {
			if a != b && Less(a, b) == Less(b, a) {
				t.Errorf("Less is not a strict order on %s, %s", a.ID, b.ID)
			}
		}
	}
}

func TestCompareNatural(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"task-2", "task-10", -1},
		{"task-10", "task-2", 1},
		{"task-2", "task-2", 0},
		{"task-02", "task-2", -1},
		{"a", "b", -1},
		{"task", "task-1", -1},
		{"1", "a", -1},
		{"", "a", -1},
		{"x99999999999999999999999", "x100000000000000000000000", -1},
	} {
		if got := compareNatural(tc.a, tc.b); got != tc.want {
			t.Errorf("compareNatural(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestBest(t *testing.T) {
	dep := summaryOf("task-0", Merged)
	blockedDep := summaryOf("task-50", Claimed)
	a := summaryOf("task-1", Unclaimed)
	a.Priority = 3
	b := summaryOf("task-2", Unclaimed)
	b.DependsOn = StringList{"task-0"}
	c := summaryOf("task-3", Rejected)
	c.AssignedTo = "coder-1"
	d := summaryOf("task-4", IntegrationFailed)
	d.AssignedTo = "coder-2"
	e := summaryOf("task-5", Unclaimed)
	e.Priority = 1
	e.DependsOn = StringList{"task-50"}
	f := summaryOf("task-6", Draft)
	f.Priority = 1
	all := []*TaskSummary{dep, blockedDep, a, b, c, d, e, f}
	lookup := statuses(all...)

	for _, tc := range []struct {
		name  string
		agent string
		skip  func(*TaskSummary) bool
		want  string
	}{
		{"own rejected first", "coder-1", nil, "task-3"},
		{"own integration failure first", "coder-2", nil, "task-4"},
		{"otherwise by order", "coder-3", nil, "task-2"},
		{"human", "", nil, "task-2"},
		{"skip", "coder-3", func(t *TaskSummary) bool { return t.ID == "task-2" }, "task-3"},
		{"skip own", "coder-1", func(t *TaskSummary) bool { return t.ID == "task-3" }, "task-2"},
		{"skip all", "coder-1", func(*TaskSummary) bool { return true }, ""},
	} {
		got := Best(all, lookup, tc.agent, tc.skip)
		id := ""
		if got != nil {
			id = got.ID
		}
		if id != tc.want {
			t.Errorf("%s: Best = %q, want %q", tc.name, id, tc.want)
		}
	}
	if Best(nil, lookup, "coder-1", nil) != nil || Best([]*TaskSummary{nil, f}, lookup, "coder-1", nil) != nil {
		t.Error("Best found a task where none is claimable")
	}
}

// summaryOf is the index entry of a new task with status st.
func summaryOf(id string, st Status) *TaskSummary { return task(id, st).Summary() }

// SortBest orders tasks as picking Best again and again from what is left
// does, over random boards: own sent-back work first, priorities, created
// times equal, unparsable and missing, and ids that sort only naturally.
func TestSortBestIsBestAgainAndAgain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	times := []string{"2026-01-02T10:00:00Z", "2026-01-02T10:00:00Z", "2026-01-01T09:00:00Z", "2026-01-02T10:00:01+01:00", "", "yesterday"}
	statuses := []Status{Unclaimed, Unclaimed, Rejected, IntegrationFailed}
	for round := range 300 {
		n := 1 + rng.IntN(30)
		tasks := make([]*TaskSummary, n)
		for i := range tasks {
			tasks[i] = &TaskSummary{ID: fmt.Sprintf("task-%d", rng.IntN(40)*(1+rng.IntN(3))) + fmt.Sprint(i%3), Status: statuses[rng.IntN(len(statuses))],
				Priority: 1 + rng.IntN(3), Created: times[rng.IntN(len(times))], AssignedTo: []string{"", "coder-1", "coder-2"}[rng.IntN(3)]}
		}
		agent := []string{"", "coder-1"}[round%2]
		var want []string
		picked := map[*TaskSummary]bool{}
		for range tasks {
			b := Best(tasks, nil, agent, func(x *TaskSummary) bool { return picked[x] })
			picked[b] = true
			want = append(want, b.ID+"/"+b.Created+"/"+b.AssignedTo)
		}
		got := slices.Clone(tasks)
		SortBest(got, agent)
		var gotIDs []string
		for _, x := range got {
			gotIDs = append(gotIDs, x.ID+"/"+x.Created+"/"+x.AssignedTo)
		}
		if !slices.Equal(gotIDs, want) {
			t.Fatalf("round %d, agent %q:\nSortBest %v\nBest     %v", round, agent, gotIDs, want)
		}
	}
}
