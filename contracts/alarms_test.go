package contracts

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var alarmNow = time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)

// ago is the seed-format time d before alarmNow (after it for negative d).
func ago(d time.Duration) string { return FormatTime(alarmNow.Add(-d)) }

// alarmState is an open goal with one UNCLAIMED task, task-1, and nothing
// wrong with it.
func alarmState() *State {
	return &State{
		Version: 1,
		Goal:    Goal{ID: "goal-1", Description: "g", Status: "IN_PROGRESS"},
		Config:  DefaultConfig(),
		Sprint:  Sprint{ID: "sprint-1", GoalRef: "goal-1", Status: "IN_PROGRESS"},
		Agents:  map[string]*Agent{},
		Tasks:   []*Task{task("task-1", Unclaimed)},
	}
}

func claimed(st *State, lease time.Duration) *Task {
	t := st.Tasks[0]
	t.Status, t.AssignedTo, t.LeaseExpires, t.Iteration = Claimed, "coder-1", ago(-lease), 1
	st.Agents["coder-1"] = &Agent{Role: "coder", Status: "WORKING", CurrentTask: t.ID}
	return t
}

func underReview(st *State, lease time.Duration) *Task {
	t := st.Tasks[0]
	t.Status, t.AssignedTo, t.ReviewCommit, t.Iteration = ReadyForReview, "coder-1", "abc1", 1
	t.ReviewingBy, t.ReviewLeaseExpires = "code-reviewer-1", ago(-lease)
	return t
}

// rejected makes task-1 REJECTED for coder-1 (agent status agent, none when
// empty), rejected d ago.
func rejected(st *State, agent string, d time.Duration) *Task {
	t := st.Tasks[0]
	t.Status, t.AssignedTo, t.Iteration, t.RejectionReason = Rejected, "coder-1", 1, "no tests"
	t.History = append(t.History, &HistoryEvent{Time: ago(d), Event: "rejected", Agent: "code-reviewer-1", From: string(ReadyForReview), To: string(Rejected)})
	if agent != "" {
		st.Agents["coder-1"] = &Agent{Role: "coder", Status: agent}
	}
	return t
}

func paused(source string, since time.Duration) []Switch {
	return []Switch{{Mode: ModePaused, Source: source, Since: alarmNow.Add(-since)}}
}

func checkpoint(since time.Duration) []Switch {
	return []Switch{{Mode: ModeCheckpoint, Source: "state", Since: alarmNow.Add(-since), By: "human"}}
}

