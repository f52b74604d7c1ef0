package contracts

import (
	"strings"
	"testing"
	"time"
)

// A parked task raises no lease alarm until the park is older than the
// threshold; a claim whose lease ran out another way alarms at once.
func TestParkAlarms(t *testing.T) {
	at := "2026-01-17T10:00:00Z"
	released := &HistoryEvent{Time: at, Event: EventLeaseReleased, Agent: "coder-1"}
	claimed := &HistoryEvent{Time: "2026-01-17T09:00:00Z", Event: "claimed", Agent: "coder-1"}
	edited := &HistoryEvent{Time: at, Event: "edited", Agent: "human"}
	task := func(lease, assignee string, h ...*HistoryEvent) *Task {
		return &Task{ID: "a", Status: Claimed, AssignedTo: assignee, LeaseExpires: lease, History: h}
	}
	base := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		t      *Task
		after  time.Duration
		cfg    Config
		parked bool
		want   string // the alarm's message without its sign; "" for none
	}{
		{"parked, an hour", task(at, "coder-1", claimed, released), time.Hour, Config{}, true, ""},
		{"parked, then edited", task(at, "coder-1", claimed, released, edited), time.Hour, Config{}, true, ""},
		{"parked, a day and a minute", task(at, "coder-1", claimed, released), 24*time.Hour + time.Minute, Config{}, true,
			"PARK STALE: a parked by coder-1 for 24h1m — git liza run or git liza agent coder resumes it"},
		{"parked, past a threshold of 10 minutes", task(at, "coder-1", claimed, released), 11 * time.Minute, Config{ParkStaleThreshold: 600}, true,
			"PARK STALE: a parked by coder-1 for 11m — git liza run or git liza agent coder resumes it"},
		{"crashed", task(at, "coder-1", claimed), time.Minute, Config{}, false, "LEASE EXPIRED: coder-1 on a"},
		{"resumed, then crashed", task("2026-01-17T10:30:00Z", "coder-1", claimed, released), time.Hour, Config{}, false, "LEASE EXPIRED: coder-1 on a"},
		{"taken over", task(at, "coder-2", claimed, released), time.Hour, Config{}, false, "LEASE EXPIRED: coder-2 on a"},
	} {
		if _, ok := ParkOf(c.t); ok != c.parked {
			t.Errorf("%s: parked %v, want %v", c.name, ok, c.parked)
		}
		st := &State{Tasks: []*Task{c.t}, Config: c.cfg, Goal: Goal{Status: "COMPLETED"}}
		var got []string
		for _, a := range Alarms(st, AlarmInput{Now: base.Add(c.after)}) {
			if a.Kind == "reassigned" {
				continue // coder-2 holding what coder-1 first claimed: not this test's matter
			}
			got = append(got, strings.TrimPrefix(a.Message, "⚠️ "))
		}
		if c.want == "" && len(got) > 0 || c.want != "" && (len(got) != 1 || got[0] != c.want) {
			t.Errorf("%s: alarms %q, want %q", c.name, got, c.want)
		}
	}
}
