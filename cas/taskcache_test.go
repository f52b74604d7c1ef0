package cas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// Through a cache, a read gives what Tasks gives; the next read, after
// one task changed, decodes that one again and takes the others from the
// cache, as the same objects.
func TestSharedTasksDecodeWhatChanged(t *testing.T) {
	s := initStore(t)
	var ts []*contracts.Task
	var ids []string
	for i := range 2 * parallelFrom {
		ts = append(ts, task(fmt.Sprintf("t%d", i)))
		ids = append(ids, ts[i].ID)
	}
	mustUpdate(t, s, putTasks(ts...))
	c := NewTaskCache()
	read := func() []*contracts.Task {
		t.Helper()
		snap, err := ReadSnapshot(s.Repo, tip(t, s))
		if err != nil {
			t.Fatal(err)
		}
		got, err := snap.SharedTasks(TasksDir, ids, c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := snap.Tasks(TasksDir, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			g, _ := contracts.EncodeYAML(got[i])
			w, _ := contracts.EncodeYAML(want[i])
			if string(g) != string(w) {
				t.Fatalf("%s through the cache:\n%s\nread:\n%s", ids[i], g, w)
			}
		}
		return got
	}
	first := read()
	changed := task("t7")
	changed.Description = "changed"
	mustUpdate(t, s, putTasks(changed))
	second := read()
	for i := range ids {
		same := first[i] == second[i]
		if ids[i] == "t7" && (same || second[i].Description != "changed") {
			t.Fatalf("t7 changed and the cache gave the task as it was: %q", second[i].Description)
		}
		if ids[i] != "t7" && !same {
			t.Fatalf("%s did not change and was decoded again", ids[i])
		}
	}
}

// Through a cache, the error is Tasks's: the first task in the order
// that cannot be read, whether it does not decode or is not there, and
// whether the tasks before it came from the cache or not.
func TestSharedTasksFirstError(t *testing.T) {
	s := initStore(t)
	var ts []*contracts.Task
	for i := range 2 * parallelFrom {
		ts = append(ts, task(fmt.Sprintf("t%d", i)))
	}
	mustUpdate(t, s, putTasks(ts...))
	mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
		tx.putRaw(EntityFile(TasksDir, "t90"), []byte("id: t90\ndescription: [unclosed\n"))
		tx.Describe("break one", "t90")
		return nil, nil
	}})
	snap, err := ReadSnapshot(s.Repo, tip(t, s))
	if err != nil {
		t.Fatal(err)
	}
	c := NewTaskCache()
	var good []string
	for i := range 80 {
		good = append(good, fmt.Sprintf("t%d", i))
	}
	if _, err := snap.SharedTasks(TasksDir, good, c); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{append(append([]string{}, good...), "t90", "gone"), "tasks/t90.yaml"},
		{append(append([]string{}, good...), "gone", "t90"), "names task gone,"},
		{[]string{"t90", "t1", "gone"}, "tasks/t90.yaml"},
	} {
		for _, cache := range []*TaskCache{c, nil} {
			_, err := snap.SharedTasks(TasksDir, tc.ids, cache)
			if e := wantCode(t, err, contracts.CodeInconsistent); !strings.Contains(e.Error(), tc.want) {
				t.Fatalf("%q (cache %v): %v, want %s", tc.ids[len(tc.ids)-2:], cache != nil, err, tc.want)
			}
		}
	}
}
