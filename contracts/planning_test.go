package contracts

import (
	"slices"
	"testing"
)

// planState is a state with a goal and the given live tasks.
func planState(tasks ...*Task) *State {
	return &State{
		Goal:  Goal{ID: "goal-1", Description: "ship it", Status: "IN_PROGRESS"},
		Tasks: tasks,
	}
}

func failedBy(t *Task, coders ...string) *Task {
	t.FailedBy = coders
	return t
}

func TestPlanningTriggers(t *testing.T) {
	blocked := task("task-3", Blocked)
	blocked.BlockedReason = "spec is silent on retries"
	blocked.BlockedQuestions = StringList{"retry how often?"}
	integ := task("task-4", IntegrationFailed)
	integ.History = append(integ.History, &HistoryEvent{Time: t1, Event: "integration_failed", Reason: "conflict in a.go"})

	tests := []struct {
		name     string
		st       *State
		trigger  string
		triggers []string
		items    []string
		details  map[string]string
	}{
		{
			name: "no task and an open goal", st: planState(),
			trigger: TriggerInitialPlanning, triggers: []string{TriggerInitialPlanning},
			items: []string{"initial:goal-1"}, details: map[string]string{"initial:goal-1": "ship it"},
		},
		{
			name: "no task and a completed goal", st: &State{Goal: Goal{ID: "goal-1", Status: "COMPLETED"}},
			triggers: []string{}, items: []string{},
		},
		{
			name: "only archived tasks", st: &State{Goal: Goal{ID: "goal-1", Status: "IN_PROGRESS"}, Archive: []*Task{task("task-1", Merged)},
				Sprint: Sprint{Scope: SprintScope{Planned: StringList{"task-1"}}}},
			triggers: []string{}, items: []string{},
		},
		{
			// After git liza goal new: the last goal's tasks are archived
			// and the new sprint plans none yet.
			name: "a new goal after an archived one", st: &State{Goal: Goal{ID: "goal-2", Status: "IN_PROGRESS", Description: "next"},
				Archive: []*Task{task("task-1", Merged)}},
			trigger: TriggerInitialPlanning, triggers: []string{TriggerInitialPlanning}, items: []string{"initial:goal-2"},
		},
		{
			name: "quiet board", st: planState(task("task-1", Unclaimed), task("task-2", Claimed), task("task-5", Merged)),
			triggers: []string{}, items: []string{},
		},
		{
			name: "blocked task", st: planState(task("task-1", Claimed), blocked),
			trigger: TriggerBlockedTasks, triggers: []string{TriggerBlockedTasks},
			items:   []string{"blocked:task-3"},
			details: map[string]string{"blocked:task-3": "spec is silent on retries | questions: retry how often?"},
		},
		{
			name: "integration failed", st: planState(integ),
			trigger: TriggerIntegrationFailed, triggers: []string{TriggerIntegrationFailed},
			items: []string{"integration_failed:task-4"}, details: map[string]string{"integration_failed:task-4": "conflict in a.go"},
		},
		{
			name: "hypothesis exhausted", st: planState(failedBy(task("task-6", Unclaimed), "coder-1", "coder-2")),
			trigger: TriggerHypothesisExhausted, triggers: []string{TriggerHypothesisExhausted},
			items: []string{"hypothesis_exhausted:task-6"},
		},
		{
			name: "one failure is not exhaustion", st: planState(failedBy(task("task-6", Unclaimed), "coder-1")),
			triggers: []string{}, items: []string{},
		},
		{
			name: "terminal tasks are not exhausted", st: planState(failedBy(task("task-6", Abandoned), "coder-1", "coder-2")),
			triggers: []string{}, items: []string{},
		},
		{
			name: "immediate discovery not converted",
			st: func() *State {
				s := planState(task("task-1", Claimed))
				s.Discovered = []*Discovery{
					{ID: "disc-1", Urgency: "immediate", Description: "leak", Severity: "high", During: "task-1"},
					{ID: "disc-2", Urgency: "deferred", Description: "typo"},
					{ID: "disc-3", Urgency: "immediate", Description: "done", ConvertedToTask: "task-9"},
				}
				return s
			}(),
			trigger: TriggerImmediateDiscovery, triggers: []string{TriggerImmediateDiscovery},
			items: []string{"discovery:disc-1"}, details: map[string]string{"discovery:disc-1": "high: leak (during task-1)"},
		},
		{
			name: "human notes, all of them",
			st: func() *State {
				s := planState(task("task-1", Claimed))
				s.HumanNotes = []*HumanNote{{Message: "use the retry util", For: "task-1"}, {Message: "sprint ends friday"}}
				return s
			}(),
			trigger: TriggerHumanNotes, triggers: []string{TriggerHumanNotes},
			items: []string{"note:1", "note:2"},
		},
		{
			name: "human notes, not those a planner processed or wrote",
			st: func() *State {
				s := planState(task("task-1", Claimed))
				s.HumanNotes = []*HumanNote{
					{Message: "use the retry util", For: "task-1", By: "human"},
					{Message: "the answer is 3", For: "task-1", By: "planner-1"},
					{Message: "sprint ends friday", By: "human"},
					{Message: "coders: mind the cache", By: "coder-2"},
				}
				s.Agents = map[string]*Agent{
					"planner-2": {Role: string(RolePlanner), Status: "IDLE", NotesProcessed: []int{1}},
					"coder-1":   {Role: string(RoleCoder), Status: "IDLE", NotesProcessed: []int{3}},
				}
				return s
			}(),
			trigger: TriggerHumanNotes, triggers: []string{TriggerHumanNotes},
			items: []string{"note:3", "note:4"},
		},
		{
			name: "human notes, every one processed",
			st: func() *State {
				s := planState(task("task-1", Claimed))
				s.HumanNotes = []*HumanNote{{Message: "a"}, {Message: "b"}}
				s.Agents = map[string]*Agent{"planner-1": {Role: string(RolePlanner), Status: "IDLE", NotesProcessed: []int{2, 1}}}
				return s
			}(),
			triggers: []string{}, items: []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Planning(tc.st)
			if p.Trigger != tc.trigger {
				t.Errorf("Trigger = %q, want %q", p.Trigger, tc.trigger)
			}
			if !slices.Equal(p.Triggers, tc.triggers) {
				t.Errorf("Triggers = %q, want %q", p.Triggers, tc.triggers)
			}
			if !slices.Equal(p.Items, tc.items) {
				t.Errorf("Items = %q, want %q", p.Items, tc.items)
			}
			for item, want := range tc.details {
				if got := p.Details[item]; got != want {
					t.Errorf("Details[%s] = %q, want %q", item, got, want)
				}
			}
			if (p.Fingerprint() == "") != (len(tc.items) == 0) {
				t.Errorf("Fingerprint() = %q with items %q", p.Fingerprint(), p.Items)
			}
		})
	}
}

