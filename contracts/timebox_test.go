package contracts

import (
	"testing"
	"time"
)

// TestSeedTimeboxes: a board that sets no timebox has seed 001's: "Work
// (Coder): 4–12 min", "Planning (Supervisor): 6–10 min", and every work
// slice "in the 4–12 minute band" (a review); each set in config wins.
func TestSeedTimeboxes(t *testing.T) {
	var c Config
	for r, want := range map[Role]time.Duration{RoleCoder: 12 * time.Minute, RoleReviewer: 12 * time.Minute, RolePlanner: 10 * time.Minute} {
		if got := c.Timebox(r); got != want {
			t.Errorf("default timebox of a %s: %s, want %s", r, got, want)
		}
	}
	c = Config{TimeboxCoder: 7200, TimeboxCodeReviewer: 1800, TimeboxPlanner: 60}
	for r, want := range map[Role]time.Duration{RoleCoder: 2 * time.Hour, RoleReviewer: 30 * time.Minute, RolePlanner: time.Minute} {
		if got := c.Timebox(r); got != want {
			t.Errorf("configured timebox of a %s: %s, want %s", r, got, want)
		}
	}
	if d := DefaultConfig(); d.LeaseDuration != 300 || d.HeartbeatInterval != 60 {
		t.Errorf("default lease %ds, heartbeat %ds; seed 004: 300 and 60", d.LeaseDuration, d.HeartbeatInterval)
	}
}
