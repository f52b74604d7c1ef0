package ops_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// testNow is the clock of every test board.
var testNow = time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)

// newBoard makes a repository with one commit (a spec and an integration
// test that checks a file of the task) and a blackboard, and returns the
// operations on it for the human operator and the repository's directory.
func newBoard(t *testing.T) (*ops.Service, string) {
	t.Helper()
	svc, root := newRepo(t)
	if _, err := svc.Init(context.Background(), ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}); err != nil {
		t.Fatal(err)
	}
	return svc, root
}

// newRepo is newBoard's repository and operations, without a blackboard.
func newRepo(t *testing.T) (*ops.Service, string) {
	t.Helper()
	root := testrepo.New(t, map[string]string{"scripts/integration-test.sh": "#!/bin/sh\n! grep -q broken *.txt 2>/dev/null\n"})
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ops.New(repo, ops.Options{Clock: func() time.Time { return testNow }, Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return svc, root
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// task is a task ready to add.
func task(id string, deps ...string) contracts.Task {
	return contracts.Task{ID: id, Description: "do " + id, SpecRef: "specs/vision.md", DoneWhen: id + ".txt exists",
		Scope: "IN: " + id + ".txt", Priority: 3, Status: contracts.Unclaimed, DependsOn: deps}
}

// commitIn commits a file in a task's worktree.
func commitIn(t testing.TB, root, id, name, text string) {
	t.Helper()
	wt := filepath.Join(root, ".worktrees", id)
	write(t, filepath.Join(wt, name), text)
	git(t, wt, "add", name)
	git(t, wt, "commit", "-q", "-m", "work on "+id)
}

// TestOperations runs operations in order on one blackboard, as a team
// would, each by its actor: what is allowed lands, and each refusal comes
// back with its exit-code class and message, changing nothing.
func TestOperations(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	planner, coder1, coder2, reviewer := human.As("planner-1", 0), human.As("coder-1", 0), human.As("coder-2", 0), human.As("code-reviewer-1", 0)
	steps := []struct {
		name string
		run  func() error
		code contracts.Code // 0: must succeed
		msg  string         // a part of the refusal
	}{
		{"planner adds a", func() error { _, err := planner.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); return err }, 0, ""},
		{"human adds b after a", func() error { _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("b", "a")}); return err }, 0, ""},
		{"a task id that is a path", func() error {
			_, err := planner.AddTask(ctx, ops.AddTaskRequest{Task: task("../x")})
			return err
		}, contracts.CodeInvalid, "invalid task id"},
		{"a task twice", func() error { _, err := planner.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); return err }, contracts.CodeInvalid, "task a already exists"},
		{"a coder may not plan", func() error { _, err := coder1.AddTask(ctx, ops.AddTaskRequest{Task: task("c")}); return err }, contracts.CodeInvalid, "may not add"},
		{"an unknown dependency", func() error {
			_, err := planner.AddTask(ctx, ops.AddTaskRequest{Task: task("c", "nosuch")})
			return err
		}, contracts.CodeInvalid, "depends on unknown task nosuch"},
		{"the human may not claim", func() error { _, err := human.Claim(ctx, ops.ClaimRequest{Task: "a"}); return err }, contracts.CodeInvalid, "the human operator may not claim"},
		{"b waits for a", func() error { _, err := coder1.Claim(ctx, ops.ClaimRequest{Task: "b"}); return err }, contracts.CodeInvalid, "depends on a, which is UNCLAIMED"},
		{"coder-1 claims the best task", func() error {
			r, err := coder1.Claim(ctx, ops.ClaimRequest{})
			if err == nil && (r.ID != "a" || r.Kind != string(ops.ClaimFresh) || r.Worktree != ".worktrees/a") {
				t.Errorf("claim = %+v, want a claimed into .worktrees/a", r)
			}
			if err == nil {
				checkpoint(t, coder1, "a")
			}
			return err
		}, 0, ""},
		{"coder-2 cannot take a live claim", func() error { _, err := coder2.Claim(ctx, ops.ClaimRequest{Task: "a"}); return err }, contracts.CodeInvalid, "claimed by coder-1 until"},
		{"nothing to submit yet", func() error { _, err := coder1.Submit(ctx, ops.SubmitRequest{Task: "a"}); return err }, contracts.CodeInvalid, "is the base commit: there is nothing to review"},
		{"coder-2 may not submit coder-1's task", func() error {
			commitIn(t, root, "a", "a.txt", "a\n")
			_, err := coder2.Submit(ctx, ops.SubmitRequest{Task: "a"})
			return err
		}, contracts.CodeInvalid, "assigned to coder-1, not coder-2"},
		{"coder-1 submits", func() error { _, err := coder1.Submit(ctx, ops.SubmitRequest{Task: "a"}); return err }, 0, ""},
		{"a coder may not review", func() error { _, err := coder2.Review(ctx, ops.ReviewRequest{Task: "a"}); return err }, contracts.CodeInvalid, "may not review"},
		{"a verdict needs the review lease", func() error {
			_, err := reviewer.Verdict(ctx, ops.VerdictRequest{Task: "a", Approve: true})
			return err
		}, contracts.CodeInvalid, "does not hold the review of task a"},
		{"the reviewer takes the review", func() error { _, err := reviewer.Review(ctx, ops.ReviewRequest{}); return err }, 0, ""},
		{"a rejection needs a reason", func() error { _, err := reviewer.Verdict(ctx, ops.VerdictRequest{Task: "a"}); return err }, contracts.CodeInvalid, "a rejection needs --reason"},
		{"the reviewer approves", func() error {
			r, err := reviewer.Verdict(ctx, ops.VerdictRequest{Task: "a", Approve: true})
			if err == nil && r.Status != string(contracts.Approved) {
				t.Errorf("verdict = %+v, want APPROVED", r)
			}
			return err
		}, 0, ""},
		{"a coder may not merge", func() error { _, err := coder1.Merge(ctx, ops.MergeRequest{Task: "a"}); return err }, contracts.CodeInvalid, "may not merge"},
		{"the reviewer merges", func() error {
			r, err := reviewer.Merge(ctx, ops.MergeRequest{Task: "a"})
			if err == nil && git(t, root, "rev-parse", "integration") != r.MergeCommit {
				t.Errorf("integration is not at the merge commit %s", r.MergeCommit)
			}
			return err
		}, 0, ""},
		{"b is claimable now", func() error {
			_, err := coder2.Claim(ctx, ops.ClaimRequest{Task: "b"})
			if err == nil {
				checkpoint(t, coder2, "b")
			}
			return err
		}, 0, ""},
		{"a failing integration test", func() error {
			commitIn(t, root, "b", "b.txt", "broken\n")
			if _, err := coder2.Submit(ctx, ops.SubmitRequest{Task: "b"}); err != nil {
				return err
			}
			if _, err := reviewer.Review(ctx, ops.ReviewRequest{Task: "b"}); err != nil {
				return err
			}
			if _, err := reviewer.Verdict(ctx, ops.VerdictRequest{Task: "b", Approve: true}); err != nil {
				return err
			}
			_, err := reviewer.Merge(ctx, ops.MergeRequest{Task: "b"})
			return err
		}, contracts.CodeInvalid, "scripts/integration-test.sh failed (exit 1); it is INTEGRATION_FAILED"},
		{"a block needs questions", func() error {
			_, err := planner.Block(ctx, ops.BlockRequest{Task: "b", Reason: "why"})
			return err
		}, contracts.CodeInvalid, "needs 1 to 3 --question"},
		{"the planner blocks b", func() error {
			_, err := planner.Block(ctx, ops.BlockRequest{Task: "b", Reason: "why", Questions: []string{"what?"}})
			return err
		}, 0, ""},
		{"a ref held locked past the budget is contention", func() error {
			lock := filepath.Join(root, ".git", "refs", "liza", "state.lock")
			write(t, lock, "")
			defer os.Remove(lock)
			hurried, err := ops.New(planner.Repo, ops.Options{Agent: "planner-1", Clock: planner.Now, Budget: 300 * time.Millisecond})
			if err != nil {
				return err
			}
			_, err = hurried.Unblock(ctx, ops.UnblockRequest{Task: "b"})
			return err
		}, contracts.CodeContention, "gave up after"},
		{"the human aborts", func() error {
			_, err := human.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModeAborted, Reason: "enough"})
			return err
		}, 0, ""},
		{"a pause cannot lift an abort", func() error {
			_, err := human.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModePaused})
			return err
		}, contracts.CodeInvalid, "pause cannot lift an abort"},
		{"an agent may not abort", func() error {
			_, err := coder1.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModeAborted})
			return err
		}, contracts.CodeInvalid, "may not abort"},
	}
	for _, st := range steps {
		before := stateTip(t, human)
		err := st.run()
		switch {
		case st.code == 0 && err != nil:
			t.Fatalf("%s: %v", st.name, err)
		case st.code == 0:
			continue
		case err == nil:
			t.Fatalf("%s: succeeded, want a refusal of class %d", st.name, st.code)
		case ops.Class(err) != st.code:
			t.Fatalf("%s: %v is of class %d, want %d", st.name, err, ops.Class(err), st.code)
		case !strings.Contains(err.Error(), st.msg):
			t.Fatalf("%s: %q does not say %q", st.name, err, st.msg)
		}
		// A refused operation writes nothing, except a failed merge,
		// which records INTEGRATION_FAILED.
		if after := stateTip(t, human); after != before && !strings.Contains(st.msg, "INTEGRATION_FAILED") {
			t.Errorf("%s: refused, but refs/liza/state moved", st.name)
		}
	}
	v, err := human.Validate(ctx, ops.ValidateRequest{History: true})
	if err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history: %v %v", err, v)
	}
}