func TestPlanningPriority(t *testing.T) {
	st := planState(
		task("task-10", Blocked),
		task("task-2", Blocked),
		task("task-4", IntegrationFailed),
		failedBy(task("task-7", Blocked), "coder-1", "coder-2"),
		task("task-1", Merged),
	)
	st.Discovered = []*Discovery{{ID: "disc-1", Urgency: "immediate", Description: "leak"}}
	st.HumanNotes = []*HumanNote{{Message: "hello"}}

	p := Planning(st)
	wantTriggers := []string{TriggerHypothesisExhausted, TriggerBlockedTasks, TriggerIntegrationFailed, TriggerImmediateDiscovery, TriggerHumanNotes}
	if !slices.Equal(p.Triggers, wantTriggers) {
		t.Fatalf("Triggers = %q, want %q", p.Triggers, wantTriggers)
	}
	if p.Trigger != TriggerHypothesisExhausted {
		t.Errorf("Trigger = %q, want %s", p.Trigger, TriggerHypothesisExhausted)
	}
	wantItems := []string{
		"hypothesis_exhausted:task-7",
		"blocked:task-2", "blocked:task-7", "blocked:task-10",
		"integration_failed:task-4",
		"discovery:disc-1",
		"note:1",
	}
	if !slices.Equal(p.Items, wantItems) {
		t.Errorf("Items = %q, want %q", p.Items, wantItems)
	}

	// Each trigger, taken away in priority order, hands over to the next.
	st.Tasks[3].FailedBy = nil
	if got := Planning(st).Trigger; got != TriggerBlockedTasks {
		t.Errorf("without exhaustion: Trigger = %q, want %s", got, TriggerBlockedTasks)
	}
	for _, i := range []int{0, 1, 3} {
		st.Tasks[i].Status = Unclaimed
	}
	if got := Planning(st).Trigger; got != TriggerIntegrationFailed {
		t.Errorf("without blocked tasks: Trigger = %q, want %s", got, TriggerIntegrationFailed)
	}
	st.Tasks[2].Status = Claimed
	if got := Planning(st).Trigger; got != TriggerImmediateDiscovery {
		t.Errorf("without failed merges: Trigger = %q, want %s", got, TriggerImmediateDiscovery)
	}
	st.Discovered[0].ConvertedToTask = "task-11"
	if got := Planning(st).Trigger; got != TriggerHumanNotes {
		t.Errorf("without discoveries: Trigger = %q, want %s", got, TriggerHumanNotes)
	}
	st.HumanNotes = nil
	if got := Planning(st); got.Trigger != "" || len(got.Items) != 0 {
		t.Errorf("quiet board: Trigger = %q, Items = %q", got.Trigger, got.Items)
	}
}

