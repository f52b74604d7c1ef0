package contracts

import (
	"strings"
	"testing"
)

const (
	t0 = "2025-01-10T09:00:00Z"
	t1 = "2025-01-10T10:00:00Z"
	t2 = "2025-01-10T11:00:00Z"
)

// task returns a ready task with the gates every non-draft task needs.
func task(id string, status Status) *Task {
	return &Task{
		ID:          id,
		Description: "do " + id,
		Status:      status,
		Priority:    2,
		Created:     t0,
		SpecRef:     "specs/x.md#" + id,
		DoneWhen:    "tests for " + id + " pass",
		Scope:       "x",
		History:     []*HistoryEvent{{Time: t0, Event: "created", Agent: "planner-1"}},
	}
}

// validState returns a state with no problems that has a task in every
// status.
func validState() *State {
	merged := task("task-1", Merged)
	merged.AssignedTo, merged.ApprovedBy = "coder-9", "code-reviewer-1"
	merged.ReviewCommit, merged.MergeCommit = "abc1", "abc2"

	claimed := task("task-2", Claimed)
	claimed.DependsOn = StringList{"task-1"}
	claimed.AssignedTo, claimed.Worktree = "coder-1", ".worktrees/task-2"
	claimed.LeaseExpires, claimed.BaseCommit = t2, "abc2"
	claimed.Iteration = 1

	ready := task("task-3", ReadyForReview)
	ready.AssignedTo, ready.ReviewCommit = "coder-2", "def1"
	ready.ReviewingBy, ready.ReviewLeaseExpires = "code-reviewer-1", t2
	ready.ReviewCyclesCurrent, ready.ReviewCyclesTotal = 1, 2

	rejected := task("task-4", Rejected)
	rejected.AssignedTo, rejected.RejectionReason = "coder-3", "no tests"

	approved := task("task-5", Approved)
	approved.AssignedTo, approved.ApprovedBy, approved.ReviewCommit = "coder-4", "code-reviewer-2", "fed1"

	blocked := task("task-6", Blocked)
	blocked.BlockedReason = "spec unclear"
	blocked.BlockedQuestions = StringList{"which format?"}

	superseded := task("task-7", Superseded)
	superseded.SupersededBy, superseded.RescopeReason = StringList{"task-8"}, "too big"

	draft := task("task-9", Draft)
	draft.DoneWhen, draft.SpecRef = "", ""

	failed := task("task-10", IntegrationFailed)
	failed.AssignedTo, failed.ApprovedBy, failed.ReviewCommit = "coder-5", "code-reviewer-1", "aaa1"

	archived := task("task-0", Merged)
	archived.MergeCommit = "000a"

	return &State{
		Version: 1,
		Goal:    Goal{ID: "goal-1", Description: "build it", Status: "IN_PROGRESS", Created: t0},
		Config:  DefaultConfig(),
		Sprint:  Sprint{ID: "sprint-1", GoalRef: "goal-1", Status: "IN_PROGRESS", Timeline: SprintTimeline{Started: t0}},
		Agents: map[string]*Agent{
			"planner-1":       {Role: "planner", Status: "IDLE"},
			"coder-1":         {Role: "coder", Status: "WORKING", CurrentTask: "task-2", LeaseExpires: t2, Heartbeat: t1},
			"code-reviewer-1": {Role: "code_reviewer", Status: "REVIEWING", CurrentTask: "task-3", LeaseExpires: t2},
		},
		Tasks: []*Task{
			merged, claimed, ready, rejected, approved, blocked, superseded,
			task("task-8", Unclaimed), draft, failed, task("task-11", Abandoned),
		},
		Archive: []*Task{archived},
		Anomalies: []*Anomaly{{
			ID: "anomaly-1", Type: "retry_loop", TaskID: "task-2", LoggedBy: "coder-1", Timestamp: t1,
			Details: Extra{"count": 3, "error_pattern": "timeout"},
		}},
		Discovered: []*Discovery{{ID: "disc-1", By: "coder-1", During: "task-2", Description: "slow", Severity: "low", Urgency: "deferred"}},
		HumanNotes: []*HumanNote{{Timestamp: t0, Message: "hello"}},
	}
}

// clone deep-copies a state through YAML.
func clone(t *testing.T, s *State) *State {
	t.Helper()
	data, err := MarshalState(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseState(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return c
}

func findTask(s *State, id string) *Task {
	for _, t := range append(s.Tasks, s.Archive...) {
		if t != nil && t.ID == id {
			return t
		}
	}
	return nil
}

func problemText(ps []Problem) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

func wantCode(t *testing.T, err error, code Code) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("error %q has code %d, want %d", e, e.Code, code)
	}
}
