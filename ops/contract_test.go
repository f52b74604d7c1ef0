package ops_test

import (
	"context"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// TestNewRulesAreDeterministic applies each operation this contract added
// or changed twice on the same parent state, with the same clock: the state
// it writes must be the same, as a server re-applying it to verify it finds
// (the files a few of them also write for the human, and the kill-switch
// files they check, are outside the operation).
func TestNewRulesAreDeterministic(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	planner, reviewer := human.As("planner-1", 0), human.As("code-reviewer-1", 0)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tip := func() refstore.Hash {
		h, _, err := human.Repo.ReadRef(refstore.StateRef)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// twice runs op, puts the state back where it was and runs it again;
	// both runs must write the same tree (and refuse alike).
	twice := func(name string, op func() error) {
		t.Helper()
		parent := tip()
		err1 := op()
		first := tip()
		tree1 := git(t, root, "rev-parse", first.String()+"^{tree}")
		git(t, root, "update-ref", refstore.StateRef, parent.String(), first.String())
		err2 := op()
		tree2 := git(t, root, "rev-parse", tip().String()+"^{tree}")
		if (err1 == nil) != (err2 == nil) || tree1 != tree2 {
			t.Errorf("%s: first run %v wrote %s, second %v wrote %s", name, err1, tree1, err2, tree2)
		}
		if first == parent {
			t.Errorf("%s wrote nothing", name)
		}
	}

	must(planner.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}))
	must(planner.AddTask(ctx, ops.AddTaskRequest{Task: task("b")}))
	twice("task edit", func() error {
		p := 1
		_, err := planner.EditTask(ctx, ops.EditTaskRequest{Task: "b", Priority: &p})
		return err
	})

	// Five rejections of a: the third blocks it, the fifth pauses the team.
	coder := human.As("coder-1", 0)
	for i := 1; i <= contracts.PauseRejections; i++ {
		if i > contracts.RejectionThreshold { // the third and later rejections blocked it
			must(planner.Unblock(ctx, ops.UnblockRequest{Task: "a"}))
		}
		must(coder.Claim(ctx, ops.ClaimRequest{Task: "a"}))
		commitIn(t, root, "a", "a.txt", time.Duration(i).String())
		checkpoint(t, coder, "a")
		must(coder.Submit(ctx, ops.SubmitRequest{Task: "a"}))
		must(reviewer.Review(ctx, ops.ReviewRequest{Task: "a"}))
		reject := func() error {
			_, err := reviewer.Verdict(ctx, ops.VerdictRequest{Task: "a", Reason: "reason " + time.Duration(i).String(), Feedback: "fix it"})
			return err
		}
		if i >= contracts.RejectionThreshold {
			twice("rejection "+time.Duration(i).String(), reject)
		} else if err := reject(); err != nil {
			t.Fatal(err)
		}
	}
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Task("a"); a.Status != contracts.Blocked || st.Control == nil || st.Control.Mode != contracts.ModePaused {
		t.Fatalf("after five rejections: a %s, control %+v", a.Status, st.Control)
	}
	twice("analyze", func() error { _, err := planner.Analyze(ctx, ops.Call{}); return err })
	twice("resolve", func() error {
		_, err := human.ResolveBreaker(ctx, ops.ResolveRequest{Resolution: "rescoped"})
		return err
	})
	must(human.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModeRunning}))

	// Hypothesis exhaustion: the takeover by a third coder blocks b.
	at := func(agent string, d time.Duration) *ops.Service {
		svc, err := ops.New(human.Repo, ops.Options{Agent: agent, Clock: func() time.Time { return testNow.Add(d) }, Budget: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	c1, c2, c3 := at("coder-1", 0), at("coder-2", time.Hour), at("coder-3", 2*time.Hour)
	must(planner.AddTask(ctx, ops.AddTaskRequest{Task: task("c")}))
	must(c1.Claim(ctx, ops.ClaimRequest{Task: "c", NoWorktree: true}))
	must(c2.Claim(ctx, ops.ClaimRequest{Task: "c", NoWorktree: true}))
	twice("exhaustion", func() error {
		_, err := c3.Claim(ctx, ops.ClaimRequest{Task: "c", NoWorktree: true})
		if ops.Class(err) != contracts.CodeInvalid {
			t.Errorf("exhausted claim: %v", err)
		}
		return nil
	})

	must(human.Discover(ctx, ops.DiscoverRequest{Description: "leak", Urgency: "immediate"}))
	twice("discover convert", func() error {
		_, err := planner.ConvertDiscovery(ctx, ops.ConvertRequest{Discovery: 1, Task: "c"})
		return err
	})
	twice("sprint metrics", func() error { _, err := planner.SprintMetrics(ctx, ops.Call{}); return err })
}
