package cas

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// Tasks reads many tasks in the order asked, whether it decodes them on
// one processor or several, and reports the first task in that order that
// cannot be read, as reading them one by one would.
func TestTasksInOrder(t *testing.T) {
	s := initStore(t)
	var ts []*contracts.Task
	for i := range 3 * parallelFrom {
		tk := task(fmt.Sprintf("t%d", i))
		tk.Description = strings.Repeat("x", i)
		ts = append(ts, tk)
	}
	mustUpdate(t, s, putTasks(ts...))
	snap, err := ReadSnapshot(s.Repo, tip(t, s))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, parallelFrom - 1, parallelFrom, len(ts)} {
		var ids []string
		for _, i := range rand.Perm(len(ts))[:n] {
			ids = append(ids, ts[i].ID)
		}
		got, err := snap.Tasks(TasksDir, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d tasks asked, %d read", n, len(got))
		}
		for i, tk := range got {
			var k int
			fmt.Sscanf(ids[i], "t%d", &k)
			if tk.ID != ids[i] || len(tk.Description) != k {
				t.Fatalf("task %d of %d: %s (%d bytes of description), want %s", i, n, tk.ID, len(tk.Description), ids[i])
			}
		}
	}
	// A task the directory lacks is reported, the first in the order.
	ids := []string{"t3", "t1"}
	for i := range 2 * parallelFrom {
		ids = append(ids, fmt.Sprintf("t%d", i))
	}
	ids[parallelFrom] = "gone-1"
	ids[parallelFrom+5] = "gone-2"
	_, err = snap.Tasks(TasksDir, ids)
	if e := wantCode(t, err, contracts.CodeInconsistent); !strings.Contains(e.Error(), "names task gone-1,") {
		t.Fatalf("a missing task: %v", err)
	}
}

// A task file that does not decode is reported, the first in the order,
// when several do not and the others decode around them.
func TestTasksFirstUndecodable(t *testing.T) {
	s := initStore(t)
	var ts []*contracts.Task
	for i := range 2 * parallelFrom {
		ts = append(ts, task(fmt.Sprintf("t%d", i)))
	}
	mustUpdate(t, s, putTasks(ts...))
	mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
		for _, id := range []string{"t70", "t90", "t100"} {
			tx.putRaw(EntityFile(TasksDir, id), []byte("id: "+id+"\ndescription: [unclosed\n"))
		}
		tx.Describe("break three", "t70")
		return nil, nil
	}})
	snap, err := ReadSnapshot(s.Repo, tip(t, s))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := len(ts) - 1; i >= 0; i-- {
		ids = append(ids, ts[i].ID)
	}
	for range 20 {
		_, err = snap.Tasks(TasksDir, ids)
		if e := wantCode(t, err, contracts.CodeInconsistent); !strings.Contains(e.Error(), "tasks/t100.yaml") {
			t.Fatalf("three tasks that do not decode, t100 first: %v", err)
		}
	}
}