func TestAlarms(t *testing.T) {
	const minute = time.Minute
	tests := []struct {
		name    string
		prepare func(st *State, in *AlarmInput)
		key     string // the alarm looked for
		level   string // "" when it must not be raised
		message string
	}{
		{"lease expired", func(st *State, _ *AlarmInput) { claimed(st, -time.Second) },
			"lease_expired/task-1", AlarmWarning, "⚠️ LEASE EXPIRED: coder-1 on task-1"},
		{"lease expires now", func(st *State, _ *AlarmInput) { claimed(st, 0) },
			"lease_expired/task-1", AlarmWarning, "⚠️ LEASE EXPIRED: coder-1 on task-1"},
		{"lease running", func(st *State, _ *AlarmInput) { claimed(st, time.Second) },
			"lease_expired/task-1", "", ""},
		{"lease expired but submitted", func(st *State, _ *AlarmInput) {
			claimed(st, -time.Hour).Status = ReadyForReview
		}, "lease_expired/task-1", "", ""},

		{"review lease expired", func(st *State, _ *AlarmInput) { underReview(st, -time.Second) },
			"review_lease_expired/task-1", AlarmWarning, "⚠️ REVIEW LEASE EXPIRED: code-reviewer-1 on task-1 — review can be reclaimed"},
		{"review lease running", func(st *State, _ *AlarmInput) { underReview(st, time.Second) },
			"review_lease_expired/task-1", "", ""},
		{"review lease released", func(st *State, _ *AlarmInput) {
			t := underReview(st, -time.Hour)
			t.ReviewingBy, t.ReviewLeaseExpires = "", ""
		}, "review_lease_expired/task-1", "", ""},

		{"blocked", func(st *State, _ *AlarmInput) {
			t := st.Tasks[0]
			t.Status, t.BlockedReason = Blocked, "spec\n  unclear"
		}, "blocked/task-1", AlarmWarning, "⚠️ BLOCKED: task-1 — spec unclear"},
		{"unblocked", func(st *State, _ *AlarmInput) { st.Tasks[0].BlockedReason = "spec unclear" },
			"blocked/task-1", "", ""},

		{"orphaned rejected, agent idle", func(st *State, _ *AlarmInput) { rejected(st, "IDLE", 31*time.Second) },
			"orphaned_rejected/task-1", AlarmCritical, "🚨 ORPHANED REJECTED: task-1 — assigned to coder-1 but agent is IDLE"},
		{"orphaned rejected, agent gone", func(st *State, _ *AlarmInput) { rejected(st, "", time.Hour) },
			"orphaned_rejected/task-1", AlarmCritical, "🚨 ORPHANED REJECTED: task-1 — assigned to coder-1 but agent is not registered"},
		{"rejected within the grace", func(st *State, _ *AlarmInput) { rejected(st, "IDLE", 29*time.Second) },
			"orphaned_rejected/task-1", "", ""},
		{"rejected, coder working", func(st *State, _ *AlarmInput) { rejected(st, "WORKING", time.Hour) },
			"orphaned_rejected/task-1", "", ""},
		{"rejected twice, the last within the grace", func(st *State, _ *AlarmInput) {
			t := rejected(st, "IDLE", time.Hour)
			t.History = append(t.History, &HistoryEvent{Time: ago(10 * time.Second), Event: "rejected", To: string(Rejected)})
		}, "orphaned_rejected/task-1", "", ""},

		{"reassigned: first claimed by another coder", func(st *State, _ *AlarmInput) {
			t := claimed(st, time.Hour)
			t.PreviousAssignee = "coder-2"
			t.History = append(t.History, &HistoryEvent{Time: ago(time.Hour), Event: "claimed", Agent: "coder-2"},
				&HistoryEvent{Time: ago(time.Minute), Event: "taken_over", Agent: "coder-1"})
		}, "reassigned/task-1", AlarmWarning, "⚠️ REASSIGNED: task-1 — hypothesis exhaustion risk"},
		{"claimed again by its first coder after an unblock", func(st *State, _ *AlarmInput) {
			t := claimed(st, time.Hour)
			t.PreviousAssignee = "coder-1"
			t.History = append(t.History, &HistoryEvent{Time: ago(time.Hour), Event: "claimed", Agent: "coder-1"},
				&HistoryEvent{Time: ago(30 * time.Minute), Event: "unblocked", Agent: "planner-1"},
				&HistoryEvent{Time: ago(time.Minute), Event: "claimed", Agent: "coder-1"})
		}, "reassigned/task-1", "", ""},
		{"reassigned, now under review", func(st *State, _ *AlarmInput) {
			t := underReview(st, time.Hour)
			t.History = append(t.History, &HistoryEvent{Time: ago(time.Hour), Event: "claimed", Agent: "coder-2"})
		}, "reassigned/task-1", "", ""},
		{"reassigned, then merged", func(st *State, _ *AlarmInput) {
			t := claimed(st, time.Hour)
			t.PreviousAssignee, t.Status = "coder-2", Merged
		}, "reassigned/task-1", "", ""},
		{"one coder", func(st *State, _ *AlarmInput) { claimed(st, time.Hour) },
			"reassigned/task-1", "", ""},

		{"review loop at the cliff", func(st *State, _ *AlarmInput) {
			underReview(st, time.Hour).ReviewCyclesCurrent = 5
		}, "review_loop/task-1", AlarmCritical, "🚨 REVIEW LOOP: task-1 — 5 cycles (at cliff)"},
		{"review loop below the cliff", func(st *State, _ *AlarmInput) {
			underReview(st, time.Hour).ReviewCyclesCurrent = 4
		}, "review_loop/task-1", "", ""},
		{"review loop with a lower cliff", func(st *State, _ *AlarmInput) {
			st.Config.MaxReviewCycles = 3
			underReview(st, time.Hour).ReviewCyclesCurrent = 3
		}, "review_loop/task-1", AlarmCritical, "🚨 REVIEW LOOP: task-1 — 3 cycles (at cliff)"},

		{"integration failed", func(st *State, _ *AlarmInput) {
			t := st.Tasks[0]
			t.Status, t.AssignedTo = IntegrationFailed, "coder-1"
		}, "integration_failed/task-1", AlarmCritical, "🚨 INTEGRATION FAILED: task-1"},
		{"integration fixed", func(st *State, _ *AlarmInput) { st.Tasks[0].Status = Approved },
			"integration_failed/task-1", "", ""},

		{"hypothesis exhaustion", func(st *State, _ *AlarmInput) {
			st.Tasks[0].FailedBy = StringList{"coder-1", "coder-2"}
		}, "hypothesis_exhaustion/task-1", AlarmCritical, "🚨 HYPOTHESIS EXHAUSTION: task-1 — requires rescope"},
		{"one coder failed", func(st *State, _ *AlarmInput) { st.Tasks[0].FailedBy = StringList{"coder-1"} },
			"hypothesis_exhaustion/task-1", "", ""},
		{"exhausted, then superseded", func(st *State, _ *AlarmInput) {
			t := st.Tasks[0]
			t.FailedBy, t.Status, t.SupersededBy = StringList{"coder-1", "coder-2"}, Superseded, StringList{"task-2"}
		}, "hypothesis_exhaustion/task-1", "", ""},

		{"approaching the iteration limit", func(st *State, _ *AlarmInput) { claimed(st, time.Hour).Iteration = 8 },
			"approaching_limit/task-1/iterations", AlarmWarning, "⚠️ APPROACHING LIMIT: task-1 — iteration 8/10"},
		{"at the iteration limit", func(st *State, _ *AlarmInput) { claimed(st, time.Hour).Iteration = 10 },
			"approaching_limit/task-1/iterations", "", ""},
		{"blocked near the iteration limit", func(st *State, _ *AlarmInput) {
			t := claimed(st, time.Hour)
			t.Status, t.Iteration = Blocked, 9
		}, "approaching_limit/task-1/iterations", "", ""},
		{"iteration 7 of 10", func(st *State, _ *AlarmInput) { claimed(st, time.Hour).Iteration = 7 },
			"approaching_limit/task-1/iterations", "", ""},
		{"approaching the review limit", func(st *State, _ *AlarmInput) {
			underReview(st, time.Hour).ReviewCyclesCurrent = 3
		}, "approaching_limit/task-1/review_cycles", AlarmWarning, "⚠️ APPROACHING LIMIT: task-1 — review cycles 3/5"},
		{"review cycle 2 of 5", func(st *State, _ *AlarmInput) {
			underReview(st, time.Hour).ReviewCyclesCurrent = 2
		}, "approaching_limit/task-1/review_cycles", "", ""},
		{"review cycles at the cliff are a loop, not an approach", func(st *State, _ *AlarmInput) {
			underReview(st, time.Hour).ReviewCyclesCurrent = 5
		}, "approaching_limit/task-1/review_cycles", "", ""},
		{"a small review limit does not flag every task", func(st *State, _ *AlarmInput) {
			st.Config.MaxReviewCycles = 2
			underReview(st, time.Hour)
		}, "approaching_limit/task-1/review_cycles", "", ""},

		{"stalled", func(st *State, in *AlarmInput) { in.LastChange = alarmNow.Add(-31 * minute) },
			"stalled", AlarmWarning, "⚠️ STALLED: no progress for 31m"},
		{"stalled for hours", func(st *State, in *AlarmInput) { in.LastChange = alarmNow.Add(-125 * minute) },
			"stalled", AlarmWarning, "⚠️ STALLED: no progress for 2h5m"},
		{"quiet for the threshold exactly", func(st *State, in *AlarmInput) { in.LastChange = alarmNow.Add(-30 * minute) },
			"stalled", "", ""},
		{"stall threshold from the config", func(st *State, in *AlarmInput) {
			st.Config.StallThreshold = 600
			in.LastChange = alarmNow.Add(-11 * minute)
		}, "stalled", AlarmWarning, "⚠️ STALLED: no progress for 11m"},
		{"quiet with the goal completed", func(st *State, in *AlarmInput) {
			st.Goal.Status = "COMPLETED"
			in.LastChange = alarmNow.Add(-time.Hour)
		}, "stalled", "", ""},
		{"quiet with every task done", func(st *State, in *AlarmInput) {
			st.Tasks[0].Status = Merged
			in.LastChange = alarmNow.Add(-time.Hour)
		}, "stalled", "", ""},

		{"stale draft", func(st *State, _ *AlarmInput) {
			t := st.Tasks[0]
			t.Status, t.Created = Draft, ago(45*minute)
		}, "stale_draft/task-1", AlarmWarning, "⚠️ STALE DRAFT: task-1 — created 45min ago (Planner crash?)"},
		{"young draft", func(st *State, _ *AlarmInput) {
			t := st.Tasks[0]
			t.Status, t.Created = Draft, ago(30*minute)
		}, "stale_draft/task-1", "", ""},
		{"draft finalized", func(st *State, _ *AlarmInput) { st.Tasks[0].Created = ago(45 * minute) },
			"stale_draft/task-1", "", ""},

		{"immediate discovery", func(st *State, _ *AlarmInput) {
			st.Discovered = []*Discovery{{ID: "disc-1", By: "coder-1", During: "task-1", Description: "secrets in logs", Urgency: "immediate"}}
		}, "immediate_discovery/disc-1", AlarmCritical, "🚨 IMMEDIATE DISCOVERY: disc-1 — secrets in logs (Planner should wake)"},
		{"immediate discovery converted", func(st *State, _ *AlarmInput) {
			st.Discovered = []*Discovery{{ID: "disc-1", Description: "secrets in logs", Urgency: "immediate", ConvertedToTask: "task-2"}}
		}, "immediate_discovery/disc-1", "", ""},
		{"deferred discovery", func(st *State, _ *AlarmInput) {
			st.Discovered = []*Discovery{{ID: "disc-1", Description: "secrets in logs", Urgency: "deferred"}}
		}, "immediate_discovery/disc-1", "", ""},

		{"invalid state", func(_ *State, in *AlarmInput) { in.Problems = []string{"tasks[0] task-1: bad", "agents: worse"} },
			"invalid_state", AlarmCritical, "🚨 INVALID STATE: tasks[0] task-1: bad (and 1 more problems)"},
		{"valid state", func(*State, *AlarmInput) {}, "invalid_state", "", ""},

		{"checkpoint stale", func(_ *State, in *AlarmInput) { in.Switches = checkpoint(31 * minute) },
			"checkpoint_stale/state", AlarmWarning, "⚠️ CHECKPOINT STALE: waiting for human (in the state)"},
		{"checkpoint young", func(_ *State, in *AlarmInput) { in.Switches = checkpoint(30 * minute) },
			"checkpoint_stale/state", "", ""},
		{"checkpoint stuck", func(_ *State, in *AlarmInput) { in.Switches = checkpoint(121 * minute) },
			"checkpoint_stale/state", AlarmCritical, "🚨 CHECKPOINT STUCK: waiting for human (in the state)"},
		{"checkpoint stuck for long", func(_ *State, in *AlarmInput) { in.Switches = checkpoint(9 * time.Hour) },
			"checkpoint_stale/state", AlarmCritical, "🚨 CHECKPOINT STUCK: waiting for human for 9h0m (in the state)"},
		{"checkpoint file", func(_ *State, in *AlarmInput) {
			in.Switches = []Switch{{Mode: ModeCheckpoint, Source: ".liza/CHECKPOINT", Since: alarmNow.Add(-time.Hour)}}
		}, "checkpoint_stale/.liza/CHECKPOINT", AlarmWarning, "⚠️ CHECKPOINT STALE: waiting for human (.liza/CHECKPOINT file)"},
		{"checkpoint since unknown", func(_ *State, in *AlarmInput) {
			in.Switches = []Switch{{Mode: ModeCheckpoint, Source: "state"}}
		}, "checkpoint_stale/state", "", ""},

		{"pause file stale", func(_ *State, in *AlarmInput) { in.Switches = paused(".liza/PAUSE", 31*minute) },
			"stale_pause/.liza/PAUSE", AlarmWarning, "⚠️ STALE PAUSE: PAUSE file exists for 31min"},
		{"pause file young", func(_ *State, in *AlarmInput) { in.Switches = paused(".liza/PAUSE", 30*minute) },
			"stale_pause/.liza/PAUSE", "", ""},
		{"pause file forgotten", func(_ *State, in *AlarmInput) { in.Switches = paused(".liza/PAUSE", 121*minute) },
			"stale_pause/.liza/PAUSE", AlarmCritical, "🚨 FORGOTTEN PAUSE: PAUSE file exists for 121min"},
		{"pause in the state", func(_ *State, in *AlarmInput) { in.Switches = paused("state", time.Hour) },
			"stale_pause/state", AlarmWarning, "⚠️ STALE PAUSE: PAUSED in the state for 60min"},
		{"pause threshold from the config", func(st *State, in *AlarmInput) {
			st.Config.PauseStaleThreshold = 7200
			in.Switches = paused("state", 2*time.Hour+time.Minute)
		}, "stale_pause/state", AlarmWarning, "⚠️ STALE PAUSE: PAUSED in the state for 121min"},
		{"an abort is no pause", func(_ *State, in *AlarmInput) {
			in.Switches = []Switch{{Mode: ModeAborted, Source: ".liza/ABORT", Since: alarmNow.Add(-time.Hour)}}
		}, "stale_pause/.liza/ABORT", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := alarmState()
			in := AlarmInput{Now: alarmNow, LastChange: alarmNow}
			tc.prepare(st, &in)
			got := Alarms(st, in)
			i := slices.IndexFunc(got, func(a Alarm) bool { return a.Key == tc.key })
			if tc.level == "" {
				if i >= 0 {
					t.Fatalf("raised %+v, want no %s alarm", got[i], tc.key)
				}
				return
			}
			if i < 0 {
				t.Fatalf("no %s alarm in %+v", tc.key, got)
			}
			a := got[i]
			if a.Level != tc.level || a.Message != tc.message {
				t.Errorf("got %s %q, want %s %q", a.Level, a.Message, tc.level, tc.message)
			}
		})
	}
}