func stateTip(t *testing.T, s *ops.Service) refstore.Hash {
	t.Helper()
	h, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRequestReplay: a retried request reports the first result and
// writes nothing.
func TestRequestReplay(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	call := ops.Call{RequestID: "k1"}
	first, err := human.AddTask(ctx, ops.AddTaskRequest{Call: call, Task: task("a")})
	if err != nil {
		t.Fatal(err)
	}
	again, err := human.AddTask(ctx, ops.AddTaskRequest{Call: call, Task: task("a")})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Commit != first.Commit || again.ID != "a" {
		t.Errorf("replay = %+v, want the first result (%s) marked replayed", again, first.Commit)
	}
}

// TestStaleGeneration: a supervisor replaced by a newer registration of
// its id can no longer write.
func TestStaleGeneration(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}); err != nil {
		t.Fatal(err)
	}
	first, err := human.As("coder-1", 0).Register(ctx, ops.RegisterRequest{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := human.As("coder-1", 0).Register(ctx, ops.RegisterRequest{Host: "here"}); ops.Class(err) != contracts.CodeInvalid || !strings.Contains(fmt.Sprint(err), "already supervised") {
		t.Fatalf("second register = %v, want a refusal", err)
	}
	second, err := human.As("coder-1", 0).Register(ctx, ops.RegisterRequest{Host: "there", Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if second.Generation != first.Generation+1 {
		t.Fatalf("generations %d then %d", first.Generation, second.Generation)
	}
	_, err = human.As("coder-1", first.Generation).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true})
	if ops.Class(err) != contracts.CodeInvalid || !strings.Contains(fmt.Sprint(err), "stale supervisor") {
		t.Fatalf("claim by the replaced supervisor = %v, want stale", err)
	}
	if _, err := human.As("coder-1", second.Generation).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatalf("claim by the current supervisor: %v", err)
	}
}

