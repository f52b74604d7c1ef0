package cas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// smallGroups makes chunks of two lines and groups of two chunks for the
// test, so that a few dozen tasks cut chunks and groups at every turn.
func smallGroups(t *testing.T) {
	c, g := groupChunk, queueGroup
	groupChunk, queueGroup = 2, 2
	t.Cleanup(func() { groupChunk, queueGroup = c, g })
}

// recorded marks op as a recorded operation, whose commit says the rules
// it followed (Liza-Rules): the next operation then reads the claim index
// it kept and changes it, where after an unrecorded one (rule set 1) it
// writes the index whole.
func recorded(op Op) Op {
	op.Kind, op.Input = "note", []byte(`{}`)
	return op
}

// queueOrder fails unless the queue read from the claim index is the
// UNCLAIMED tasks in Less's order, as the whole board says.
func queueOrder(t *testing.T, s *Store, what string) {
	t.Helper()
	err := s.View("coder-1", func(tx *Tx) error {
		var got []string
		if err := tx.EachQueued(func(x *contracts.TaskSummary) (bool, error) {
			got = append(got, x.ID)
			return true, nil
		}); err != nil {
			return err
		}
		sums, err := tx.Snap.Summaries(TasksDir)
		if err != nil {
			return err
		}
		var want []*contracts.TaskSummary
		for _, x := range sums {
			if x.Status == contracts.Unclaimed {
				want = append(want, x)
			}
		}
		slices.SortFunc(want, func(a, b *contracts.TaskSummary) int {
			if contracts.Less(a, b) {
				return -1
			}
			return 1
		})
		var ids []string
		for _, x := range want {
			ids = append(ids, x.ID)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("%s: queue %v, want %v", what, got, ids)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// groupNames is the groups of the queue at the tip.
func groupNames(t *testing.T, s *Store) []string {
	t.Helper()
	groups, err := mustSnapshot(t, s).Entries(groupsDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range groups {
		out = append(out, g.Name)
	}
	return out
}

// TestQueueGroupsFollowOperations: through random adds (at any priority,
// some created in the past so that they go before every queued task),
// claims of the head and of any task, releases, priority changes and
// archiving, the queue in groups written a change at a time is what the
// tasks make, every chunk and group within bounds and in order; groups
// are cut, emptied and made anew before the others ("0").
func TestQueueGroupsFollowOperations(t *testing.T) {
	smallGroups(t)
	s := initStore(t)
	r := rand.New(rand.NewPCG(28, 6))
	var queued, held []string
	n := 0
	add := func() *contracts.Task {
		n++
		x := task(fmt.Sprintf("t-%d", n))
		x.Priority = 1 + r.IntN(5)
		if r.IntN(4) == 0 {
			x.Created = fmt.Sprintf("2020-01-%02dT00:00:00Z", 1+r.IntN(28))
		}
		queued = append(queued, x.ID)
		return x
	}
	var first []*contracts.Task
	for range 40 {
		first = append(first, add())
	}
	mustUpdate(t, s, recorded(putTasks(first...)))
	checkClaims(t, s, "an add of 40")
	if g := groupNames(t, s); len(g) < 5 || g[0] != firstGroup {
		t.Fatalf("40 tasks built whole make groups %v", g)
	}
	take := func(list *[]string, i int) string {
		id := (*list)[i]
		*list = slices.Delete(*list, i, i+1)
		return id
	}
	edit := func(id string, fn func(x *contracts.Task)) Op {
		return Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
			x, err := tx.MustTask(id)
			if err != nil {
				return nil, err
			}
			fn(x)
			tx.PutTask(x)
			tx.Describe("edit "+id, id)
			return nil, nil
		}}
	}
	head := func() string {
		var id string
		err := s.View("coder-1", func(tx *Tx) error {
			return tx.EachQueued(func(x *contracts.TaskSummary) (bool, error) {
				id = x.ID
				return false, nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	for round := range 250 {
		var what string
		switch k := r.IntN(6); {
		case k == 0 || len(queued) < 4:
			x := add()
			what = "add " + x.ID
			mustUpdate(t, s, recorded(putTasks(x)))
		case k == 1:
			id := head()
			queued = slices.DeleteFunc(queued, func(q string) bool { return q == id })
			held = append(held, id)
			what = "claim of the head " + id
			mustUpdate(t, s, recorded(putTasks(claimed(id, "coder-"+strings.TrimPrefix(id, "t-")))))
		case k == 2:
			id := take(&queued, r.IntN(len(queued)))
			held = append(held, id)
			what = "claim of " + id
			mustUpdate(t, s, recorded(putTasks(claimed(id, "coder-"+strings.TrimPrefix(id, "t-")))))
		case k == 3 && len(held) > 0:
			id := take(&held, r.IntN(len(held)))
			queued = append(queued, id)
			what = "release of " + id
			mustUpdate(t, s, recorded(edit(id, func(x *contracts.Task) {
				x.Status, x.AssignedTo, x.LeaseExpires, x.Worktree, x.BaseCommit = contracts.Unclaimed, "", "", "", ""
			})))
		case k == 4:
			id := queued[r.IntN(len(queued))]
			what = "a priority change of " + id
			mustUpdate(t, s, recorded(edit(id, func(x *contracts.Task) { x.Priority = 1 + r.IntN(5) })))
		default:
			id := take(&queued, r.IntN(len(queued)))
			what = "archive of " + id
			mustUpdate(t, s, recorded(Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
				x, err := tx.MustTask(id)
				if err != nil {
					return nil, err
				}
				x.Status = contracts.Abandoned
				tx.ArchiveTask(x)
				tx.Describe("archive "+id, id)
				return nil, nil
			}}))
		}
		what = fmt.Sprintf("round %d, %s", round, what)
		checkClaims(t, s, what)
		queueOrder(t, s, what)
	}
	// The head claimed until the first group has gone; a task before
	// every other then goes to a new group "0".
	var last []*contracts.Task
	for range 12 {
		x := add()
		x.Priority = 5
		last = append(last, x)
	}
	mustUpdate(t, s, recorded(putTasks(last...)))
	checkClaims(t, s, "12 tasks at the end")
	for i := 0; groupNames(t, s)[0] == firstGroup; i++ {
		if i > 100 {
			t.Fatalf("100 claims of the head left the first group: %v", groupNames(t, s))
		}
		id := head()
		t.Logf("groups %v, head %s", groupNames(t, s), id)
		mustUpdate(t, s, recorded(putTasks(claimed(id, "coder-"+strings.TrimPrefix(id, "t-")))))
		checkClaims(t, s, "a claim of the head "+id)
	}
	early := add()
	early.Priority, early.Created = 1, "2019-01-01T00:00:00Z"
	mustUpdate(t, s, recorded(putTasks(early)))
	checkClaims(t, s, "a task before every other")
	queueOrder(t, s, "a task before every other")
	if g := groupNames(t, s); g[0] != firstGroup || head() != early.ID {
		t.Fatalf("a task before every other: groups %v, head %s", g, head())
	}
}

// TestQueueGroupsReplaceFlatQueue: a board whose operations kept the flat
// queue (rule set 5) takes an operation under the current rules, which
// writes the queue whole in groups and removes every flat chunk; an
// operation under rule set 5 after it writes the flat queue whole again,
// and every one of them is what the tasks make.
func TestQueueGroupsReplaceFlatQueue(t *testing.T) {
	s := newStore(t)
	under := func(rules int, op Op) {
		t.Helper()
		op.Rules = rules
		mustUpdate(t, s, op)
	}
	under(contracts.RulesClaimIndex, initOp())
	var many []*contracts.Task
	for i := range 2*queueChunk + 10 {
		many = append(many, task(fmt.Sprintf("t-%d", i)))
	}
	under(contracts.RulesClaimIndex, putTasks(many...))
	paths := func() (flat, groups int) {
		for _, p := range lsTree(t, s, mustSnapshot(t, s).Tree) {
			switch {
			case strings.HasPrefix(p, queueDir+"/"):
				flat++
			case strings.HasPrefix(p, groupsDir+"/"):
				groups++
			}
		}
		return
	}
	if f, g := paths(); f == 0 || g != 0 {
		t.Fatalf("rule set 5 wrote %d flat chunks and %d files in groups", f, g)
	}
	checkClaims(t, s, "rule set 5")
	under(contracts.RulesQueueGroups, putTasks(claimed("t-3", "coder-1")))
	if f, g := paths(); f != 0 || g == 0 {
		t.Fatalf("the first operation under rule set 6 left %d flat chunks and wrote %d files in groups", f, g)
	}
	checkClaims(t, s, "the first operation under rule set 6")
	queueOrder(t, s, "rule set 6")
	under(contracts.RulesQueueGroups, putTasks(claimed("t-4", "coder-2")))
	checkClaims(t, s, "the next operation under rule set 6")
	under(contracts.RulesClaimIndex, putTasks(claimed("t-5", "coder-3")))
	if f, g := paths(); f == 0 || g != 0 {
		t.Fatalf("an operation under rule set 5 after them left %d flat chunks and %d files in groups", f, g)
	}
	checkClaims(t, s, "rule set 5 again")
}

// TestForgedQueueGroupsRefused: a state whose queue in groups holds the
// right lines but is not cut as operations cut it (a group named above a
// key before it, a chunk named above its first key, a flat chunk left
// beside the groups) does not match its tasks.
func TestForgedQueueGroupsRefused(t *testing.T) {
	smallGroups(t)
	s := initStore(t)
	var many []*contracts.Task
	for i := range 12 {
		many = append(many, task(fmt.Sprintf("t-%d", i)))
	}
	mustUpdate(t, s, recorded(putTasks(many...)))
	checkClaims(t, s, "honest")
	files := treeFiles(t, s)
	var chunks []string
	for p := range files {
		if strings.HasPrefix(p, groupsDir+"/") {
			chunks = append(chunks, p)
		}
	}
	slices.Sort(chunks)
	if len(chunks) < 4 {
		t.Fatalf("12 tasks in chunks of 2: %v", chunks)
	}
	rename := func(from, to string) func(map[string]string) {
		return func(f map[string]string) { f[to], f[from] = f[from], ""; delete(f, from) }
	}
	second, last := chunks[1], chunks[len(chunks)-1]
	secondKey := strings.SplitN(strings.Split(files[second], "\n")[1], "\t", 2)[0]
	for _, c := range []struct {
		what  string
		forge func(map[string]string)
	}{
		{"a chunk named above its first key", rename(second, second[:strings.LastIndexByte(second, '/')+1]+secondKey+"z")},
		{"the last chunk in a group named above its keys", rename(last, groupsDir+"/zzz/"+last[strings.LastIndexByte(last, '/')+1:])},
		{"a flat chunk beside the groups", func(f map[string]string) { f[queueDir+"/"+secondKey] = files[second] }},
	} {
		forged := map[string]string{}
		for p, b := range files {
			forged[p] = b
		}
		c.forge(forged)
		dir := s.Repo.Dir()
		commit := git(t, dir, "commit-tree", gitTree(t, dir, forged), "-p", tip(t, s).String(), "-m", "forged\n\n"+fmt.Sprintf("Liza-Rules: %d", contracts.Rules))
		snap, err := ReadSnapshot(s.Repo, hashOf(commit))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckState(snap, contracts.Rules); err == nil || !strings.Contains(err.Error(), "indexes do not match") {
			t.Errorf("%s: a whole check: %v", c.what, err)
		}
	}
}
