package contracts

import "time"

// The session timeboxes, in seconds, that apply when the config leaves
// them unset. They are generous: a timebox is there to end a session that
// has stopped making progress, not to hurry one that works.
const (
	DefaultTimeboxCoder        = 2 * 60 * 60
	DefaultTimeboxCodeReviewer = 60 * 60
	DefaultTimeboxPlanner      = 60 * 60
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
