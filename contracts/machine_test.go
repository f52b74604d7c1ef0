package contracts

import (
	"slices"
	"strings"
	"testing"
)

// allowed is the expected state machine, written out independently of the
// code: seed 004's table, the operational edges, and self-loops for every
// non-terminal status.
var allowed = map[Status][]Status{
	Draft:             {Draft, Unclaimed, Abandoned},
	Unclaimed:         {Unclaimed, Claimed, Blocked, Superseded, Abandoned},
	Claimed:           {Claimed, Unclaimed, ReadyForReview, Blocked},
	ReadyForReview:    {ReadyForReview, Approved, Rejected, Blocked, IntegrationFailed},
	Rejected:          {Rejected, Claimed, Blocked},
	Approved:          {Approved, Merged, IntegrationFailed},
	Blocked:           {Blocked, Unclaimed, Superseded, Abandoned},
	IntegrationFailed: {IntegrationFailed, Claimed, Blocked},
	Merged:            {},
	Superseded:        {},
	Abandoned:         {},
}

func TestTransitionMatrix(t *testing.T) {
	if len(allowed) != len(Statuses) {
		t.Fatalf("expected table covers %d statuses, want %d", len(allowed), len(Statuses))
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			want := slices.Contains(allowed[from], to)
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
			err := CheckTransition("task-3", from, to)
			if (err == nil) != want {
				t.Errorf("CheckTransition(%s, %s) = %v, want ok=%v", from, to, err, want)
			}
			if err != nil {
				wantCode(t, err, CodeInvalid)
				prefix := "task-3: illegal transition " + string(from) + " -> " + string(to)
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("CheckTransition(%s, %s) = %q, want prefix %q", from, to, err, prefix)
				}
			}
		}
	}
}

func TestForbiddenTransitions(t *testing.T) {
	forbidden := [][2]Status{{Draft, Claimed}, {Claimed, Merged}, {Claimed, Approved}}
	for _, term := range []Status{Merged, Superseded, Abandoned} {
		for _, to := range Statuses {
			forbidden = append(forbidden, [2]Status{term, to})
		}
	}
	for _, f := range forbidden {
		if CanTransition(f[0], f[1]) {
			t.Errorf("%s -> %s must be forbidden", f[0], f[1])
		}
	}
	if err := CheckTransition("task-3", Claimed, Merged); err == nil || err.Error() != "task-3: illegal transition CLAIMED -> MERGED (allowed: UNCLAIMED, READY_FOR_REVIEW, BLOCKED)" {
		t.Errorf("CheckTransition = %v", err)
	}
	if err := CheckTransition("task-3", Merged, Claimed); err == nil || !strings.Contains(err.Error(), "MERGED is terminal") {
		t.Errorf("CheckTransition from terminal = %v", err)
	}
	if err := CheckTransition("task-3", "DONE", Claimed); err == nil || !strings.Contains(err.Error(), `unknown status "DONE"`) {
		t.Errorf("CheckTransition from unknown = %v", err)
	}
	if CanTransition("DONE", "DONE") {
		t.Error("an unknown status may not stay put")
	}
}

func TestNext(t *testing.T) {
	for _, from := range Statuses {
		var want []Status
		for _, s := range Statuses {
			if s != from && slices.Contains(allowed[from], s) {
				want = append(want, s)
			}
		}
		if got := Next(from); !slices.Equal(got, want) {
			t.Errorf("Next(%s) = %v, want %v", from, got, want)
		}
	}
}

