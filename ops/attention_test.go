package ops_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// SortByAttention gives one order whatever order the tasks come in: by
// attention rank, priority, the ids as counted, and the ids' bytes where
// counting ties them (task-01 and task-1), so that status's choice of
// the tasks it lists (from the indexes) and its board (from the tasks)
// agree.
func TestSortByAttentionOneOrder(t *testing.T) {
	statuses := []contracts.Status{contracts.Claimed, contracts.Unclaimed, contracts.Blocked, contracts.Merged, contracts.ReadyForReview}
	var tasks []ops.BoardTask
	for i := range 300 {
		id := fmt.Sprintf("task-%d", i%40)
		if i%40 != i {
			id = fmt.Sprintf("task-%0*d", 2+i/40, i%40) // the same number, written longer
		}
		tasks = append(tasks, ops.BoardTask{ID: id, Status: statuses[i%len(statuses)], Priority: 1 + i%3})
	}
	want := slices.Clone(tasks)
	slices.SortStableFunc(want, func(a, b ops.BoardTask) int {
		return cmp.Or(cmp.Compare(contracts.AttentionRank(a.Status), contracts.AttentionRank(b.Status)),
			cmp.Compare(a.Priority, b.Priority), ops.CompareIDs(a.ID, b.ID), strings.Compare(a.ID, b.ID))
	})
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		got := slices.Clone(tasks)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		ops.SortByAttention(got)
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Status != want[i].Status || got[i].Priority != want[i].Priority {
				t.Fatalf("shuffle %d: position %d is %s (%s, %d), want %s (%s, %d)", round, i,
					got[i].ID, got[i].Status, got[i].Priority, want[i].ID, want[i].Status, want[i].Priority)
			}
		}
	}
}

// A board's sections are its tasks cut by status, in order; appending to
// one leaves the board and the next section as they were.
func TestSectionsAreTheBoardCut(t *testing.T) {
	b := &ops.Board{Tasks: []ops.BoardTask{
		{ID: "a", Status: contracts.Claimed}, {ID: "b", Status: contracts.Claimed},
		{ID: "c", Status: contracts.Unclaimed}, {ID: "d", Status: contracts.Merged},
	}}
	secs := b.Sections()
	var got []string
	for _, s := range secs {
		var ids []string
		for _, t := range s.Tasks {
			ids = append(ids, t.ID)
		}
		got = append(got, fmt.Sprintf("%s:%s", s.Status, strings.Join(ids, ",")))
	}
	if want := []string{"CLAIMED:a,b", "UNCLAIMED:c", "MERGED:d"}; !slices.Equal(got, want) {
		t.Fatalf("sections %q, want %q", got, want)
	}
	_ = append(secs[0].Tasks, ops.BoardTask{ID: "x", Status: contracts.Claimed})
	if b.Tasks[2].ID != "c" || secs[1].Tasks[0].ID != "c" {
		t.Fatalf("an append to a section wrote over the board: %+v", b.Tasks)
	}
	if len((&ops.Board{}).Sections()) != 0 {
		t.Fatal("an empty board has sections")
	}
}

// CapLists keeps the first agents and the critical alarms before the
// warnings, and counts the rest.
func TestCapLists(t *testing.T) {
	b := &ops.Board{}
	for i := range 7 {
		b.Agents = append(b.Agents, ops.BoardAgent{ID: fmt.Sprintf("coder-%d", i+1)})
		level := contracts.AlarmWarning
		if i == 5 {
			level = contracts.AlarmCritical
		}
		b.Alarms = append(b.Alarms, contracts.Alarm{Key: fmt.Sprintf("k%d", i), Level: level})
	}
	b.CapLists(3)
	if len(b.Agents) != 3 || b.Agents[2].ID != "coder-3" || b.MoreAgents != 4 {
		t.Fatalf("agents %+v, %d more", b.Agents, b.MoreAgents)
	}
	if len(b.Alarms) != 3 || b.Alarms[0].Key != "k5" || b.Alarms[1].Key != "k0" || b.Alarms[2].Key != "k1" || b.MoreAlarms != 4 {
		t.Fatalf("alarms %+v, %d more", b.Alarms, b.MoreAlarms)
	}
	small := &ops.Board{Agents: []ops.BoardAgent{{ID: "a"}}}
	small.CapLists(3)
	if len(small.Agents) != 1 || small.MoreAgents != 0 {
		t.Fatalf("a short list was cut: %+v", small)
	}
}
