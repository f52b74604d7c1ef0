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
	if got := f.verbs(); slices.Contains(got, "merge b") || !slices.Contains(got, "merge a") {
		t.Errorf("calls = %q: one merge tried, then the lane waits for the operator", got)
	}
	if n := strings.Count(log.String(), "merges wait: integration branch integration is at"); n != 1 {
		t.Errorf("the refusal was logged %d times:\n%s", n, log)
	}

	// Tried again after its delay, still refused: not logged again.
	s.lane.held.retryAt = time.Now().Add(-time.Millisecond)
	f.reset()
	s.nextReviewer(ctx, st)
	s.waitMerges()
	if got := f.verbs(); !slices.Contains(got, "merge a") {
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
	if got := f.verbs(); !slices.Contains(got, "merge a") {
		t.Errorf("calls = %q once the branch is back: no merge", got)
	}
	if !strings.Contains(log.String(), "is back where the board records it: merges go on") || s.lane.held != nil {
		t.Errorf("the lane did not resume:\n%s", log)
	}
}