func TestCheckStateTransition(t *testing.T) {
	cases := []struct {
		name   string
		change func(s *State)
		want   string // substring of the problems; "" means none
	}{
		{"unchanged", func(s *State) {}, ""},
		{"allowed move", func(s *State) {
			tk := findTask(s, "task-8")
			tk.Status, tk.AssignedTo = Claimed, "coder-7"
			tk.History = append(tk.History, &HistoryEvent{Time: t1, Event: "claimed"})
		}, ""},
		{"field update in place", func(s *State) { findTask(s, "task-2").LeaseExpires = t1 }, ""},
		{"illegal move", func(s *State) { findTask(s, "task-2").Status = Merged }, "tasks[task-2]: illegal transition CLAIMED -> MERGED"},
		{"draft claimed", func(s *State) { findTask(s, "task-9").Status = Claimed }, "tasks[task-9]: illegal transition DRAFT -> CLAIMED"},
		{"terminal changed", func(s *State) { findTask(s, "task-1").Description = "new" }, "tasks[task-1]: MERGED task changed"},
		{"terminal reopened", func(s *State) { findTask(s, "task-11").Status = Unclaimed }, "tasks[task-11]: ABANDONED task changed"},
		{"archive terminal", func(s *State) {
			s.Archive = append(s.Archive, s.Tasks[0])
			s.Tasks = s.Tasks[1:]
		}, ""},
		{"archive terminal changed", func(s *State) {
			s.Tasks[0].MergeCommit = "zzz"
			s.Archive = append(s.Archive, s.Tasks[0])
			s.Tasks = s.Tasks[1:]
		}, "tasks[task-1]: MERGED task changed"},
		{"archive live task", func(s *State) {
			s.Archive = append(s.Archive, s.Tasks[1])
			s.Tasks = append(s.Tasks[:1], s.Tasks[2:]...)
		}, "tasks[task-2]: archived while CLAIMED"},
		{"task disappears", func(s *State) { s.Tasks = s.Tasks[1:] }, "tasks[task-1]: task disappeared"},
		{"archived changed", func(s *State) { s.Archive[0].Description = "x" }, "archive[task-0]: archived task changed"},
		{"archived disappears", func(s *State) { s.Archive = nil }, "archive[task-0]: archived task disappeared"},
		{"archived back on board", func(s *State) {
			s.Tasks = append(s.Tasks, s.Archive[0])
			s.Archive = nil
		}, "archive[task-0]: archived task moved back to the board"},
		{"new unclaimed", func(s *State) { s.Tasks = append(s.Tasks, task("task-20", Unclaimed)) }, ""},
		{"new draft", func(s *State) { s.Tasks = append(s.Tasks, task("task-20", Draft)) }, ""},
		{"new claimed", func(s *State) { s.Tasks = append(s.Tasks, task("task-20", Claimed)) }, "tasks[task-20]: new task appears as CLAIMED"},
		{"new in archive", func(s *State) { s.Archive = append(s.Archive, task("task-20", Merged)) }, "archive[task-20]: task appears in the archive"},
		{"history appended", func(s *State) {
			tk := findTask(s, "task-2")
			tk.History = append(tk.History, &HistoryEvent{Time: t1, Event: "checkpoint"})
		}, ""},
		{"history rewritten", func(s *State) { findTask(s, "task-2").History[0].Agent = "planner-2" }, "tasks[task-2]: history was rewritten"},
		{"history truncated", func(s *State) { findTask(s, "task-2").History = nil }, "tasks[task-2]: history was rewritten"},
		{"alignment appended", func(s *State) {
			s.Goal.AlignmentHistory = append(s.Goal.AlignmentHistory, &AlignmentEntry{Time: t1, Event: "task_added"})
		}, ""},
		{"anomaly appended", func(s *State) {
			s.Anomalies = append(s.Anomalies, &Anomaly{ID: "anomaly-2", Type: "spec_gap"})
		}, ""},
		{"anomaly removed", func(s *State) { s.Anomalies = nil }, "anomalies: entries were changed or removed"},
		{"anomaly edited", func(s *State) { s.Anomalies[0].Details["count"] = 4 }, "anomalies: entries were changed"},
		{"note edited", func(s *State) { s.HumanNotes[0].Message = "bye" }, "human_notes: entries were changed"},
		{"discovery converted", func(s *State) { s.Discovered[0].ConvertedToTask = "task-20" }, ""},
		{"discovery edited", func(s *State) { s.Discovered[0].Severity = "high" }, "discovered: entries were changed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prev := validState()
			prev.SpecChanges = []*SpecChange{{Timestamp: t0, Spec: "a.md", Change: "x"}}
			prev.Goal.AlignmentHistory = []*AlignmentEntry{{Time: t0, Event: "created"}}
			next := clone(t, prev)
			tc.change(next)
			got := problemText(CheckStateTransition(prev, next))
			if tc.want == "" && got != "" {
				t.Fatalf("unexpected problems:\n%s", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("problems:\n%s\nwant %q", got, tc.want)
			}
		})
	}

	t.Run("spec changes and alignment rewritten", func(t *testing.T) {
		prev := validState()
		prev.SpecChanges = []*SpecChange{{Timestamp: t0, Spec: "a.md", Change: "x"}}
		prev.Goal.AlignmentHistory = []*AlignmentEntry{{Time: t0, Event: "created"}}
		next := clone(t, prev)
		next.SpecChanges = nil
		next.Goal.AlignmentHistory[0].Reason = "edited"
		got := problemText(CheckStateTransition(prev, next))
		for _, want := range []string{"spec_changes: entries were changed", "goal.alignment_history: entries were changed"} {
			if !strings.Contains(got, want) {
				t.Errorf("problems:\n%s\nwant %q", got, want)
			}
		}
	})
}
