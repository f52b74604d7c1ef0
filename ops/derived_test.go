package ops_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/ops"
)

// TestDerivedTipRemembered: a board that records no integration tip (made
// under rule set 2, or imported without it) finds the tip in its history,
// reading back commit by commit up to its last merge or its init: on a
// board with a long history, every claim read hundreds of commits. What
// was found for a state commit is remembered in the trust directory, and
// the next operation reads back only as far as that commit.
func TestDerivedTipRemembered(t *testing.T) {
	human, root, _ := oldBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	// The first claim reads back to the init, and remembers it.
	ok(serviceAt(t, human, "coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a"}))
	memo := filepath.Join(cas.TrustDir(human.Repo.CommonDir), "derived-tip")
	if _, err := os.Stat(memo); err != nil {
		t.Fatalf("nothing remembered: %v", err)
	}

	// What is remembered is what the next claim goes by: told that the
	// tip's history put the branch elsewhere, it refuses.
	elsewhere := git(t, root, "commit-tree", "-m", "elsewhere", "integration^{tree}")
	if err := os.WriteFile(memo, []byte(fmt.Sprintf("%s 1 0 %s\n", stateTip(t, human), elsewhere)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := serviceAt(t, human, "coder-2", 0).Claim(ctx, ops.ClaimRequest{Task: "b"})
	var moved *ops.IntegrationMismatch
	if !errors.As(err, &moved) || moved.Recorded.String() != elsewhere {
		t.Fatalf("a claim on a remembered tip elsewhere: %v", err)
	}

	// A remembered line that does not parse is read past: the history
	// says where the branch is.
	if err := os.WriteFile(memo, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok(serviceAt(t, human, "coder-2", 0).Claim(ctx, ops.ClaimRequest{Task: "b"}))
	ok(serviceAt(t, human, "coder-3", 0).Claim(ctx, ops.ClaimRequest{Task: "c"}))
}

// TestDerivedTipRewrittenRarely: the remembered answer is not written again
// for every operation: the next few read back to it (a commit or two), and
// only an operation derivedRewrite commits past it remembers its own tip.
// The answer stays right meanwhile.
func TestDerivedTipRewrittenRarely(t *testing.T) {
	human, _, _ := oldBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	ok(serviceAt(t, human, "coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}))
	memo := filepath.Join(cas.TrustDir(human.Repo.CommonDir), "derived-tip")
	first, err := os.ReadFile(memo)
	if err != nil {
		t.Fatalf("nothing remembered: %v", err)
	}
	ok(serviceAt(t, human, "coder-2", 0).Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true}))
	if again, _ := os.ReadFile(memo); string(again) != string(first) {
		t.Fatalf("rewritten one commit on: %q, was %q", again, first)
	}
	for i := 0; i < 9; i++ {
		ok(serviceAt(t, human, "", 0).AddTask(ctx, ops.AddTaskRequest{Task: task(fmt.Sprintf("more-%d", i))}))
	}
	before := stateTip(t, human)
	ok(serviceAt(t, human, "coder-3", 0).Claim(ctx, ops.ClaimRequest{Task: "c", NoWorktree: true}))
	later, _ := os.ReadFile(memo)
	if got := strings.Fields(string(later)); len(got) != 4 || got[0] != before.String() {
		t.Fatalf("eleven commits on, remembered %q; want the answer for %s", later, before)
	}
}

// TestDerivedNothingRewrittenRarely: on an imported board whose history has
// no merge and no init, the answer is "nothing", and it too is not written
// again by the operations right after it (the bench's boards are such, and
// the write was a tenth of a claim).
func TestDerivedNothingRewrittenRarely(t *testing.T) {
	svc, _ := newRepo(t)
	ctx := context.Background()
	seed := "version: 1\ngoal: {id: goal-1, description: g, status: IN_PROGRESS, created: \"2026-01-17T09:00:00Z\"}\n" +
		"config: {integration_branch: integration}\nsprint: {id: sprint-1, goal_ref: goal-1, status: IN_PROGRESS, timeline: {started: \"2026-01-17T09:00:00Z\"}}\nagents: {}\ntasks:\n"
	for i := 1; i <= 4; i++ {
		seed += fmt.Sprintf("  - {id: t%d, description: d, priority: 1, spec_ref: specs/vision.md, done_when: d, scope: s, status: UNCLAIMED, created: \"2026-01-17T09:00:00Z\", depends_on: [], iteration: 0, history: []}\n", i)
	}
	if _, err := svc.Import(ctx, ops.ImportRequest{Data: []byte(seed), Name: "seed.yaml"}); err != nil {
		t.Fatal(err)
	}
	ok := succeeds(t)
	ok(serviceAt(t, svc, "coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "t1", NoWorktree: true}))
	memo := filepath.Join(cas.TrustDir(svc.Repo.CommonDir), "derived-tip")
	first, err := os.ReadFile(memo)
	if err != nil || !strings.HasSuffix(string(first), " 0 0 -\n") {
		t.Fatalf("remembered %q, %v; want nothing found", first, err)
	}
	ok(serviceAt(t, svc, "coder-2", 0).Claim(ctx, ops.ClaimRequest{Task: "t2", NoWorktree: true}))
	ok(serviceAt(t, svc, "coder-3", 0).Claim(ctx, ops.ClaimRequest{Task: "t3", NoWorktree: true}))
	if again, _ := os.ReadFile(memo); string(again) != string(first) {
		t.Fatalf("rewritten two commits on: %q, was %q", again, first)
	}
}
