package ops_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestIntegrationOldBoard: a board made under rule set 2 records no
// integration tip. Until its first merge under rule set 3 the expectation
// comes from its last merge (read once from its history), so a commit put
// onto the branch by hand is refused there too; that merge records the
// tip, and from then on merges read it from liza.yaml.
func TestIntegrationOldBoard(t *testing.T) {
	human, root, old := oldBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	for i, id := range []string{"a", "b"} {
		coder := old("coder-" + string(rune('1'+i)))
		ok(coder.Claim(ctx, ops.ClaimRequest{Task: id}))
		commitIn(t, root, id, id+".txt", id+"\n")
		ok(coder.Submit(ctx, ops.SubmitRequest{Task: id}))
		ok(old("code-reviewer-1").Review(ctx, ops.ReviewRequest{Task: id}))
		ok(old("code-reviewer-1").Verdict(ctx, ops.VerdictRequest{Task: id, Approve: true}))
	}
	ok(old("code-reviewer-1").Merge(ctx, ops.MergeRequest{Task: "a"}))
	merged := git(t, root, "rev-parse", "integration")
	st, err := human.State(ctx, "")
	if err != nil || st.Config.IntegrationTip != "" {
		t.Fatalf("the old board records an integration tip %q (%v)", st.Config.IntegrationTip, err)
	}

	// A commit by hand onto the branch: refused by the current rules,
	// from what the old board's last merge says.
	evil := git(t, root, "commit-tree", "-p", "integration", "-m", "unreviewed", "integration^{tree}")
	git(t, root, "update-ref", "refs/heads/integration", evil)
	rev := serviceAt(t, human, "code-reviewer-1", 0)
	_, err = rev.Merge(ctx, ops.MergeRequest{Task: "b"})
	var moved *ops.IntegrationMismatch
	if !errors.As(err, &moved) || ops.Class(err) != contracts.CodeInconsistent || moved.At.String() != evil || moved.Recorded.String() != merged {
		t.Fatalf("merge onto a commit by hand on an old board: %v", err)
	}
	if !strings.Contains(err.Error(), "git update-ref refs/heads/integration "+merged+" "+evil) {
		t.Errorf("the refusal names no repair: %v", err)
	}
	if _, err := human.Validate(ctx, ops.ValidateRequest{}); ops.Class(err) != contracts.CodeInconsistent {
		t.Errorf("validate on the moved branch: %v", err)
	}

	// Put back, the merge lands under the current rules and records its
	// commit in liza.yaml.
	git(t, root, "update-ref", "refs/heads/integration", merged, evil)
	res, err := rev.Merge(ctx, ops.MergeRequest{Task: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err = human.State(ctx, ""); err != nil || st.Config.IntegrationTip != res.MergeCommit {
		t.Fatalf("after the first merge under rule set 3 the board records %q, want %s (%v)", st.Config.IntegrationTip, res.MergeCommit, err)
	}
	if v, err := human.Validate(ctx, ops.ValidateRequest{History: true}); err != nil || len(v.Problems) > 0 || len(v.Warnings) > 0 {
		t.Fatalf("validate --history: %v %+v", err, v)
	}

	// The next merge starts from the recorded tip; the same merge claiming
	// to start from the commit put there by hand is refused by replay.
	coder := serviceAt(t, human, "coder-3", 0)
	ok(coder.Claim(ctx, ops.ClaimRequest{Task: "c"}))
	commitIn(t, root, "c", "c.txt", "c\n")
	checkpoint(t, coder, "c")
	ok(coder.Submit(ctx, ops.SubmitRequest{Task: "c"}))
	ok(rev.Review(ctx, ops.ReviewRequest{Task: "c"}))
	ok(rev.Verdict(ctx, ops.VerdictRequest{Task: "c", Approve: true}))
	ok(rev.Merge(ctx, ops.MergeRequest{Task: "c"}))
	wantRefused(t, "a merge from an unrecorded tip", forged(t, human, root, stateTip(t, human), `"integration_old":"`+res.MergeCommit, `"integration_old":"`+evil),
		"but the board records the integration branch at "+res.MergeCommit[:12])
}

// TestIntegrationUnknownOnOldBoard: an old board whose history says
// nothing of the branch (init found it existing; no merge yet) checks
// nothing and warns; the operator's integration adopt records the tip,
// which is then enforced.
func TestIntegrationUnknownOnOldBoard(t *testing.T) {
	human, root := newRepo(t)
	ctx := context.Background()
	git(t, root, "branch", "integration")
	if _, err := serviceAt(t, human, "", 0).UnderRules(contracts.RulesWhole).Init(ctx, ops.InitRequest{Goal: "ship it"}); err != nil {
		t.Fatal(err)
	}
	v, err := human.Validate(ctx, ops.ValidateRequest{})
	if err != nil || len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0].Msg, "run git liza integration adopt") {
		t.Fatalf("validate of an old board that records no tip: %v %+v", err, v)
	}
	if _, err := human.As("coder-1", 0).AdoptIntegration(ctx, ops.AdoptRequest{}); ops.Class(err) != contracts.CodeInvalid {
		t.Errorf("a coder adopting: %v", err)
	}
	out, err := human.AdoptIntegration(ctx, ops.AdoptRequest{})
	if err != nil || out.Already || out.Commit != git(t, root, "rev-parse", "integration") {
		t.Fatalf("adopt: %+v %v", out, err)
	}
	again, err := human.AdoptIntegration(ctx, ops.AdoptRequest{Commit: "integration"})
	if err != nil || !again.Already {
		t.Errorf("adopt again: %+v %v", again, err)
	}
	// Forged: the adopt of another commit, by the operator's label.
	tip := stateTip(t, human)
	other := git(t, root, "commit-tree", "-m", "elsewhere", "integration^{tree}")
	wantRefused(t, "an adopt of another commit", forged(t, human, root, tip, out.Commit, other), "its change is not what integration_adopt by human makes")
	git(t, root, "update-ref", "refs/heads/integration", other)
	if _, err := human.Validate(ctx, ops.ValidateRequest{}); ops.Class(err) != contracts.CodeInconsistent {
		t.Errorf("validate after the branch moved past the adopted tip: %v", err)
	}
}

// oldBoard is a board made under rule set 2 (which records no integration
// tip) with tasks a, b and c, and the services that act under that rule
// set, by agent.
func oldBoard(t *testing.T) (*ops.Service, string, func(agent string) *ops.Service) {
	t.Helper()
	human, root := newRepo(t)
	ctx := context.Background()
	ok := succeeds(t)
	old := func(agent string) *ops.Service {
		return serviceAt(t, human, agent, 0).UnderRules(contracts.RulesWhole)
	}
	ok(old("").Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}))
	for _, id := range []string{"a", "b", "c"} {
		ok(old("").AddTask(ctx, ops.AddTaskRequest{Task: task(id)}))
	}
	return human, root, old
}
