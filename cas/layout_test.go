package cas

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func TestNaturalLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"task-2", "task-10", true},
		{"task-10", "task-2", false},
		{"task-1", "task-1", false},
		{"task-1", "task-1a", true},
		{"task-1a", "task-1b", true},
		{"task-9-b", "task-10-a", true},
		{"a", "b", true},
		{"b", "a", false},
		{"", "a", true},
		{"a", "", false},
		{"task-1", "tusk-1", true},
		{"2", "10", true},
		{"x2y", "x2z", true},
		{"v1.10", "v1.9", false},
	} {
		if got := contracts.NaturalLess(c.a, c.b); got != c.less {
			t.Errorf("NaturalLess(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}

func TestSortTasks(t *testing.T) {
	mk := func(id, created string) *contracts.Task { return &contracts.Task{ID: id, Created: created} }
	ts := []*contracts.Task{
		mk("task-10", "2025-01-10T09:00:00Z"),
		mk("task-3", "2025-01-11T09:00:00Z"),
		mk("task-2", "2025-01-10T09:00:00Z"),
		mk("task-1", "2025-01-10T09:00:00Z"),
		mk("zeta", "2025-01-09T09:00:00Z"),
	}
	SortTasks(ts)
	var ids []string
	for _, x := range ts {
		ids = append(ids, x.ID)
	}
	if want := []string{"zeta", "task-1", "task-2", "task-10", "task-3"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("SortTasks = %q, want %q", ids, want)
	}
}

func TestSeqNamesSortInListOrder(t *testing.T) {
	var names []string
	for _, n := range []int{1, 2, 9, 10, 11, 100, 999, 1000} {
		names = append(names, seqName(n))
	}
	if !sort.StringsAreSorted(names) {
		t.Fatalf("sequence names out of order: %q", names)
	}
}

// TestLayoutDocumented: every directory the code writes is named in the
// layout comment of layout.go.
func TestLayoutDocumented(t *testing.T) {
	src, err := os.ReadFile("layout.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append([]string{LayoutFile, MetaFile, TasksDir + "/<x>/<y>/<id>.yaml", TasksDir + "/<x>/<y>/" + IndexFile,
		ArchiveDir + "/<x>/<y>/<id>.yaml", ArchiveDir + "/<x>/<y>/" + IndexFile, PlannedDir + "/<c>/<cc>",
		AgentsDir + "/<id>.yaml", HandoffDir + "/<task-id>.yaml", RequestDir + "/<x>/<y>/<hash>"}, func() []string {
		var out []string
		for _, l := range lists {
			out = append(out, l+"/<c>/<cc>/<n>.yaml")
		}
		return out
	}()...) {
		if !strings.Contains(string(src), "//\t"+d) {
			t.Errorf("layout.go does not document %s", d)
		}
	}
}

func TestValidatedCache(t *testing.T) {
	s := initStore(t)
	first := tip(t, s)
	if !s.knownValid(first) {
		t.Fatal("a commit made by Update is not known valid")
	}
	res := mustUpdate(t, s, putTasks(task("task-1")))
	if !s.knownValid(res.Commit) || !s.knownValid(first) {
		t.Fatal("the cache lost a commit")
	}
	// Another store on the same repository shares the cache.
	if !openStore(t, s.Repo.Dir()).knownValid(res.Commit) {
		t.Fatal("the cache is not in the repository")
	}
	if s.knownValid(refstore.Hash{9, 9, 9}) {
		t.Fatal("an unknown commit is known valid")
	}
}

// TestValidatedCacheIsTrusted: a commit in the cache is not validated
// again, which is what makes an update cost what it touches.
func TestValidatedCacheIsTrusted(t *testing.T) {
	s := initStore(t)
	handMade := gitCommitState(t, s, map[string]string{LayoutFile: layoutV2, MetaFile: "version: [1\n"})
	s.markValid(handMade)
	mustUpdate(t, s, Op{Name: contracts.OpNote, Apply: func(tx *Tx) (any, error) {
		_, err := tx.Append(ListHumanNotes, &contracts.HumanNote{Timestamp: stamp, Message: "x"})
		return nil, err
	}})
}

func TestMarkValidKeepsRecent(t *testing.T) {
	s := newStore(t)
	var ids []refstore.Hash
	for i := 0; i < 3*validatedKeep; i++ {
		id := refstore.Hash{byte(i), 1}
		ids = append(ids, id)
		s.markValid(id)
		b, err := os.ReadFile(s.validatedPath())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(strings.Fields(string(b))); n > 2*validatedKeep || n < min(i+1, validatedKeep) {
			t.Fatalf("after %d marks the file holds %d ids", i+1, n)
		}
	}
	for i, id := range ids {
		if i >= len(ids)-validatedKeep && !s.knownValid(id) {
			t.Errorf("recent id %d forgotten", i)
		}
		if i < validatedKeep && s.knownValid(id) {
			t.Errorf("old id %d still kept", i)
		}
	}
	if m, _ := filepath.Glob(s.validatedPath() + ".*"); len(m) > 0 {
		t.Errorf("temporary files left: %q", m)
	}
}
