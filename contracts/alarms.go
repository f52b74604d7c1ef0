package contracts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The levels of an alarm.
const (
	AlarmWarning  = "warning"
	AlarmCritical = "critical"
)

// Alarm is one condition that needs a human's attention.
type Alarm struct {
	// Key names the condition and what it is about, such as
	// "lease_expired/task-3". It stays the same from one poll to the next
	// while the condition lasts, so that a watcher can tell when an alarm
	// starts and when it clears. A condition that escalates keeps its key
	// and changes its Kind and Level.
	Key     string `json:"key"`
	Level   string `json:"level"` // AlarmWarning or AlarmCritical
	Kind    string `json:"kind"`
	Task    string `json:"task,omitempty"`
	Message string `json:"message"`
}

// AlarmInput is what Alarms needs besides the state.
type AlarmInput struct {
	// Now is the time the state is looked at.
	Now time.Time
	// LastChange is the time of the last state commit.
	LastChange time.Time
	// Problems are the validation problems of the state; empty when it is
	// valid.
	Problems []string
	// Switches are the kill switches that are on (see ActiveSwitches).
	Switches []Switch
}

// The alarm thresholds, in seconds, that apply when the config leaves them
// unset.
const (
	DefaultStallThreshold           = 1800
	DefaultDraftStaleThreshold      = 1800
	DefaultPauseStaleThreshold      = 1800
	DefaultCheckpointStaleThreshold = 1800
)

// OrphanGrace is how long a REJECTED task may wait for its coder to pick
// it up again before it counts as orphaned.
const OrphanGrace = 30 * time.Second

func thresholdOr(v, def int) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Second
}

// StallAfter is how long the state may go unchanged, with work left,
// before the goal counts as stalled.
func (c Config) StallAfter() time.Duration {
	return thresholdOr(c.StallThreshold, DefaultStallThreshold)
}

// DraftStaleAfter is how old a DRAFT task may get before it counts as
// stale.
func (c Config) DraftStaleAfter() time.Duration {
	return thresholdOr(c.DraftStaleThreshold, DefaultDraftStaleThreshold)
}

// PauseStaleAfter is how long a pause may last before it counts as stale;
// after four times as long it counts as forgotten.
func (c Config) PauseStaleAfter() time.Duration {
	return thresholdOr(c.PauseStaleThreshold, DefaultPauseStaleThreshold)
}

// CheckpointStaleAfter is how long a checkpoint may wait for a human
// before it counts as stale; after four times as long it counts as stuck,
// and the alarm is raised again, with its age, after sixteen times as long.
func (c Config) CheckpointStaleAfter() time.Duration {
	return thresholdOr(c.CheckpointStaleThreshold, DefaultCheckpointStaleThreshold)
}

// Alarms lists the conditions of st that need attention, sorted by Key.
// It is a pure function of the state and in: the same input gives the
// same alarms.
func Alarms(st *State, in AlarmInput) []Alarm {
	var out alarms
	if len(in.Problems) > 0 {
		msg := in.Problems[0]
		if n := len(in.Problems) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more problems)", n)
		}
		out.add(AlarmCritical, "invalid_state", "", "", "INVALID STATE: %s", msg)
	}
	var cfg Config
	if st != nil {
		cfg = st.Config
	}
	cfg.FillDefaults()
	out.switches(in, cfg)
	if st == nil {
		out.sort()
		return out
	}
	now := in.Now
	for _, t := range st.Tasks {
		if t == nil {
			continue
		}
		out.task(t, st, cfg, now)
	}
	out.budgets(st, cfg)
	for _, name := range slices.Sorted(maps.Keys(st.Agents)) {
		// A supervisor that stopped for something a person must see to
		// (a crash loop, its environment, run giving up on it after it
		// died again and again) records why until the next registration.
		if a := st.Agents[name]; a != nil && a.StopReason != "" && a.Host == "" {
			role, _ := ParseAgentID(name)
			out.add(AlarmWarning, "supervisor_stopped", name, "",
				"SUPERVISOR STOPPED: %s — %s (git liza doctor, then git liza agent %s)", name, alarmLine(a.StopReason), role.IDPrefix())
		}
	}
	for _, d := range st.Discovered {
		if d == nil || d.Urgency != "immediate" || d.ConvertedToTask != "" {
			continue
		}
		out.add(AlarmCritical, "immediate_discovery", d.ID, d.During,
			"IMMEDIATE DISCOVERY: %s — %s (Planner should wake)", d.ID, alarmLine(d.Description))
	}
	if openWork(st) && !in.LastChange.IsZero() {
		if idle := now.Sub(in.LastChange); idle > cfg.StallAfter() {
			out.add(AlarmWarning, "stalled", "", "", "STALLED: no progress for %s", alarmSpan(idle))
		}
	}
	out.sort()
	return out
}

