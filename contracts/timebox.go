package contracts

import "time"

// The session timeboxes, in seconds, that apply when the config leaves
// them unset: seed 001's. "Work (Coder): 4–12 min", with the hard cap
// "timebox_minutes <= 12"; "Planning (Supervisor): 6–10 min"; and a
// review, a work slice, "in the 4–12 minute band". The timebox stops a
// session the way a handoff does (SIGINT, then timebox_grace), and the
// next session takes the task up from its worktree; three such stops in a
// row (the supervisor's IdleLimit) give the task back to the planner, to
// split, as the seed splits work estimated over 12 minutes. A board whose
// tasks need longer sessions sets timebox_coder (and the others) in its
// config.
const (
	DefaultTimeboxCoder        = 12 * 60
	DefaultTimeboxCodeReviewer = 12 * 60
	DefaultTimeboxPlanner      = 10 * 60
	DefaultTimeboxGrace        = 60
)

// Timebox is how long one agent session of role r may run before its
// supervisor asks it to stop.
func (c Config) Timebox(r Role) time.Duration {
	switch r {
	case RoleCoder:
		return thresholdOr(c.TimeboxCoder, DefaultTimeboxCoder)
	case RoleReviewer:
		return thresholdOr(c.TimeboxCodeReviewer, DefaultTimeboxCodeReviewer)
	case RolePlanner:
		return thresholdOr(c.TimeboxPlanner, DefaultTimeboxPlanner)
	}
	return 0
}

// TimeboxGraceAfter is how long an agent asked to stop at the end of its
// timebox (SIGINT) has before it is made to (SIGTERM).
func (c Config) TimeboxGraceAfter() time.Duration {
	return thresholdOr(c.TimeboxGrace, DefaultTimeboxGrace)
}

// DefaultSetupTimeout is how long scripts/worktree-setup.sh may run in a
// new worktree when the config leaves worktree_setup_timeout unset, and
// MaxSetupTimeout the most a config may set: an install that takes longer
// than a day is stuck, and a bigger number would only hold a claim back.
const (
	DefaultSetupTimeout = 600
	MaxSetupTimeout     = 24 * 60 * 60
)

// SetupTimeout is how long the setup step of a new worktree may run
// before it is killed with its process group.
func (c Config) SetupTimeout() time.Duration {
	return thresholdOr(c.WorktreeSetupTimeout, DefaultSetupTimeout)
}

// DefaultTestTimeout is how long scripts/integration-test.sh may run at a
// merge when the config leaves integration_test_timeout unset, and
// MaxTestTimeout the most a config may set. A test past it has hung (a
// server it waits for, a deadlock the merge brought in) as far as the
// merge lane can tell, and counts as failed: otherwise a team left alone
// would hold its every approved task behind it until someone looked.
const (
	DefaultTestTimeout = 60 * 60
	MaxTestTimeout     = 24 * 60 * 60
)

// TestTimeout is how long one run of the integration test may take before
// it is killed with its process group and counted as failed.
func (c Config) TestTimeout() time.Duration {
	return thresholdOr(c.IntegrationTestTimeout, DefaultTestTimeout)
}
