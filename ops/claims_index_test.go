package ops_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// withFile returns a commit with commit's parent and message, dated as
// it is, whose tree is commit's with the file at path replaced by text,
// made with git's own plumbing as a forger would.
func withFile(t *testing.T, root string, commit refstore.Hash, path, text string) string {
	t.Helper()
	c := git(t, root, "cat-file", "-p", commit.String())
	var parent, msg string
	head, body, _ := strings.Cut(c, "\n\n")
	for _, l := range strings.Split(head, "\n") {
		if p, ok := strings.CutPrefix(l, "parent "); ok {
			parent = p
		}
	}
	msg = body
	idx := t.TempDir() + "/index"
	env := func(args ...string) string {
		t.Helper()
		return gitEnvIn(t, root, []string{"GIT_INDEX_FILE=" + idx}, "", args...)
	}
	env("read-tree", commit.String())
	blob := gitEnvIn(t, root, nil, text, "hash-object", "-w", "--stdin")
	env("update-index", "--cacheinfo", "100644,"+blob+","+path)
	tree := env("write-tree")
	when := git(t, root, "log", "-1", "--format=%aI", commit.String())
	t.Setenv("GIT_AUTHOR_DATE", when)
	t.Setenv("GIT_COMMITTER_DATE", when)
	return gitEnvIn(t, root, nil, msg, "commit-tree", tree, "-p", parent)
}

// TestForgedClaimIndexRefused: the claim index is part of what a claim's
// replay makes. A claim commit whose claims/inflight leaves out the task
// it claimed (so that its coder would look free to claim a second one) is
// refused by validate --history, and a coder's claim on top of it stops
// with exit 4 instead of trusting it; so is a queue that offers a CLAIMED
// task as UNCLAIMED.
func TestForgedClaimIndexRefused(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	planner, coder := human.As("planner-1", 0), human.As("coder-1", 0)
	for _, id := range []string{"a", "b", "c"} {
		ok(planner.AddTask(ctx, ops.AddTaskRequest{Task: task(id)}))
	}
	ok(coder.Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}))
	claim := stateTip(t, human)
	if got := git(t, root, "show", claim.String()+":claims/inflight"); !strings.Contains(got, "\na\tCLAIMED\t") {
		t.Fatalf("claims/inflight after the claim:\n%s", got)
	}
	queue := git(t, root, "ls-tree", "-r", "--name-only", claim.String(), "claims/queued/")
	chunk := strings.Split(queue, "\n")[0]
	honest := git(t, root, "show", claim.String()+":"+chunk)
	if strings.Contains(honest, "\ta\t") || !strings.Contains(honest, "\tb\t") {
		t.Fatalf("the queue after a's claim:\n%s", honest)
	}

	forgeries := []struct {
		what, path, text string
	}{
		{"an in-flight list without the claimed task", "claims/inflight",
			strings.SplitAfter(git(t, root, "show", claim.String()+":claims/inflight"), "\n")[0]},
		{"a queue that offers the claimed task", chunk,
			honest + queueLineFor(t, honest, "b", "a")},
	}
	for _, f := range forgeries {
		forged := withFile(t, root, claim, f.path, f.text)
		git(t, root, "update-ref", refstore.StateRef, forged)
		checker := serviceAt(t, human, "", time.Minute)
		v, err := checker.Validate(ctx, ops.ValidateRequest{History: true})
		if err != nil {
			t.Fatal(err)
		}
		wantRefused(t, f.what, v.Problems, "its change is not what claim by coder-1 makes")
		_, err = human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true})
		if ops.Class(err) != contracts.CodeInconsistent {
			t.Errorf("%s: coder-1's claim of b on it: %v, want exit 4", f.what, err)
		}
		_, err = human.As("coder-2", 0).Claim(ctx, ops.ClaimRequest{NoWorktree: true})
		if ops.Class(err) != contracts.CodeInconsistent {
			t.Errorf("%s: coder-2's claim of the best task on it: %v, want exit 4", f.what, err)
		}
		git(t, root, "update-ref", refstore.StateRef, claim.String())
	}
}