type alarms []Alarm

// add appends an alarm whose key is kind/subject (kind alone without a
// subject), its message prefixed by its level's sign.
func (as *alarms) add(level, kind, subject, task, format string, args ...any) {
	key := kind
	if subject != "" {
		key += "/" + subject
	}
	as.addKeyed(key, level, kind, task, format, args...)
}

func (as *alarms) addKeyed(key, level, kind, task, format string, args ...any) {
	sign := "⚠️ "
	if level == AlarmCritical {
		sign = "🚨 "
	}
	*as = append(*as, Alarm{Key: key, Level: level, Kind: kind, Task: task, Message: sign + fmt.Sprintf(format, args...)})
}

func (as alarms) sort() {
	slices.SortStableFunc(as, func(a, b Alarm) int { return strings.Compare(a.Key, b.Key) })
}

// task adds the alarms about one live task.
func (as *alarms) task(t *Task, st *State, cfg Config, now time.Time) {
	id := t.ID
	switch t.Status {
	case Claimed:
		if park, ok := ParkOf(t); ok {
			// A clean stop ended the lease on purpose: the task waits
			// for its coder to come back, and alarms only when the wait
			// grows long. The key is the lease's, as the condition is.
			since, err := ParseTime(park.Since)
			if age := now.Sub(since); err == nil && age > cfg.ParkStaleAfter() {
				as.addKeyed("lease_expired/"+id, AlarmWarning, "park_stale", id,
					"PARK STALE: %s parked by %s for %s — %s", id, nameOrNobody(park.By), alarmSpan(age), ResumeHint)
			}
		} else if LeaseOver(t.LeaseExpires, now) {
			as.add(AlarmWarning, "lease_expired", id, id, "LEASE EXPIRED: %s on %s", nameOrNobody(t.AssignedTo), id)
		}
	case ReadyForReview:
		if t.ReviewingBy != "" && LeaseOver(t.ReviewLeaseExpires, now) {
			as.add(AlarmWarning, "review_lease_expired", id, id,
				"REVIEW LEASE EXPIRED: %s on %s — review can be reclaimed", t.ReviewingBy, id)
		}
	case Blocked:
		reason := alarmLine(t.BlockedReason)
		if reason == "" {
			reason = "no reason given"
		}
		as.add(AlarmWarning, "blocked", id, id, "BLOCKED: %s — %s", id, reason)
	case Rejected:
		if status, orphaned := orphanedRejected(t, st, now); orphaned {
			as.add(AlarmCritical, "orphaned_rejected", id, id,
				"ORPHANED REJECTED: %s — assigned to %s but agent is %s", id, nameOrNobody(t.AssignedTo), status)
		}
	case IntegrationFailed:
		as.add(AlarmCritical, "integration_failed", id, id, "INTEGRATION FAILED: %s", id)
	}
	if t.Status.Terminal() {
		return
	}
	if reassigned(t) {
		as.add(AlarmWarning, "reassigned", id, id, "REASSIGNED: %s — hypothesis exhaustion risk", id)
	}
	if len(t.FailedBy) >= 2 {
		as.add(AlarmCritical, "hypothesis_exhaustion", id, id, "HYPOTHESIS EXHAUSTION: %s — requires rescope", id)
	}
	if n, limit := t.ReviewCyclesCurrent, cfg.MaxReviewCycles; n >= limit {
		as.add(AlarmCritical, "review_loop", id, id, "REVIEW LOOP: %s — %d cycles (at cliff)", id, n)
	} else if n >= max(limit-2, 1) {
		as.addKeyed("approaching_limit/"+id+"/review_cycles", AlarmWarning, "approaching_limit", id,
			"APPROACHING LIMIT: %s — review cycles %d/%d", id, n, limit)
	}
	// liza-watch.sh warns of CLAIMED tasks at 8 or 9 of 10 iterations: a
	// task at the limit is BLOCKED (or sent back), and the alarm of that
	// says more.
	if n, limit := t.Iteration, cfg.MaxCoderIterations; t.Status == Claimed && n >= max(limit-2, 1) && n < limit {
		as.addKeyed("approaching_limit/"+id+"/iterations", AlarmWarning, "approaching_limit", id,
			"APPROACHING LIMIT: %s — iteration %d/%d", id, n, limit)
	}
	if t.Status == Draft {
		if created, err := ParseTime(t.Created); err == nil {
			if age := now.Sub(created); age > cfg.DraftStaleAfter() {
				as.add(AlarmWarning, "stale_draft", id, id,
					"STALE DRAFT: %s — created %dmin ago (Planner crash?)", id, int(age.Minutes()))
			}
		}
	}
}

