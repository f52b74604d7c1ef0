package cas

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// TestClaimKeyOrder: the byte order of ClaimKey is contracts.Less's, on
// ids whose digit runs differ in length, in leading zeros and in place,
// priorities below zero and creation times that do not parse.
func TestClaimKeyOrder(t *testing.T) {
	ids := []string{"a", "a-1", "a-01", "a-10", "a-2", "a1", "a10b", "a2", "ab", "ab-", "ab-c", "abc", "b", "task-9", "task-10",
		"task-100", "task-1-2", "task-1-10", "0", "00", "1", "9a", "10a", "x-0-0", "x-0", "-", "--", "z9z9", "z9z10"}
	created := []string{"2026-01-17T10:00:00Z", "2026-01-17T10:00:01Z", "2025-12-31T23:59:59Z", "soon", "", "2026-01-17T11:00:00+01:00"}
	rng := rand.New(rand.NewPCG(1, 2))
	var ts []*contracts.TaskSummary
	for i := 0; i < 400; i++ {
		ts = append(ts, &contracts.TaskSummary{
			ID: ids[rng.IntN(len(ids))], Priority: rng.IntN(5) - 2, Created: created[rng.IntN(len(created))],
		})
	}
	// The longest key: an id of MaxIDLen characters, digits and letters
	// alternating, a time that parses.
	long := strings.Repeat("1a", contracts.MaxIDLen/2+1)[:contracts.MaxIDLen]
	if err := contracts.ValidTaskID(long); err != nil {
		t.Fatal(err)
	}
	ts = append([]*contracts.TaskSummary{{ID: long, Priority: -5, Created: created[0]}}, ts...)
	for i, a := range ts {
		for _, b := range ts[i+1:] {
			ka, kb := ClaimKey(a), ClaimKey(b)
			if !validKey(ka) {
				t.Fatalf("key %q of %+v is not a valid chunk name", ka, a)
			}
			if (ka < kb) != contracts.Less(a, b) || (kb < ka) != contracts.Less(b, a) {
				t.Fatalf("%+v and %+v: keys %q and %q disagree with Less (%v, %v)", a, b, ka, kb, contracts.Less(a, b), contracts.Less(b, a))
			}
		}
	}
}

// treeFiles reads every file of the state at the tip.
func treeFiles(t *testing.T, s *Store) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, p := range lsTree(t, s, mustSnapshot(t, s).Tree) {
		files[p] = git(t, s.Repo.Dir(), "cat-file", "blob", mustSnapshot(t, s).Tree.String()+":"+p) + "\n"
	}
	return files
}

