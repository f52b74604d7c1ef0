package ops_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Ready is the claim order: on a board of mixed priorities and
// dependencies, each next coder's claim without ID takes the head of the
// list it was shown, and the list after the claim is the rest of the one
// before; tasks waiting on unmerged ones are never listed; claims whose
// lease ran out come last, and are what a claim takes once nothing else is
// left.
func TestReadyIsClaimOrder(t *testing.T) {
	ctx := context.Background()
	svc, root := newBoard(t)
	prio := []int{3, 1, 2, 1, 5, 2, 4, 1, 3, 2}
	for i, p := range prio {
		tk := task(fmt.Sprintf("t%d", i+1))
		tk.Priority = p
		if i%4 == 3 {
			tk.DependsOn = []string{fmt.Sprintf("t%d", i)} // waits on the one before
		}
		if _, err := svc.AddTask(ctx, ops.AddTaskRequest{Task: tk}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(rs []ops.ReadyTask) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	waiting := map[string]bool{"t4": true, "t8": true}
	readyAll := func(as *ops.Service) ([]ops.ReadyTask, error) {
		out, more, err := as.Ready(ctx, 0)
		if err == nil && more != 0 {
			t.Fatalf("no limit, yet %d more than the %d listed", more, len(out))
		}
		return out, err
	}
	coder := 0
	prev, err := readyAll(svc.As("coder-1", 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(prev) == 0 {
		t.Fatal("nothing ready on a board of unclaimed tasks")
	}
	for len(prev) > 0 {
		coder++
		as := svc.As(fmt.Sprintf("coder-%d", coder), 0)
		shown, err := readyAll(as)
		if err != nil {
			t.Fatal(err)
		}
		// A limit lists the head of the same list and counts the rest.
		head, more, err := as.Ready(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n := min(2, len(shown)); !slices.Equal(ids(head), ids(shown[:n])) || more != len(shown)-n {
			t.Fatalf("coder-%d: limit 2 lists %v and %d more; the whole list is %v", coder, ids(head), more, ids(shown))
		}
		for _, r := range shown {
			if waiting[r.ID] {
				t.Fatalf("%s waits on an unmerged task but is listed: %v", r.ID, ids(shown))
			}
		}
		if !slices.Equal(ids(shown), ids(prev)) {
			t.Fatalf("coder-%d is shown %v, the last coder's list after its claim was %v", coder, ids(shown), ids(prev))
		}
		got, err := as.Claim(ctx, ops.ClaimRequest{NoWorktree: true})
		if err != nil {
			t.Fatalf("coder-%d: %v (shown %v)", coder, err, ids(shown))
		}
		if got.ID != shown[0].ID {
			t.Fatalf("coder-%d claimed %s; the head of what it was shown is %s (%v)", coder, got.ID, shown[0].ID, ids(shown))
		}
		if prev, err = readyAll(svc.As(fmt.Sprintf("coder-%d", coder+1), 0)); err != nil {
			t.Fatal(err)
		}
		if len(prev) > 0 && !slices.Equal(ids(prev), ids(shown)[1:]) {
			t.Fatalf("after %s was claimed the list is %v, want %v", got.ID, ids(prev), ids(shown)[1:])
		}
	}

	// An hour later every lease has run out: the expired claims are listed
	// as reclaimable, and a claim takes the head.
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	later, err := ops.New(repo, ops.Options{Agent: "coder-99", Clock: func() time.Time { return testNow.Add(time.Hour) }, Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	shown, err := readyAll(later)
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) == 0 || shown[0].Kind != ops.ClaimExpired {
		t.Fatalf("an hour later: %+v, want expired claims to reclaim", shown)
	}
	// Each next late coder's claim takes the head of what it is shown, and
	// the list after it is the rest: the expired claims are listed in the
	// order claims take them, to the last.
	for n := 0; len(shown) > 0; n++ {
		as := later.As(fmt.Sprintf("coder-%d", 100+n), 0)
		got, err := as.Claim(ctx, ops.ClaimRequest{NoWorktree: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != shown[0].ID || shown[0].Kind != ops.ClaimExpired {
			t.Fatalf("late claim %d took %s; the head shown is %+v", n, got.ID, shown[0])
		}
		next, err := readyAll(later.As(fmt.Sprintf("coder-%d", 101+n), 0))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(next), ids(shown)[1:]) {
			t.Fatalf("after the late claim of %s the list is %v, want %v", got.ID, ids(next), ids(shown)[1:])
		}
		shown = next
	}
}

// A dependency that left the live board is settled from the archive: an
// archived MERGED task is waited on no more, an archived ABANDONED one is
// named with its status (nothing will ever merge it), and one the board
// does not hold at all is unknown.
func TestWaitsOnArchived(t *testing.T) {
	ctx := context.Background()
	human, root := newBoard(t)
	coder, reviewer := human.As("coder-1", 0), human.As("code-reviewer-1", 0)
	for _, tk := range []contracts.Task{task("a"), task("gone"), task("b", "a", "gone")} {
		if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: tk}); err != nil {
			t.Fatal(err)
		}
	}
	waits := func() []ops.Waiting {
		t.Helper()
		b, err := human.Status(ctx, ops.StatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, bt := range b.Tasks {
			if bt.ID == "b" {
				return bt.WaitsOn
			}
		}
		t.Fatal("b is not on the board")
		return nil
	}
	want := []ops.Waiting{{ID: "a", Status: contracts.Unclaimed}, {ID: "gone", Status: contracts.Unclaimed}}
	if got := waits(); !slices.Equal(got, want) {
		t.Fatalf("b waits on %v, want %v", got, want)
	}
	// a goes through to MERGED; gone is abandoned; both are archived.
	if _, err := coder.Claim(ctx, ops.ClaimRequest{Task: "a"}); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, coder, "a")
	commitIn(t, root, "a", "a.txt", "done\n")
	steps := []func() error{
		func() error { _, err := coder.Submit(ctx, ops.SubmitRequest{Task: "a"}); return err },
		func() error { _, err := reviewer.Review(ctx, ops.ReviewRequest{Task: "a"}); return err },
		func() error {
			_, err := reviewer.Verdict(ctx, ops.VerdictRequest{Task: "a", Approve: true})
			return err
		},
		func() error { _, err := reviewer.Merge(ctx, ops.MergeRequest{Task: "a"}); return err },
		func() error {
			_, err := human.Abandon(ctx, ops.AbandonRequest{Task: "gone", Reason: "not needed"})
			return err
		},
		func() error { _, err := human.Archive(ctx, ops.ArchiveRequest{}); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want = []ops.Waiting{{ID: "gone", Status: contracts.Abandoned}}
	if got := waits(); !slices.Equal(got, want) {
		t.Fatalf("after archiving: b waits on %v, want %v", got, want)
	}
}
