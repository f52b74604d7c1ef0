package agent

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestMergeLaneHeldByIntegration: an integration branch that is not where
// the board records it stops the merge lane for every approved task: it is
// logged once, the lane waits (no task after the first is tried), and once
// the operator has put the branch back the merges go on.
func TestMergeLaneHeldByIntegration(t *testing.T) {
	moved := true
	f := &fakeBoard{reply: func(verb string) error {
		switch {
		case strings.HasPrefix(verb, "merge") && moved:
			return &ops.IntegrationMismatch{Branch: "integration"}
		case strings.HasPrefix(verb, "review"):
			return contracts.Invalidf("no task awaits review")
		}
		return nil
	}}
	s, log := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	st := &contracts.State{Tasks: []*contracts.Task{
		{ID: "a", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c1"},
		{ID: "b", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c2"},
	}}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		s.nextReviewer(ctx, st)
		s.waitMerges()
	}
	if got := f.verbs(); !slices.Equal(slices.DeleteFunc(got, func(v string) bool { return !strings.HasPrefix(v, "merge") }), []string{"merge --queue"}) {
		t.Errorf("calls = %q: one run of the merge queue, then the lane waits for the operator", got)
	}
	if n := strings.Count(log.String(), "merges wait: integration branch integration is at"); n != 1 {
		t.Errorf("the refusal was logged %d times:\n%s", n, log)
	}

	// Tried again after its delay, still refused: not logged again.
	s.lane.held.retryAt = time.Now().Add(-time.Millisecond)
	f.reset()
	s.nextReviewer(ctx, st)
	s.waitMerges()
	if got := f.verbs(); !slices.Contains(got, "merge --queue") {
		t.Errorf("calls = %q after the delay: the lane did not look again", got)
	}
	if n := strings.Count(log.String(), "merges wait:"); n != 1 {
		t.Errorf("the same refusal was logged %d times", n)
	}

	// The branch is back: the next try merges, and says so.
	moved = false
	s.lane.held.retryAt = time.Now().Add(-time.Millisecond)
	f.reset()
	s.nextReviewer(ctx, st)
	s.waitMerges()
	if got := f.verbs(); !slices.Contains(got, "merge --queue") {
		t.Errorf("calls = %q once the branch is back: no merge", got)
	}
	if !strings.Contains(log.String(), "is back where the board records it: merges go on") || s.lane.held != nil {
		t.Errorf("the lane did not resume:\n%s", log)
	}
}

// TestMergeLaneBatch: with several approved tasks the lane runs one batch
// of the merge queue over those it may merge (not a live reviewer's
// other approval), says what became of each, and waits out the delay of
// one the queue left unmerged without changing the board.
func TestMergeLaneBatch(t *testing.T) {
	var asked []string
	f := &fakeBoard{queue: func(r ops.MergeQueueRequest) *ops.MergeQueueResult {
		for _, id := range []string{"a", "b", "c", "d"} {
			if r.Only(&contracts.Task{ID: id, Status: contracts.Approved, ReviewCommit: "c-" + id}) {
				asked = append(asked, id)
			}
		}
		return &ops.MergeQueueResult{IntegrationBranch: "integration", Runs: 4, Outcomes: []ops.QueueOutcome{
			{ID: "a", Status: ops.QueueMerged, MergeCommit: "0123456789abcdef"},
			{ID: "b", Status: ops.QueueFailed, Reason: "scripts/integration-test.sh failed (exit 1): boom"},
			{ID: "c", Status: ops.QueueSkipped, Reason: "task/c is at 111111111111, not at the approved commit 222222222222"},
		}}
	}}
	s, log := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	st := &contracts.State{
		Agents: map[string]*contracts.Agent{"code-reviewer-2": {Role: "code_reviewer", Status: "IDLE", LeaseExpires: "2026-01-17T10:05:00Z"}},
		Tasks: []*contracts.Task{
			{ID: "a", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c-a"},
			{ID: "b", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c-b"},
			{ID: "c", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c-c"},
			{ID: "d", Status: contracts.Approved, ApprovedBy: "code-reviewer-2", ReviewCommit: "c-d"},
		}}
	if !s.startMerge(context.Background(), st) {
		t.Fatal("no merge started")
	}
	s.waitMerges()
	if !slices.Equal(asked, []string{"a", "b", "c"}) {
		t.Errorf("the queue may merge %q, want a, b and c (d is a live reviewer's)", asked)
	}
	for _, want := range []string{
		"merged a into integration at 0123456789ab",
		"merge b failed: scripts/integration-test.sh failed (exit 1): boom; it is INTEGRATION_FAILED",
		"merge c failed: task/c is at 111111111111, not at the approved commit 222222222222 (trying again in",
		"merge queue: 3 task(s) in a batch, 4 test run(s)",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
	if f := s.lane.failures["c"]; f == nil || !time.Now().Before(f.retryAt) {
		t.Errorf("c, left unmerged with the board unchanged, is not waiting out a delay: %+v", f)
	}
}