// TestAlarmsClear checks that an alarm goes when its condition does, and
// that a healthy state raises none.
func TestAlarmsClear(t *testing.T) {
	st := alarmState()
	in := AlarmInput{Now: alarmNow, LastChange: alarmNow}
	if got := Alarms(st, in); len(got) != 0 {
		t.Fatalf("healthy state raised %+v", got)
	}
	claimed(st, -time.Minute)
	if got := keys(Alarms(st, in)); !slices.Equal(got, []string{"lease_expired/task-1"}) {
		t.Fatalf("expired lease: got %v", got)
	}
	st.Tasks[0].LeaseExpires = ago(-time.Hour) // a heartbeat renewed it
	if got := Alarms(st, in); len(got) != 0 {
		t.Fatalf("renewed lease still raises %+v", got)
	}
}

func TestAlarmsOrderAndTasks(t *testing.T) {
	st := alarmState()
	b := task("task-2", Blocked)
	b.BlockedReason = "r"
	st.Tasks = append(st.Tasks, b)
	claimed(st, -time.Minute).FailedBy = StringList{"coder-8", "coder-9"}
	in := AlarmInput{Now: alarmNow, LastChange: alarmNow.Add(-time.Hour), Problems: []string{"p"},
		Switches: paused(".liza/PAUSE", time.Hour)}
	got := Alarms(st, in)
	want := []string{"blocked/task-2", "hypothesis_exhaustion/task-1", "invalid_state", "lease_expired/task-1", "stale_pause/.liza/PAUSE", "stalled"}
	if k := keys(got); !slices.Equal(k, want) {
		t.Fatalf("keys %v, want %v", k, want)
	}
	for _, a := range got {
		wantTask := ""
		if strings.HasSuffix(a.Key, "/task-1") {
			wantTask = "task-1"
		} else if strings.HasSuffix(a.Key, "/task-2") {
			wantTask = "task-2"
		}
		if a.Task != wantTask {
			t.Errorf("%s: task %q, want %q", a.Key, a.Task, wantTask)
		}
	}
	if again := Alarms(st, in); !slices.Equal(again, got) {
		t.Errorf("second call gave %+v, first %+v", again, got)
	}
}

