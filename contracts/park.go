package contracts

import "time"

// EventLeaseReleased is the history event a supervisor that stops cleanly
// records on each task its coder holds, as it ends the claim's lease (see
// ops.Unregister).
const EventLeaseReleased = "lease_released"

// DefaultParkStaleThreshold is how long, in seconds, a task may stay
// parked before it raises an alarm, when the config leaves it unset: a
// day, since a team stopped for the night is not a fault.
const DefaultParkStaleThreshold = 86400

// ParkStaleAfter is how long a task may stay parked before the park
// counts as stale.
func (c Config) ParkStaleAfter() time.Duration {
	return thresholdOr(c.ParkStaleThreshold, DefaultParkStaleThreshold)
}

// Park says who parked a task and since when.
type Park struct {
	By    string `json:"by"`
	Since string `json:"since"`
}

// ParkOf reports whether t is parked, and by whom since when: a CLAIMED
// task whose lease is still the one its coder's supervisor set, to the
// time of its clean stop, in its last lease_released event. The work stays
// in the task's worktree and branch; the coder resumes it when its
// supervisor comes back, or another coder takes it over. It is read from
// the task alone, so that every clone agrees. A claim whose lease ran out
// without a clean stop (a crash, a kill) is not parked, nor one renewed
// or taken over since: either moves the lease on.
func ParkOf(t *Task) (Park, bool) {
	if t == nil || t.Status != Claimed || t.LeaseExpires == "" {
		return Park{}, false
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		ev := t.History[i]
		if ev == nil || ev.Event != EventLeaseReleased {
			continue
		}
		if ev.Time != t.LeaseExpires || ev.Agent != t.AssignedTo {
			return Park{}, false
		}
		return Park{By: ev.Agent, Since: ev.Time}, true
	}
	return Park{}, false
}

// ResumeHint says how a parked task goes on.
const ResumeHint = "git liza run or git liza agent coder resumes it"

// StopSessionsKey is the field of the control section by which a pause
// asks the supervisors to stop the sessions they run (git liza pause
// --stop-sessions), not only to start no new one.
const StopSessionsKey = "stop_sessions"

// StopSessions reports whether c is a pause that asks the supervisors to
// stop their running sessions.
func StopSessions(c *Control) bool {
	return c != nil && c.Mode == ModePaused && c.Extra[StopSessionsKey] == true
}
