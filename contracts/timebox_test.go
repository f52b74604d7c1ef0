package contracts

import (
	"strings"
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

// TestSetupTimeout: the setup step of a new worktree gets 600 s unless
// the config says otherwise; a negative value, or one over a day, makes
// the state invalid.
func TestSetupTimeout(t *testing.T) {
	var c Config
	if got := c.SetupTimeout(); got != 10*time.Minute {
		t.Errorf("default setup timeout %s, want 10m0s", got)
	}
	if got := (Config{WorktreeSetupTimeout: 90}).SetupTimeout(); got != 90*time.Second {
		t.Errorf("configured setup timeout %s, want 1m30s", got)
	}
	for v, want := range map[int]string{-1: "worktree_setup_timeout -1 is negative", MaxSetupTimeout + 1: "worktree_setup_timeout 86401 is more than 86400 (a day)"} {
		s := validState()
		s.Config.WorktreeSetupTimeout = v
		if got := problemText(Validate(s)); !strings.Contains(got, want) {
			t.Errorf("worktree_setup_timeout %d: problems %q, want %q", v, got, want)
		}
	}
	s := validState()
	s.Config.WorktreeSetupTimeout = MaxSetupTimeout
	if ps := Validate(s); len(ps) > 0 {
		t.Errorf("a day's timeout refused: %v", ps)
	}
}
