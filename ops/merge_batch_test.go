package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestBatchForged: a batch of merges is replay-verified as strictly as
// each merge alone. With write access to the state, a forger records a
// batch whose merge commit holds more than the merge of the reviewed
// commit, or one whose task is marked MERGED at a merge commit outside the
// batch's chain: validate --history refuses both, and takes the honest
// batch.
func TestBatchForged(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	reviewer := human.As("code-reviewer-1", 0)
	review := map[string]string{}
	for i, id := range []string{"z", "a", "b", "c"} {
		if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task(id)}); err != nil {
			t.Fatal(err)
		}
		coder := human.As("coder-"+string(rune('1'+i)), 0)
		if _, err := coder.Claim(ctx, ops.ClaimRequest{Task: id}); err != nil {
			t.Fatal(err)
		}
		checkpoint(t, coder, id)
		commitIn(t, root, id, id+".txt", id+"\n")
		if _, err := coder.Submit(ctx, ops.SubmitRequest{Task: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := reviewer.Review(ctx, ops.ReviewRequest{Task: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := reviewer.Verdict(ctx, ops.VerdictRequest{Task: id, Approve: true}); err != nil {
			t.Fatal(err)
		}
		review[id] = git(t, root, "rev-parse", "task/"+id)
	}
	// z lands alone, so that a, b and c need merge commits.
	if _, err := reviewer.Merge(ctx, ops.MergeRequest{Task: "z"}); err != nil {
		t.Fatal(err)
	}
	old := git(t, root, "rev-parse", "integration")
	state := git(t, root, "rev-parse", "refs/liza/state")
	merge := func(onto, commit string) string {
		tree := git(t, root, "merge-tree", "--write-tree", onto, commit)
		return git(t, root, "commit-tree", tree, "-p", onto, "-p", commit, "-m", "merge")
	}
	mA := merge(old, review["a"])
	mB := merge(mA, review["b"])
	mC := merge(mB, review["c"])
	// b's merge commit with c's file in it besides b's.
	extra := git(t, root, "commit-tree", git(t, root, "merge-tree", "--write-tree", mB, review["c"]), "-p", mA, "-p", review["b"], "-m", "merge")
	// c merged onto a, beside b rather than onto it.
	beside := merge(mA, review["c"])

	for _, tc := range []struct {
		name   string
		merges [][3]string
		want   string // "" for a batch that verifies
	}{
		{"a merge commit holding more than the reviewed commit", [][3]string{{"a", review["a"], mA}, {"b", review["b"], extra}, {"c", review["c"], merge(extra, review["c"])}},
			"task b in the batch: the merge commit " + extra[:12] + " holds other changes than the merge of " + mA[:12] + " and " + review["b"][:12]},
		{"a task MERGED off the batch's chain", [][3]string{{"a", review["a"], mA}, {"b", review["b"], mB}, {"c", review["c"], beside}},
			"task c in the batch: the merge commit " + beside[:12] + " is not a merge of " + mB[:12] + " and the approved commit " + review["c"][:12]},
		{"a merge not of the approved commit", [][3]string{{"a", review["a"], mA}, {"b", review["b"], merge(mA, review["c"])}},
			"task b in the batch: the merge commit"},
		{"the honest batch", [][3]string{{"a", review["a"], mA}, {"b", review["b"], mB}, {"c", review["c"], mC}}, ""},
	} {
		git(t, root, "update-ref", "refs/liza/state", state)
		git(t, root, "update-ref", "refs/heads/integration", old)
		if err := reviewer.WriteBatch(ctx, old, tc.merges); err != nil {
			t.Fatalf("%s: writing it: %v", tc.name, err)
		}
		v, err := human.Validate(ctx, ops.ValidateRequest{History: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, p := range v.Problems {
			got = append(got, p.Msg)
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: refused: %v", tc.name, got)
		case tc.want != "" && !anyContains(got, tc.want):
			t.Errorf("%s: problems %q, want one saying %q", tc.name, got, tc.want)
		}
	}
	// The honest batch left every task MERGED at its own merge commit.
	for id, want := range map[string]string{"a": mA, "b": mB, "c": mC} {
		snap, err := human.Snapshot(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		tk, err := snap.Task(id)
		if err != nil {
			t.Fatal(err)
		}
		if tk == nil || tk.Status != contracts.Merged || tk.MergeCommit != want {
			t.Errorf("task %s after the batch: %+v, want MERGED at %s", id, tk, want)
		}
	}
}

func anyContains(l []string, s string) bool {
	for _, x := range l {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
