package ops_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// serviceAt is human's board for agent, with a clock d after testNow.
func serviceAt(t *testing.T, human *ops.Service, agent string, d time.Duration) *ops.Service {
	t.Helper()
	svc, err := ops.New(human.Repo, ops.Options{Agent: agent, Clock: func() time.Time { return testNow.Add(d) }, Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// currentRules is the trailer of a commit made under the current rules.
var currentRules = fmt.Sprintf("Liza-Rules: %d\n", contracts.Rules)

// succeeds fails the test when a write's error is not nil.
func succeeds(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// forged puts on refs/liza/state a commit with the tree and parent of
// commit and its message with from replaced by to, dated as commit is, and
// returns what validate --history (by checker) says of it; the ref goes
// back after.
func forged(t *testing.T, checker *ops.Service, root string, commit refstore.Hash, from, to string) []contracts.Problem {
	t.Helper()
	c, err := checker.Repo.ReadCommit(commit)
	if err != nil {
		t.Fatal(err)
	}
	msg := strings.Replace(c.Message, from, to, 1)
	if msg == c.Message {
		t.Fatalf("%q is not in the message of %s:\n%s", from, commit, c.Message)
	}
	when := c.Author.When.Format(time.RFC3339)
	t.Setenv("GIT_AUTHOR_DATE", when)
	t.Setenv("GIT_COMMITTER_DATE", when)
	tip := git(t, root, "rev-parse", refstore.StateRef)
	id := git(t, root, "commit-tree", c.Tree.String(), "-p", c.Parents[0].String(), "-m", msg)
	git(t, root, "update-ref", refstore.StateRef, id)
	defer git(t, root, "update-ref", refstore.StateRef, tip)
	v, err := checker.Validate(context.Background(), ops.ValidateRequest{History: true})
	if err != nil {
		t.Fatal(err)
	}
	return v.Problems
}

// wantRefused checks that validate --history found one problem, saying
// want.
func wantRefused(t *testing.T, what string, ps []contracts.Problem, want string) {
	t.Helper()
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, want) {
		t.Errorf("%s: validate --history says %+v, want one problem saying %q", what, ps, want)
	}
}

// TestNewKindsReplay: the operations the whole contract added (task edit,
// discover convert, task add --from-discovery, goal new) make commits that
// verify by replay; each one forged (another input, another label, the
// first rules, another agent) is refused.
func TestNewKindsReplay(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	planner, coder, reviewer := human.As("planner-1", 0), human.As("coder-1", 0), human.As("code-reviewer-1", 0)
	ok(planner.AddTask(ctx, ops.AddTaskRequest{Task: task("a")}))
	ok(planner.AddTask(ctx, ops.AddTaskRequest{Task: task("b")}))
	p := 1
	ok(planner.EditTask(ctx, ops.EditTaskRequest{Task: "b", Priority: &p, DependsOn: &[]string{"a"}}))
	edit := stateTip(t, human)
	ok(human.Discover(ctx, ops.DiscoverRequest{Description: "a leak", Urgency: "immediate"}))
	ok(human.Discover(ctx, ops.DiscoverRequest{Description: "a race"}))
	ok(planner.ConvertDiscovery(ctx, ops.ConvertRequest{Discovery: 1, Task: "a"}))
	convert := stateTip(t, human)
	ok(planner.AddTask(ctx, ops.AddTaskRequest{Task: task("c"), FromDiscovery: 2}))
	from := stateTip(t, human)

	ok(coder.Claim(ctx, ops.ClaimRequest{Task: "a"}))
	commitIn(t, root, "a", "a.txt", "a\n")
	checkpoint(t, coder, "a")
	ok(coder.Submit(ctx, ops.SubmitRequest{Task: "a"}))
	ok(reviewer.Review(ctx, ops.ReviewRequest{Task: "a"}))
	ok(reviewer.Verdict(ctx, ops.VerdictRequest{Task: "a", Approve: true}))
	ok(reviewer.Merge(ctx, ops.MergeRequest{Task: "a"}))
	for _, id := range []string{"b", "c"} {
		ok(planner.Abandon(ctx, ops.AbandonRequest{Task: id, Reason: "not needed"}))
	}
	ok(planner.Complete(ctx, ops.Call{}))
	ok(planner.GoalNew(ctx, ops.GoalNewRequest{Goal: "ship more"}))
	goal := stateTip(t, human)

	v, err := human.Validate(ctx, ops.ValidateRequest{History: true})
	if err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history: %v %+v", err, v)
	}
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Goal.ID != "goal-2" || len(st.Tasks) != 0 || len(st.Sprint.Scope.Planned) != 0 || st.Discovered[1].ConvertedToTask != "c" {
		t.Fatalf("after goal new: goal %s, %d live tasks, planned %v, disc-2 %+v", st.Goal.ID, len(st.Tasks), st.Sprint.Scope.Planned, st.Discovered[1])
	}

	for _, c := range []struct {
		what     string
		commit   refstore.Hash
		from, to string
		want     string
	}{
		{"an edit of another field", edit, `"priority":1`, `"priority":2`, "its change is not what edit by planner-1 makes"},
		{"an edit by a coder", edit, "Liza-Agent: planner-1", "Liza-Agent: coder-1", "coder-1 (coder) may not edit"},
		{"an edit under the first rules", edit, currentRules, "", fmt.Sprintf("older than its parent's (%d)", contracts.Rules)},
		{"a conversion of another discovery", convert, `"discovery":1`, `"discovery":2`, "its change is not what convert by planner-1 makes"},
		{"a conversion relabelled a note", convert, "Liza-Kind: convert", "Liza-Kind: note", "Liza-Kind note goes with Liza-Op note, not convert"},
		{"a task from a discovery converted already", from, `"from_discovery":2`, `"from_discovery":1`, "disc-1 was converted to task a already"},
		{"a task added as if from no discovery", from, `,"from_discovery":2`, "", "its change is not what add by planner-1 makes"},
		{"another goal", goal, `"goal":"ship more"`, `"goal":"ship less"`, "its change is not what goal by planner-1 makes"},
		{"a goal by a coder", goal, "Liza-Agent: planner-1", "Liza-Agent: coder-1", "coder-1 (coder) may not goal"},
	} {
		wantRefused(t, c.what, forged(t, human, root, c.commit, c.from, c.to), c.want)
	}
}

// TestUpgradedBoard: a board an older git-liza wrote, under the first
// rules (a first-rules claim, reclaim, submission, rejection, block,
// circuit breaker, sprint checkpoint and metrics, finalize, merge and
// heartbeat among its commits), stays operable: its history verifies commit by commit under the
// rules each was made by; what the current rules no longer write (an IDLE
// agent keeping a lease, an agent WORKING on a task taken from it, a coder
// with a CLAIMED task beside a rejected one) is a warning, not a problem;
// the next operation on such an agent puts it right, and new operations
// follow the new rules. A commit cannot claim the first rules once the
// board follows the new ones, nor make a new operation under the old.
func TestUpgradedBoard(t *testing.T) {
	human, root := newRepo(t)
	ctx := context.Background()
	ok := succeeds(t)
	old := func(agent string, d time.Duration) *ops.Service {
		return serviceAt(t, human, agent, d).UnderRules(contracts.RulesFirst)
	}

	// The old board: planner-1's supervisor registered (an IDLE entry with
	// a lease); coder-1 claims b beside a, which it submitted and which is
	// rejected; coder-2 reclaims e from coder-3, whose entry stays WORKING
	// on e; the old circuit breaker trips on a blocked majority, and the
	// sprint is checkpointed and measured the old way.
	oh := old("", 0)
	ok(oh.Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}))
	for _, id := range []string{"a", "b", "c", "d", "e", "g", "h", "i"} {
		ok(oh.AddTask(ctx, ops.AddTaskRequest{Task: task(id)}))
	}
	ok(old("planner-1", 0).Register(ctx, ops.RegisterRequest{Host: "test"}))
	register := stateTip(t, human)
	oc1 := old("coder-1", 0)
	ok(oc1.Claim(ctx, ops.ClaimRequest{Task: "a"}))
	commitIn(t, root, "a", "a.txt", "a\n")
	ok(oc1.Submit(ctx, ops.SubmitRequest{Task: "a"}))
	ok(oc1.Claim(ctx, ops.ClaimRequest{Task: "b"}))
	ok(old("coder-3", 0).Claim(ctx, ops.ClaimRequest{Task: "e", NoWorktree: true}))
	ok(old("coder-2", time.Hour).Claim(ctx, ops.ClaimRequest{Task: "e", NoWorktree: true}))
	rev := old("code-reviewer-1", time.Hour)
	ok(rev.Review(ctx, ops.ReviewRequest{Task: "a"}))
	ok(rev.Verdict(ctx, ops.VerdictRequest{Task: "a", Reason: "no test"}))
	op1 := old("planner-1", time.Hour)
	for _, id := range []string{"c", "d", "g", "h"} {
		ok(op1.Block(ctx, ops.BlockRequest{Task: id, Reason: "unclear", Questions: []string{"which?"}}))
	}
	if a, err := op1.Analyze(ctx, ops.Call{}); err != nil || a.Outcome != ops.OutcomeTriggered {
		t.Fatalf("the old circuit breaker: %+v %v", a, err)
	}
	ok(op1.SprintMetrics(ctx, ops.Call{}))
	ok(old("", time.Hour).SprintCheckpoint(ctx, ops.Call{}))
	ok(old("", time.Hour).ResolveBreaker(ctx, ops.ResolveRequest{Resolution: "answered"}))
	// A draft finalized without a scope, as the first rules allowed; a
	// merge, which left its coder IDLE with a lease.
	draft := task("j")
	draft.Status, draft.Scope = contracts.Draft, ""
	oh = old("", time.Hour)
	ok(oh.AddTask(ctx, ops.AddTaskRequest{Task: draft}))
	ok(oh.Finalize(ctx, ops.FinalizeRequest{Task: "j"}))
	ok(oh.AddTask(ctx, ops.AddTaskRequest{Task: task("k")}))
	oc4 := old("coder-4", time.Hour)
	ok(oc4.Claim(ctx, ops.ClaimRequest{Task: "k"}))
	commitIn(t, root, "k", "k.txt", "k\n")
	ok(oc4.Submit(ctx, ops.SubmitRequest{Task: "k"}))
	ok(rev.Review(ctx, ops.ReviewRequest{Task: "k"}))
	ok(rev.Verdict(ctx, ops.VerdictRequest{Task: "k", Approve: true}))
	ok(rev.Merge(ctx, ops.MergeRequest{Task: "k"}))
	ok(old("coder-2", 80*time.Minute).Heartbeat(ctx, ops.Call{}))
	if log := git(t, root, "log", "--format=%B", refstore.StateRef); strings.Contains(log, "Liza-Rules") {
		t.Fatalf("the old board has commits made under newer rules:\n%s", log)
	}

	// Checked by this git-liza: every commit verifies; the state is valid,
	// with three leftovers.
	checker := serviceAt(t, human, "", 3*time.Hour)
	check := func(when string, leftovers ...string) {
		t.Helper()
		v, err := checker.Validate(ctx, ops.ValidateRequest{History: true})
		if err != nil || len(v.Problems) > 0 {
			t.Fatalf("%s: validate --history: %v %+v", when, err, v)
		}
		v, err = checker.Validate(ctx, ops.ValidateRequest{})
		if err != nil || len(v.Problems) > 0 {
			t.Fatalf("%s: validate: %v %+v", when, err, v)
		}
		var got []string
		for _, w := range v.Warnings {
			got = append(got, w.String())
		}
		if len(got) != len(leftovers) {
			t.Fatalf("%s: warnings %q, want %d", when, got, len(leftovers))
		}
		for i, want := range leftovers {
			if !strings.HasPrefix(got[i], want) {
				t.Errorf("%s: warning %q, want %q", when, got[i], want)
			}
		}
	}
	check("the old board",
		"tasks[b]: coder-1 already holds REJECTED task a (one active task per coder)",
		"agents[coder-3]: WORKING on e, which it does not hold (CLAIMED by coder-2)",
		"agents[coder-4]: IDLE but keeps a lease_expires",
		"agents[planner-1]: IDLE but keeps a lease_expires")
	// The same state as a seed-format file, which records no rule set, is
	// judged as liza-validate.sh judges it: a coder on two active tasks is
	// INVALID there; the agents' leftovers stay warnings.
	if st, err := human.State(ctx, ""); err != nil {
		t.Fatal(err)
	} else if data, err := contracts.MarshalState(st); err != nil {
		t.Fatal(err)
	} else if v, err := ops.ValidateFile(data, "state.yaml"); err != nil || len(v.Problems) != 1 || len(v.Warnings) != 3 ||
		v.Problems[0].String() != "tasks[b]: coder-1 already holds REJECTED task a (one active task per coder)" {
		t.Errorf("the old board's export, validated as a file: %v %+v", err, v)
	}

	// Operations under the current rules: the first one, an edit, on a tip
	// made under the first rules.
	p1, c1, c3 := serviceAt(t, human, "planner-1", 2*time.Hour), serviceAt(t, human, "coder-1", 2*time.Hour), serviceAt(t, human, "coder-3", 2*time.Hour)
	prio := 1
	ok(p1.EditTask(ctx, ops.EditTaskRequest{Task: "i", Priority: &prio}))
	edit := stateTip(t, human)
	ok(p1.Heartbeat(ctx, ops.Call{}))
	beat := stateTip(t, human)
	ok(c3.Heartbeat(ctx, ops.Call{}))
	ok(serviceAt(t, human, "coder-4", 2*time.Hour).Heartbeat(ctx, ops.Call{}))
	check("the heartbeats of planner-1, coder-3 and coder-4",
		"tasks[b]: coder-1 already holds REJECTED task a (one active task per coder)")
	st, err := human.State(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Agents["planner-1"]; a.Status != "IDLE" || a.LeaseExpires != "" {
		t.Errorf("planner-1 after its heartbeat: %+v", a)
	}
	if a := st.Agents["coder-3"]; a.Status != "IDLE" || a.CurrentTask != "" || a.LeaseExpires != "" {
		t.Errorf("coder-3 after its heartbeat: %+v", a)
	}
	// coder-1 finishes what it holds, but takes nothing more.
	ok(c1.Heartbeat(ctx, ops.Call{}))
	commitIn(t, root, "b", "b.txt", "b\n")
	checkpoint(t, c1, "b")
	ok(c1.Submit(ctx, ops.SubmitRequest{Task: "b"}))
	if _, err := c1.Claim(ctx, ops.ClaimRequest{Task: "i"}); ops.Class(err) != contracts.CodeInvalid || !strings.Contains(err.Error(), "one active task per coder") {
		t.Errorf("coder-1's claim beside two active tasks: %v", err)
	}
	check("coder-1's submission",
		"tasks[b]: coder-1 already holds REJECTED task a (one active task per coder)")

	// Forgeries: a new operation under the first rules; a commit that goes
	// back to them; an old commit claiming the new rules.
	wantRefused(t, "an edit under the first rules", forged(t, checker, root, edit, currentRules, ""),
		"edit is an operation of rule set 2 and later, not of rule set 1")
	wantRefused(t, "a heartbeat back under the first rules", forged(t, checker, root, beat, currentRules, ""),
		fmt.Sprintf("it was made under rule set 1, older than its parent's (%d)", contracts.Rules))
	wantRefused(t, "an old registration under the new rules", forged(t, checker, root, register, "Liza-Kind: register\n", "Liza-Kind: register\nLiza-Rules: 2\n"),
		"its change is not what register by planner-1 makes")
}

// TestExhaustedClaimWithRequestID: a claim of the best task that finds
// its hypothesis exhausted records the exhaustion; with a request id,
// which that commit used, the claim ends there (exit 1) and a retry of the
// same request says the same, rather than looking for another task under
// a request id already spent.
func TestExhaustedClaimWithRequestID(t *testing.T) {
	human, _ := newBoard(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ok := succeeds(t)
	ok(human.AddTask(ctx, ops.AddTaskRequest{Task: task("c")}))
	ok(serviceAt(t, human, "coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "c", NoWorktree: true}))
	ok(serviceAt(t, human, "coder-2", time.Hour).Claim(ctx, ops.ClaimRequest{Task: "c", NoWorktree: true}))
	c3 := serviceAt(t, human, "coder-3", 2*time.Hour)
	for i := 0; i < 2; i++ {
		_, err := c3.Claim(ctx, ops.ClaimRequest{Call: ops.Call{RequestID: "claim-1"}, NoWorktree: true})
		if ops.Class(err) != contracts.CodeInvalid || !strings.Contains(err.Error(), "task c: hypothesis exhausted (coder-1, coder-2 failed it)") {
			t.Fatalf("claim %d with a request id: %v", i+1, err)
		}
	}
	if st, err := human.Task(ctx, "", "c"); err != nil || st.Status != contracts.Blocked {
		t.Fatalf("c after the exhausted claim: %+v %v", st, err)
	}
}