// gitEnvIn runs git in dir with env added and stdin, and returns its
// output without the final newline.
func gitEnvIn(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// queueLineFor is the line of task from in a chunk, rewritten for task to.
func queueLineFor(t *testing.T, chunk, from, to string) string {
	t.Helper()
	for _, l := range strings.Split(chunk, "\n") {
		if strings.Contains(l, "!"+from+"\t"+from+"\t") {
			l = strings.ReplaceAll(l, "!"+from+"\t"+from+"\t", "!"+to+"\t"+to+"\t")
			return l + "\n"
		}
	}
	t.Fatalf("no line of %s in\n%s", from, chunk)
	return ""
}

// TestOldBoardTakesClaimIndex: a board an older git-liza wrote (rule set
// 4, no claims/) opens and takes operations: the first one under the
// current rules writes the claim index whole, the next ones keep it, the
// best-task claim picks what the whole board says, and the history,
// old commits and new, verifies.
func TestOldBoardTakesClaimIndex(t *testing.T) {
	human, root := newRepo(t)
	ctx := context.Background()
	ok := succeeds(t)
	old := func(agent string) *ops.Service {
		return serviceAt(t, human, agent, 0).UnderRules(contracts.RulesLastMile)
	}
	ok(old("").Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}))
	for _, id := range []string{"a", "b", "c", "d"} {
		x := task(id)
		if id == "c" {
			x.Priority = 1
		}
		ok(old("planner-1").AddTask(ctx, ops.AddTaskRequest{Task: x}))
	}
	ok(old("coder-1").Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}))
	if out := git(t, root, "ls-tree", "--name-only", refstore.StateRef); strings.Contains(out, "claims") {
		t.Fatalf("the old board has a claim index:\n%s", out)
	}

	// This git-liza: the best task is c (priority 1), then b.
	r, err := human.As("coder-2", 0).Claim(ctx, ops.ClaimRequest{NoWorktree: true})
	if err != nil || r.ID != "c" {
		t.Fatalf("coder-2's claim on the old board: %+v %v, want c", r, err)
	}
	if got := git(t, root, "show", refstore.StateRef+":claims/inflight"); !strings.Contains(got, "\na\tCLAIMED\t") || !strings.Contains(got, "\nc\tCLAIMED\t") {
		t.Fatalf("claims/inflight written whole:\n%s", got)
	}
	r, err = human.As("coder-3", 0).Claim(ctx, ops.ClaimRequest{NoWorktree: true})
	if err != nil || r.ID != "b" {
		t.Fatalf("coder-3's claim: %+v %v, want b", r, err)
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "d", NoWorktree: true}); ops.Class(err) != contracts.CodeInvalid || !strings.Contains(err.Error(), "coder-1 already holds task a") {
		t.Fatalf("coder-1's second claim: %v", err)
	}
	checker := serviceAt(t, human, "", time.Minute)
	if v, err := checker.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history: %v %+v", err, v)
	}
	if v, err := checker.Validate(ctx, ops.ValidateRequest{}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate: %v %+v", err, v)
	}
}

// TestClaimIndexCarriedByOlderBuild: an older git-liza working in the same
// repository (its commits under rule set 4) keeps claims/ as it found it,
// so the index no longer says what the tasks do. This git-liza does not
// read an index its commit did not keep: coder-1, which took a under the
// older build, may not claim b, the best-task claim passes over a, and
// the next operation writes the index anew.
func TestClaimIndexCarriedByOlderBuild(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	for _, id := range []string{"a", "b"} {
		x := task(id)
		if id == "a" {
			x.Priority = 1
		}
		ok(human.As("planner-1", 0).AddTask(ctx, ops.AddTaskRequest{Task: x}))
	}
	stale := git(t, root, "show", refstore.StateRef+":claims/inflight")
	ok(human.As("coder-1", 0).UnderRules(contracts.RulesLastMile).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}))
	if got := git(t, root, "show", refstore.StateRef+":claims/inflight"); got != stale {
		t.Fatalf("the older build changed claims/inflight:\n%s", got)
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true}); ops.Class(err) != contracts.CodeInvalid || !strings.Contains(err.Error(), "coder-1 already holds task a") {
		t.Fatalf("coder-1's claim of b beside a: %v", err)
	}
	r, err := human.As("coder-2", 0).Claim(ctx, ops.ClaimRequest{NoWorktree: true})
	if err != nil || r.ID != "b" {
		t.Fatalf("coder-2's claim of the best task: %+v %v, want b", r, err)
	}
	got := git(t, root, "show", refstore.StateRef+":claims/inflight")
	if !strings.Contains(got, "\na\tCLAIMED\tcoder-1") && !strings.Contains(got, "\na\tCLAIMED\t") {
		t.Fatalf("claims/inflight after the next operation:\n%s", got)
	}
	if v, err := human.Validate(ctx, ops.ValidateRequest{}); err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate: %v %+v", err, v)
	}
}