func TestPlanningItemsStable(t *testing.T) {
	st := planState(task("task-1", Claimed), task("task-2", Blocked), task("task-3", Unclaimed))
	st.HumanNotes = []*HumanNote{{Message: "first"}}
	before := Planning(st)

	// Unrelated changes: another task moves on, leases renew, an anomaly
	// and a deferred discovery appear, a new task is added, a blocked
	// task's reason is reworded.
	st.Tasks[0].Status = ReadyForReview
	st.Tasks[0].LeaseExpires = t2
	st.Tasks[2].Status = Claimed
	st.Tasks[1].BlockedReason = "reworded"
	st.Tasks = append(st.Tasks, task("task-4", Draft))
	st.Anomalies = append(st.Anomalies, &Anomaly{ID: "anomaly-1", Type: "spec_gap"})
	st.Discovered = append(st.Discovered, &Discovery{ID: "disc-1", Urgency: "deferred", Description: "later"})
	after := Planning(st)
	if !slices.Equal(before.Items, after.Items) || before.Fingerprint() != after.Fingerprint() {
		t.Errorf("items moved on unrelated changes: %q -> %q", before.Items, after.Items)
	}

	// Something new changes the fingerprint and adds exactly one item.
	st.HumanNotes = append(st.HumanNotes, &HumanNote{Message: "second"})
	next := Planning(st)
	if next.Fingerprint() == after.Fingerprint() {
		t.Errorf("a new note left the fingerprint unchanged")
	}
	var added []string
	for _, it := range next.Items {
		if !slices.Contains(after.Items, it) {
			added = append(added, it)
		}
	}
	if !slices.Equal(added, []string{"note:2"}) {
		t.Errorf("new items = %q, want [note:2]", added)
	}
}

func TestPlanningCounts(t *testing.T) {
	st := planState(
		task("task-1", Merged),
		task("task-2", Claimed),
		task("task-3", ReadyForReview),
		task("task-4", Rejected),
		task("task-5", Approved),
		task("task-6", Unclaimed),
		task("task-7", Draft),
		failedBy(task("task-8", Blocked), "coder-1", "coder-2"),
		task("task-9", IntegrationFailed),
		task("task-10", Superseded),
	)
	st.Archive = []*Task{task("task-0", Merged), task("task-00", Abandoned), task("old-1", Merged)}
	st.Sprint.Scope.Planned = StringList{"task-0", "task-00"} // old-1 is a previous goal's
	st.Discovered = []*Discovery{{ID: "d1", Urgency: "immediate"}, {ID: "d2", Urgency: "immediate", ConvertedToTask: "task-6"}}
	st.HumanNotes = []*HumanNote{{Message: "a"}, {Message: "b"}, {Message: "c"}}
	want := map[string]int{
		CountTotal: 12, CountMerged: 2, CountInProgress: 4, CountUnclaimed: 1, CountDraft: 1,
		CountBlocked: 1, CountIntegrationFailed: 1, CountHypothesisExhausted: 1,
		CountImmediateDiscoveries: 1, CountHumanNotes: 3,
	}
	got := Planning(st).Counts
	for _, k := range CountKeys {
		if got[k] != want[k] {
			t.Errorf("Counts[%s] = %d, want %d", k, got[k], want[k])
		}
	}
	if len(got) != len(CountKeys) {
		t.Errorf("Counts has %d keys, want %d: %v", len(got), len(CountKeys), got)
	}
	if p := Planning(nil); p.Trigger != "" || p.Counts[CountTotal] != 0 {
		t.Errorf("Planning(nil) = %+v", p)
	}
}

func TestGoalComplete(t *testing.T) {
	tests := []struct {
		name string
		st   *State
		want bool
	}{
		{"nil state", nil, false},
		{"no task", planState(), false},
		{"all merged", planState(task("task-1", Merged), task("task-2", Merged)), true},
		{"merged and superseded", planState(task("task-1", Merged), task("task-2", Superseded)), true},
		{"nothing merged", planState(task("task-1", Superseded), task("task-2", Abandoned)), false},
		{"one still open", planState(task("task-1", Merged), task("task-2", Approved)), false},
		{"a draft left", planState(task("task-1", Merged), task("task-2", Draft)), false},
		{"blocked left", planState(task("task-1", Merged), task("task-2", Blocked)), false},
		{"merged only in the archive", &State{Archive: []*Task{task("task-1", Merged)}, Tasks: []*Task{task("task-2", Abandoned)},
			Sprint: Sprint{Scope: SprintScope{Planned: StringList{"task-1", "task-2"}}}}, true},
		{"archive done, board open", &State{Archive: []*Task{task("task-1", Merged)}, Tasks: []*Task{task("task-2", Unclaimed)},
			Sprint: Sprint{Scope: SprintScope{Planned: StringList{"task-1", "task-2"}}}}, false},
		{"merged only by a previous goal", &State{Archive: []*Task{task("task-1", Merged)}, Tasks: []*Task{task("task-2", Abandoned)},
			Sprint: Sprint{Scope: SprintScope{Planned: StringList{"task-2"}}}}, false},
	}
	for _, tc := range tests {
		if got := GoalComplete(tc.st); got != tc.want {
			t.Errorf("%s: GoalComplete = %v, want %v", tc.name, got, tc.want)
		}
	}
}
