package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// A task whose supervisor stopped cleanly shows on the board as parked, by
// whom and how long ago, not as an expired lease; one whose supervisor
// died shows its lease expired.
func TestBoardShowsParked(t *testing.T) {
	now := time.Date(2026, 1, 17, 10, 31, 0, 0, time.UTC)
	st := &contracts.State{
		Goal:   contracts.Goal{ID: "goal-1", Description: "goal", Status: "IN_PROGRESS"},
		Sprint: contracts.Sprint{ID: "sprint-1", Status: "IN_PROGRESS"},
		Tasks: []*contracts.Task{
			{ID: "a", Status: contracts.Claimed, AssignedTo: "coder-1", LeaseExpires: "2026-01-17T10:00:00Z",
				History: []*contracts.HistoryEvent{{Time: "2026-01-17T10:00:00Z", Event: contracts.EventLeaseReleased, Agent: "coder-1"}}},
			{ID: "b", Status: contracts.Claimed, AssignedTo: "coder-2", LeaseExpires: "2026-01-17T10:30:00Z"},
		},
	}
	b := ops.NewBoard(st, now, ops.BoardFilter{})
	m := &model{board: b, width: 120, height: 30}
	text := ansi.Strip(m.render())
	if !strings.Contains(text, "parked 31m0s ago by coder-1") || !strings.Contains(text, "expired 1m0s ago") {
		t.Errorf("want a parked and b expired:\n%s", text)
	}
}
