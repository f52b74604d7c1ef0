package ops_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
	coder := 0
	prev, err := svc.As("coder-1", 0).Ready(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(prev) == 0 {
		t.Fatal("nothing ready on a board of unclaimed tasks")
	}
	for len(prev) > 0 {
		coder++
		as := svc.As(fmt.Sprintf("coder-%d", coder), 0)
		shown, err := as.Ready(ctx)
		if err != nil {
			t.Fatal(err)
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
		if prev, err = svc.As(fmt.Sprintf("coder-%d", coder+1), 0).Ready(ctx); err != nil {
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
	shown, err := later.Ready(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) == 0 || shown[0].Kind != ops.ClaimExpired {
		t.Fatalf("an hour later: %+v, want expired claims to reclaim", shown)
	}
	got, err := later.Claim(ctx, ops.ClaimRequest{NoWorktree: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != shown[0].ID {
		t.Fatalf("the late claim took %s, the head shown is %s", got.ID, shown[0].ID)
	}
}