// checkClaims fails unless the claim index at the tip is what the live
// tasks make, every chunk within bounds.
func checkClaims(t *testing.T, s *Store, what string) {
	t.Helper()
	snap := mustSnapshot(t, s)
	st, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	if differs, err := claimsMatch(snap, st.Tasks); err != nil || differs != "" {
		t.Fatalf("%s: the claim index differs in %q (%v)", what, differs, err)
	}
	if has, _ := snap.hasClaims(); !has {
		t.Fatalf("%s: no claim index", what)
	}
	most := 2 * queueChunk
	if grouped(snap.rules) {
		most = 2 * groupChunk
	}
	err = snap.eachChunk(func(path string, id refstore.Hash) (bool, error) {
		raw, _ := s.Repo.ReadBlob(id)
		if n := strings.Count(string(raw), "\n") - 1; n < 1 || n > most {
			t.Fatalf("%s: chunk %s holds %d tasks", what, path, n)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestClaimIndexFollowsOperations: through adds of many tasks, claims,
// rejections, releases, priority changes, archiving and tasks created in
// the past, the claim index written a change at a time is what the tasks
// make, its queue cut into chunks of at most 2*queueChunk; and the
// best-task order read from its head is Less's over the board.
func TestClaimIndexFollowsOperations(t *testing.T) {
	for _, rules := range []int{contracts.RulesClaimIndex, contracts.RulesQueueGroups} {
		t.Run(fmt.Sprintf("rules %d", rules), func(t *testing.T) { claimIndexFollows(t, rules) })
	}
}

// claimIndexFollows is TestClaimIndexFollowsOperations under rules, its
// operations recorded so that each reads the index its parent kept.
func claimIndexFollows(t *testing.T, rules int) {
	s := newStore(t)
	mustUpdate := func(t *testing.T, s *Store, op Op) {
		t.Helper()
		op.Rules = rules
		mustUpdate(t, s, recorded(op))
	}
	mustUpdate(t, s, initOp())
	checkClaims(t, s, "init")
	var many []*contracts.Task
	for i := 1; i <= 3*queueChunk+7; i++ {
		x := task(fmt.Sprintf("t-%d", i))
		x.Priority = 1 + i%3
		many = append(many, x)
	}
	mustUpdate(t, s, putTasks(many...))
	checkClaims(t, s, "an add of many")
	step := func(what string, fn func(tx *Tx) error) {
		t.Helper()
		mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
			tx.Describe(what, "")
			return nil, fn(tx)
		}})
		checkClaims(t, s, what)
	}
	edit := func(id string, fn func(x *contracts.Task)) func(tx *Tx) error {
		return func(tx *Tx) error {
			x, err := tx.MustTask(id)
			if err != nil {
				return err
			}
			fn(x)
			tx.PutTask(x)
			return nil
		}
	}
	for i := 1; i <= 2*queueChunk+3; i++ {
		id := fmt.Sprintf("t-%d", i)
		mustUpdate(t, s, putTasks(claimed(id, fmt.Sprintf("coder-%d", i))))
	}
	checkClaims(t, s, "claims")
	step("a rejection", edit("t-1", func(x *contracts.Task) { x.Status, x.RejectionReason = contracts.Rejected, "no tests" }))
	step("a release", edit("t-2", func(x *contracts.Task) { x.Status, x.AssignedTo, x.LeaseExpires = contracts.Unclaimed, "", "" }))
	step("a priority change", edit("t-300", func(x *contracts.Task) { x.Priority = 5 }))
	step("an edit of an UNCLAIMED task's paths", edit(fmt.Sprintf("t-%d", 3*queueChunk), func(x *contracts.Task) { x.Scope = "IN: x/y" }))
	step("a task of the past", func(tx *Tx) error {
		x := task("early")
		x.Created, x.Priority = "2020-01-01T00:00:00Z", 1
		tx.PutTask(x)
		return nil
	})
	step("an archived task", func(tx *Tx) error {
		x, err := tx.MustTask("t-3")
		if err != nil {
			return err
		}
		x.Status = contracts.Abandoned
		tx.ArchiveTask(x)
		return nil
	})
	for i := 2*queueChunk + 4; i <= 3*queueChunk+7; i++ {
		mustUpdate(t, s, putTasks(claimed(fmt.Sprintf("t-%d", i), fmt.Sprintf("coder-%d", i))))
	}
	checkClaims(t, s, "the queue emptied but for two")

	// The head read through the index is the board's order.
	queueOrder(t, s, "the end")
	err := s.View("coder-1", func(tx *Tx) error {
		fl, err := tx.InFlight()
		if err != nil {
			return err
		}
		if len(fl) != 3*queueChunk+7-2 {
			t.Errorf("%d tasks in flight, want %d", len(fl), 3*queueChunk+7-2)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHandEditedClaimIndexNotTrusted: a state moved by hand, its commit
// saying it was made under the current rules, whose claim index leaves out
// a CLAIMED task is not read from it: a whole check says
// the indexes do not match, and the next operation sees the task claimed
// (coder-1 may not take a second one) and writes the index anew.
func TestHandEditedClaimIndexNotTrusted(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(claimed("task-1", "coder-1"), task("task-2")))
	files := treeFiles(t, s)
	honest := files[inflightFile]
	files[inflightFile] = indexHeader + "\n"
	// The forger claims the current rules, under which the index is read
	// (a commit without the trailer is not read from its index at all).
	dir := s.Repo.Dir()
	old := tip(t, s)
	c := git(t, dir, "commit-tree", gitTree(t, dir, files), "-p", old.String(), "-m", "edited by hand\n\n"+fmt.Sprintf("Liza-Rules: %d", contracts.Rules))
	git(t, dir, "update-ref", refstore.StateRef, c, old.String())
	forged := hashOf(c)
	snap, err := ReadSnapshot(s.Repo, forged)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckState(snap, contracts.Rules); err == nil || !strings.Contains(err.Error(), "indexes do not match") {
		t.Fatalf("a whole check of the forged state: %v", err)
	}
	second := claimed("task-2", "coder-1")
	_, err = s.Update(context.Background(), putTasks(second))
	wantCode(t, err, contracts.CodeInvalid)
	if !strings.Contains(err.Error(), "coder-1 also holds CLAIMED task task-1") {
		t.Fatalf("a second claim on the forged index: %v", err)
	}
	mustUpdate(t, s, putTasks(task("task-3")))
	checkClaims(t, s, "the operation after the forgery")
	if got := tipFile(t, s, inflightFile); got != honest {
		t.Fatalf("claims/inflight rebuilt:\n%s\nwant\n%s", got, honest)
	}
}

// TestOldRulesWriteNoClaimIndex: an operation under an older rule set
// writes no claim index (its replay must make the tree it made), and the
// first under the current rules writes it whole.
func TestOldRulesWriteNoClaimIndex(t *testing.T) {
	s := newStore(t)
	op := initOp()
	op.Rules = contracts.RulesLastMile
	mustUpdate(t, s, op)
	old := putTasks(task("task-1"), claimed("task-2", "coder-1"))
	old.Rules = contracts.RulesLastMile
	mustUpdate(t, s, old)
	if slices.ContainsFunc(lsTree(t, s, mustSnapshot(t, s).Tree), func(p string) bool { return strings.HasPrefix(p, ClaimsDir+"/") }) {
		t.Fatal("an operation under rule set 4 wrote a claim index")
	}
	mustUpdate(t, s, putTasks(task("task-3")))
	checkClaims(t, s, "the first operation under the current rules")
}

// TestInFlightFollowsTheOperation: what InFlight returns is kept for the
// next call until the operation puts or archives a task, read from the
// claim index or from the whole index alike.
func TestInFlightFollowsTheOperation(t *testing.T) {
	for _, whole := range []bool{false, true} {
		s := initStore(t)
		mustUpdate(t, s, putTasks(claimed("task-1", "coder-1"), task("task-2"), claimed("task-3", "coder-3")))
		ids := func(tx *Tx) []string {
			t.Helper()
			fl, err := tx.InFlight()
			if err != nil {
				t.Fatal(err)
			}
			return slices.Sorted(maps.Keys(fl))
		}
		mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
			if whole {
				if _, err := tx.Index(); err != nil {
					return nil, err
				}
			}
			if got := ids(tx); !slices.Equal(got, []string{"task-1", "task-3"}) || !slices.Equal(ids(tx), got) {
				t.Errorf("whole index %v: in flight %v, want task-1 and task-3", whole, got)
			}
			tx.PutTask(claimed("task-2", "coder-2"))
			if got := ids(tx); !slices.Equal(got, []string{"task-1", "task-2", "task-3"}) {
				t.Errorf("whole index %v: after a claim, in flight %v", whole, got)
			}
			x, err := tx.MustTask("task-1")
			if err != nil {
				return nil, err
			}
			x.Status = contracts.Abandoned
			tx.ArchiveTask(x)
			if got := ids(tx); !slices.Equal(got, []string{"task-2", "task-3"}) {
				t.Errorf("whole index %v: after an archive, in flight %v", whole, got)
			}
			return nil, nil
		}})
	}
}
