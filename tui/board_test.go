package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// The board fits its window, whatever the number of tasks: lines cut,
// never wrapped, what needs attention first, the rest summed up.
func TestRenderFitsTheWindow(t *testing.T) {
	now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	st := &contracts.State{
		Goal:   contracts.Goal{ID: "goal-1", Description: "Retry every API call", Status: "IN_PROGRESS"},
		Sprint: contracts.Sprint{ID: "sprint-1", Status: "IN_PROGRESS"},
		Agents: map[string]*contracts.Agent{"coder-1": {Role: "coder", Status: "WORKING", CurrentTask: "t-7", LeaseExpires: "2026-01-17T10:20:00Z"}},
	}
	for i := 1; i <= 200; i++ {
		st.Tasks = append(st.Tasks, &contracts.Task{ID: fmt.Sprintf("t-%d", i), Status: contracts.Unclaimed, Priority: 3,
			Description: strings.Repeat("a long description ", 10)})
	}
	st.Tasks[6].Status, st.Tasks[6].AssignedTo, st.Tasks[6].LeaseExpires = contracts.Claimed, "coder-1", "2026-01-17T10:20:00Z"
	st.Tasks[9].Status, st.Tasks[9].BlockedReason = contracts.Blocked, "the spec is silent"
	b := ops.NewBoard(st, now, ops.BoardFilter{})
	b.Alarms = []contracts.Alarm{{Message: "BLOCKED: t-10 — the spec is silent"}}
	for _, size := range [][2]int{{80, 24}, {40, 10}, {120, 50}} {
		m := &model{board: b, width: size[0], height: size[1]}
		lines := strings.Split(m.render(), "\n")
		if len(lines) > size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: a line of %d columns: %q", size[0], size[1], w, ansi.Strip(l))
			}
		}
		text := ansi.Strip(m.render())
		if !strings.Contains(text, "> t-10 ") {
			t.Errorf("%dx%d: the blocked task, first, has no row:\n%s", size[0], size[1], text)
		}
		if size[1] < 24 {
			continue // the task pane has 4 lines: the first tasks, and how many more
		}
		blocked, claimed, unclaimed := strings.Index(text, "BLOCKED 1"), strings.Index(text, "CLAIMED 1"), strings.Index(text, "UNCLAIMED 198")
		if blocked < 0 || claimed < blocked || unclaimed < claimed {
			t.Errorf("%dx%d: not in attention order:\n%s", size[0], size[1], text)
		}
		if size[1] >= 24 && !strings.Contains(text, "more") {
			t.Errorf("%dx%d: 198 unclaimed tasks are not summed up:\n%s", size[0], size[1], text)
		}
	}
}