// TestInconsistentState: a state moved by hand to a tree that does not
// validate is refused with CodeInconsistent, and not built on.
func TestInconsistentState(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	tip := stateTip(t, human)
	tree := git(t, root, "mktree")
	commit := git(t, root, "commit-tree", tree, "-p", tip.String(), "-m", "by hand")
	git(t, root, "update-ref", refstore.StateRef, commit)
	_, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task("a")})
	if ops.Class(err) != contracts.CodeInconsistent {
		t.Fatalf("add on a broken state = %v (class %d), want class %d", err, ops.Class(err), contracts.CodeInconsistent)
	}
	if got := stateTip(t, human).String(); got != commit {
		t.Errorf("the broken state was built on: %s", got)
	}
}

func TestClass(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want contracts.Code
	}{
		{contracts.Errorf(contracts.CodeContention, "x"), contracts.CodeContention},
		{fmt.Errorf("wrapped: %w", contracts.Errorf(contracts.CodeInconsistent, "x")), contracts.CodeInconsistent},
		{&refstore.GitError{Args: []string{"merge-tree"}, ExitCode: 128}, contracts.CodeGit},
		{context.DeadlineExceeded, contracts.CodeContention},
		// A sync's fast-forward of the local board that another process
		// of the clone (a sibling supervisor's sync) moved meanwhile:
		// tried again, not exit 1 and "cannot sync with the remote" in
		// an unattended team's log.
		{fmt.Errorf("moving refs/liza/state: %w", refstore.ErrStale), contracts.CodeContention},
		{errors.New("anything else"), contracts.CodeInvalid},
	} {
		if got := ops.Class(tc.err); got != tc.want {
			t.Errorf("Class(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestCompareIDs(t *testing.T) {
	ids := []string{"task-10", "task-9", "task-100", "b", "task-2a", "task-2", "a-01", "a-1x"}
	slices.SortFunc(ids, ops.CompareIDs)
	want := []string{"a-01", "a-1x", "b", "task-2", "task-2a", "task-9", "task-10", "task-100"}
	if !slices.Equal(ids, want) {
		t.Errorf("%q, want %q", ids, want)
	}
}