// TestAlarmsNoState is the watcher's view of a tip it cannot read: only
// the problems and the switches.
func TestAlarmsNoState(t *testing.T) {
	got := Alarms(nil, AlarmInput{Now: alarmNow, Problems: []string{"liza.yaml: bad"}, Switches: paused("state", time.Hour)})
	if k := keys(got); !slices.Equal(k, []string{"invalid_state", "stale_pause/state"}) {
		t.Fatalf("got %+v", got)
	}
}

// TestAlarmsEscalate checks that a pause or a checkpoint keeps its key as
// it ages, and changes its kind at each stage.
func TestAlarmsEscalate(t *testing.T) {
	for _, tc := range []struct {
		switches func(time.Duration) []Switch
		key      string
		kinds    []string
	}{
		{func(d time.Duration) []Switch { return paused(".liza/PAUSE", d) }, "stale_pause/.liza/PAUSE",
			[]string{"", "stale_pause", "forgotten_pause", "forgotten_pause"}},
		{checkpoint, "checkpoint_stale/state",
			[]string{"", "checkpoint_stale", "checkpoint_stuck", "checkpoint_stuck_long"}},
	} {
		for i, age := range []time.Duration{10 * time.Minute, time.Hour, 3 * time.Hour, 9 * time.Hour} {
			got := Alarms(alarmState(), AlarmInput{Now: alarmNow, LastChange: alarmNow, Switches: tc.switches(age)})
			kind := ""
			for _, a := range got {
				if a.Key != tc.key {
					t.Errorf("%v: unexpected key %s", age, a.Key)
				}
				kind = a.Kind
			}
			if kind != tc.kinds[i] {
				t.Errorf("%s after %v: kind %q, want %q", tc.key, age, kind, tc.kinds[i])
			}
		}
	}
}

