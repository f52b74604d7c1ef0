package ops

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// TestNoteReadersByStatus checks what note says of a note for a task in
// each status the txtar script does not reach cheaply.
func TestNoteReadersByStatus(t *testing.T) {
	now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	live := contracts.FormatTime(now.Add(time.Hour))
	st := &contracts.State{
		Agents: map[string]*contracts.Agent{
			"code-reviewer-1": {Role: "code_reviewer", SupervisorLease: live},
			"planner-2":       {Role: "planner", SupervisorLease: contracts.FormatTime(now.Add(-time.Minute))},
		},
		Tasks: []*contracts.Task{
			{ID: "r", Status: contracts.ReadyForReview, ReviewingBy: "code-reviewer-1"},
			{ID: "w", Status: contracts.ReadyForReview},
			{ID: "m", Status: contracts.Merged},
			{ID: "x", Status: contracts.Blocked},
		},
	}
	for _, c := range []struct{ target, want string }{
		{"r", "code-reviewer-1 reads it at its next session reviewing r (its supervisor is running)"},
		{"w", "the reviewer that takes w's review reads it at that session"},
		{"m", "m is MERGED: no coder or reviewer session will read it"},
		{"x", "x is BLOCKED: the coder that works on it once it is unblocked reads it at that session"},
		{"gone", "gone is not a live task: no coder or reviewer session will read it"},
	} {
		got := NoteReaders(st, c.target, "human", now)
		want := []string{c.want, "the planner reads it at its next wake; no planner is running: git liza agent planner starts one"}
		if !slices.Equal(got, want) {
			t.Errorf("note for %s:\n got %s\nwant %s", c.target, strings.Join(got, " | "), strings.Join(want, " | "))
		}
	}
}
