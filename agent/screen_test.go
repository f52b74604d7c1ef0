package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// A reviewer supervisor sends back a task that no longer merges before it
// takes a review, so no session starts on it; it checks each task once
// until what it merges onto moves.
func TestScreenBeforeReview(t *testing.T) {
	f := &fakeBoard{conflicts: map[string]string{"b": "merge conflict in shared.txt with integration"},
		// The review is refused (taken meanwhile): no session to start.
		reply: func(string) error { return contracts.Invalidf("no task awaits review") }}
	s, log := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	st := &contracts.State{Config: contracts.Config{IntegrationTip: "t1"}, Tasks: []*contracts.Task{
		{ID: "b", Status: contracts.ReadyForReview, AssignedTo: "coder-2", ReviewCommit: "c1"},
		{ID: "c", Status: contracts.ReadyForReview, AssignedTo: "coder-3", ReviewCommit: "c2"},
		{ID: "mine", Status: contracts.ReadyForReview, AssignedTo: "code-reviewer-1", ReviewCommit: "c3"},
	}}
	ctx := context.Background()
	w, acted, err := s.nextReviewer(ctx, st)
	if w != nil || !acted || err != nil {
		t.Fatalf("work %v, acted %v, err %v: want b sent back and the board read again", w, acted, err)
	}
	if got := f.verbs(); slices.Contains(got, "review") {
		t.Fatalf("calls %q: a review was taken while b went back", got)
	}
	if !strings.Contains(log.String(), "b does not merge: merge conflict in shared.txt with integration; sent back to coder-2") {
		t.Fatalf("log:\n%s", log)
	}
	// The same board: nothing is checked again, and the review goes on.
	s.nextReviewer(ctx, st)
	if got := f.verbs(); !slices.Equal(got, []string{"review"}) {
		t.Fatalf("calls %q, want one review", got)
	}
	if !slices.Equal(f.checks, []string{"b", "c"}) {
		t.Fatalf("checked %q, want b and c once each (and never its own task)", f.checks)
	}
	// The integration tip moved: both are checked again.
	st.Config.IntegrationTip = "t2"
	s.nextReviewer(ctx, st)
	if !slices.Equal(f.checks, []string{"b", "c", "b", "c"}) {
		t.Fatalf("checked %q after the tip moved", f.checks)
	}
}