// switches adds the alarms about pauses and checkpoints that last too
// long; cfg gives the thresholds. The key names the switch's source, so
// that a pause in the state and a PAUSE file are told apart, and stays
// while the alarm escalates.
func (as *alarms) switches(in AlarmInput, cfg Config) {
	for _, sw := range in.Switches {
		if sw.Since.IsZero() {
			continue
		}
		age := in.Now.Sub(sw.Since)
		where := "in the state"
		if sw.Source != "state" {
			where = sw.Source + " file"
		}
		switch sw.Mode {
		case ModePaused:
			key := "stale_pause/" + sw.Source
			t := cfg.PauseStaleAfter()
			what := "PAUSE file exists"
			if sw.Source == "state" {
				what = "PAUSED in the state"
			}
			switch {
			case age > 4*t:
				as.addKeyed(key, AlarmCritical, "forgotten_pause", "", "FORGOTTEN PAUSE: %s for %dmin", what, int(age.Minutes()))
			case age > t:
				as.addKeyed(key, AlarmWarning, "stale_pause", "", "STALE PAUSE: %s for %dmin", what, int(age.Minutes()))
			}
		case ModeCheckpoint:
			key := "checkpoint_stale/" + sw.Source
			t := cfg.CheckpointStaleAfter()
			switch {
			case age > 16*t:
				as.addKeyed(key, AlarmCritical, "checkpoint_stuck_long", "", "CHECKPOINT STUCK: waiting for human for %s (%s)", alarmSpan(age), where)
			case age > 4*t:
				as.addKeyed(key, AlarmCritical, "checkpoint_stuck", "", "CHECKPOINT STUCK: waiting for human (%s)", where)
			case age > t:
				as.addKeyed(key, AlarmWarning, "checkpoint_stale", "", "CHECKPOINT STALE: waiting for human (%s)", where)
			}
		}
	}
}

// orphanedRejected reports whether a REJECTED task's assignee is not
// WORKING once the grace after the rejection has passed, and the status
// the assignee is in.
func orphanedRejected(t *Task, st *State, now time.Time) (string, bool) {
	status := "not registered"
	if a := st.Agents[t.AssignedTo]; a != nil {
		if a.Status == "WORKING" {
			return "", false
		}
		status = a.Status
	}
	if t.AssignedTo == "" {
		status = "absent"
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		ev := t.History[i]
		if ev == nil || ev.Event != "rejected" && ev.To != string(Rejected) {
			continue
		}
		if at, err := ParseTime(ev.Time); err == nil && now.Sub(at) < OrphanGrace {
			return "", false
		}
		break
	}
	return status, true
}