func TestAlarmThresholdDefaults(t *testing.T) {
	var c Config
	for name, got := range map[string]time.Duration{
		"stall": c.StallAfter(), "draft": c.DraftStaleAfter(), "pause": c.PauseStaleAfter(), "checkpoint": c.CheckpointStaleAfter(),
	} {
		if got != 30*time.Minute {
			t.Errorf("%s: default %v, want 30m", name, got)
		}
	}
	c = Config{StallThreshold: 60, DraftStaleThreshold: 120, PauseStaleThreshold: 180, CheckpointStaleThreshold: 240}
	if c.StallAfter() != time.Minute || c.DraftStaleAfter() != 2*time.Minute || c.PauseStaleAfter() != 3*time.Minute || c.CheckpointStaleAfter() != 4*time.Minute {
		t.Errorf("set thresholds not honoured: %+v", c)
	}
}

func keys(as []Alarm) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Key
	}
	return out
}

// TestAlarmsSupervisorStopped: a supervisor that stopped for a reason a
// person must see to is an alarm until its agent is registered again; one
// that stopped cleanly is none.
func TestAlarmsSupervisorStopped(t *testing.T) {
	st := &State{Agents: map[string]*Agent{
		"coder-1":         {Role: "coder", Status: "IDLE", StopReason: "the supervisor died 3 times in 5m0s,\nlast: signal: killed"},
		"coder-2":         {Role: "coder", Status: "IDLE"},
		"code-reviewer-1": {Role: "code_reviewer", Status: "IDLE", StopReason: "crash loop", Host: "box pid 7"},
	}}
	got := Alarms(st, AlarmInput{Now: alarmNow})
	if k := keys(got); !slices.Equal(k, []string{"supervisor_stopped/coder-1"}) {
		t.Fatalf("got %+v", got)
	}
	if want := "⚠️ SUPERVISOR STOPPED: coder-1 — the supervisor died 3 times in 5m0s, last: signal: killed (git liza doctor, then git liza agent coder)"; got[0].Message != want {
		t.Errorf("message %q, want %q", got[0].Message, want)
	}
}
