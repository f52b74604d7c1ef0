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
	// The board with b sent back: c, which merged, is not checked again,
	// and the review goes on.
	st.Tasks[0].Status = contracts.IntegrationFailed
	s.nextReviewer(ctx, st)
	if got := f.verbs(); !slices.Equal(got, []string{"review"}) {
		t.Fatalf("calls %q, want one review", got)
	}
	if !slices.Equal(f.checks, []string{"b", "c"}) {
		t.Fatalf("checked %q, want b and c once each (and never its own task)", f.checks)
	}
	// b's coder submits the same commit again, onto the same tip (its fix
	// found nothing to merge): it is checked again and goes back again,
	// and no review is taken.
	f.reset()
	st.Tasks[0].Status = contracts.ReadyForReview
	w, acted, err = s.nextReviewer(ctx, st)
	if w != nil || !acted || err != nil {
		t.Fatalf("work %v, acted %v, err %v: want b, resubmitted, sent back again", w, acted, err)
	}
	if got := f.verbs(); len(got) > 0 {
		t.Fatalf("calls %q: want none while b goes back", got)
	}
	if !slices.Equal(f.checks, []string{"b", "c", "b"}) {
		t.Fatalf("checked %q, want b checked again once resubmitted", f.checks)
	}
	// The integration tip moved: c is checked again.
	st.Tasks[0].Status = contracts.IntegrationFailed
	st.Config.IntegrationTip = "t2"
	s.nextReviewer(ctx, st)
	if !slices.Equal(f.checks, []string{"b", "c", "b", "c"}) {
		t.Fatalf("checked %q after the tip moved", f.checks)
	}
}

// A coder whose task came back for a conflict with a task approved ahead
// of it does not claim the fix until that task is merged: the fix starts
// from the integration tip, which lacks the task ahead, so a session then
// would find nothing to merge and submit the same commit to be sent back
// again.
func TestFixWaitsForTaskAhead(t *testing.T) {
	f := &fakeBoard{reply: func(verb string) error {
		// The claim is refused, so that no session is started.
		return contracts.Invalidf("no claimable task for coder-2")
	}}
	s, log := newSup(contracts.RoleCoder, "coder-2", f)
	b := &contracts.Task{ID: "b", Status: contracts.IntegrationFailed, AssignedTo: "coder-2", ReviewCommit: "c1", History: []*contracts.HistoryEvent{
		{Event: "submitted", Agent: "coder-2", From: string(contracts.Claimed), To: string(contracts.ReadyForReview)},
		{Event: "integration_failed", Agent: "coder-2", From: string(contracts.ReadyForReview), To: string(contracts.IntegrationFailed),
			Reason: "merge conflict in shared.txt with task a, approved ahead of it", Extra: contracts.Extra{contracts.ConflictChecked: contracts.CheckedSubmit}},
		{Event: "session_ended", Agent: "coder-2"},
	}}
	a := &contracts.Task{ID: "a", Status: contracts.Approved, AssignedTo: "coder-1", ReviewCommit: "c0"}
	st := &contracts.State{Config: contracts.Config{IntegrationTip: "t1"}, Tasks: []*contracts.Task{a, b}}
	ctx := context.Background()
	if w, _, err := s.nextCoder(ctx, st); w != nil || err != nil {
		t.Fatalf("work %v, err %v", w, err)
	}
	if got := f.verbs(); len(got) > 0 {
		t.Fatalf("calls %q: want no claim while a, approved ahead of b, is not merged", got)
	}
	if !strings.Contains(log.String(), "b waits for a, approved ahead of it, to merge before its integration fix") {
		t.Fatalf("log:\n%s", log)
	}
	// a merged: b's fix is claimed.
	a.Status = contracts.Merged
	s.nextCoder(ctx, st)
	if got := f.verbs(); !slices.Equal(got, []string{"claim"}) {
		t.Fatalf("calls %q: want b's fix claimed once a merged", got)
	}
	// A conflict with the integration tip itself is claimed at once.
	f.reset()
	a.Status = contracts.Approved
	b.History[1].Reason = "merge conflict in shared.txt with integration"
	s.nextCoder(ctx, st)
	if got := f.verbs(); !slices.Equal(got, []string{"claim"}) {
		t.Fatalf("calls %q: want the fix of a conflict with the integration tip claimed", got)
	}
}