// MayAlarm reports whether a live task could raise an alarm at now, from
// its index summary alone. A board that reads only summaries decodes the
// tasks this lets through and hands Alarms every other one as its
// summary's Stub: a task MayAlarm passes over raises no alarm, whatever
// its file holds.
func MayAlarm(s *TaskSummary, cfg Config, now time.Time) bool {
	switch s.Status {
	case Claimed:
		if LeaseOver(s.LeaseExpires, now) {
			return true
		}
	case ReadyForReview:
		if s.ReviewingBy != "" && LeaseOver(s.ReviewLeaseExpires, now) {
			return true
		}
	case Blocked, Rejected, IntegrationFailed, Draft:
		return true
	}
	if s.Status.Terminal() {
		return false
	}
	cfg.FillDefaults()
	if b := cfg.Budgets; b != nil && (b.TaskTokens > 0 || b.TaskUSD > 0) {
		return true // its spend is in its history (alarms_budget.go)
	}
	return s.Status == Claimed && s.Reassigned || s.FailedBy >= 2 ||
		s.ReviewCycles >= max(cfg.MaxReviewCycles-2, 1) ||
		s.Status == Claimed && s.Iteration >= max(cfg.MaxCoderIterations-2, 1)
}

// Stub is a task with only what its summary says: what the board, the
// alarms and a supervisor's live view (cas.Snapshot.LoadLive) read of a
// task they do not decode.
func (s *TaskSummary) Stub() *Task {
	return &Task{
		ID: s.ID, Status: s.Status, Priority: s.Priority, Created: s.Created,
		AssignedTo: s.AssignedTo, ReviewingBy: s.ReviewingBy,
		LeaseExpires: s.LeaseExpires, ReviewLeaseExpires: s.ReviewLeaseExpires,
		DependsOn: s.DependsOn, Paths: s.Paths,
		Iteration: s.Iteration, ReviewCyclesCurrent: s.ReviewCycles,
	}
}

// reassigned reports whether t raises liza-watch.sh's REASSIGNED: it is
// CLAIMED by a coder other than the one that first claimed it. A coder
// that claims its task again after a block, a release or a pause is no
// second coder.
func reassigned(t *Task) bool {
	if t.Status != Claimed || t.AssignedTo == "" {
		return false
	}
	for _, ev := range t.History {
		if ev != nil && ev.Event == "claimed" && ev.Agent != "" {
			return ev.Agent != t.AssignedTo
		}
	}
	return false
}

// wasReassigned reports whether the task may have changed hands: it is
// what the board index records (TaskSummary.Reassigned), and every task
// reassigned reports has it, so that MayAlarm can pass over the others
// without decoding them. It stays as it was when indexes were first
// written: an index entry is part of every state commit, and replays
// must write the same.
func wasReassigned(t *Task) bool {
	if t.PreviousAssignee != "" {
		return true
	}
	for _, ev := range t.History {
		if ev != nil && (ev.Event == "reclaimed" || ev.Event == "taken_over") {
			return true
		}
	}
	return false
}

// openWork reports whether the goal is open and work is left.
func openWork(st *State) bool {
	if st.Goal.Status == "COMPLETED" {
		return false
	}
	for _, t := range st.Tasks {
		if t != nil && !t.Status.Terminal() {
			return true
		}
	}
	return false
}

func nameOrNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

func alarmLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// alarmSpan renders a duration to the minute: "45m", "2h5m".
func alarmSpan(d time.Duration) string {
	d = d.Truncate(time.Minute)
	if d < time.Hour {
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
}
