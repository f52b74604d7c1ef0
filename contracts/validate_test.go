package contracts

import (
	"slices"
	"strings"
	"testing"
)

func TestValidStateHasNoProblems(t *testing.T) {
	if ps := Validate(validState()); len(ps) > 0 {
		t.Fatalf("problems:\n%s", problemText(ps))
	}
}

// TestValidateRules gives each rule a change that still passes and one that
// breaks it, with the message the broken one must produce.
func TestValidateRules(t *testing.T) {
	type change func(s *State)
	on := func(id string, f func(t *Task)) change {
		return func(s *State) { f(findTask(s, id)) }
	}
	rules := []struct {
		rule      string
		good, bad change
		want      string
	}{
		{"version", func(s *State) { s.Version = 1 }, func(s *State) { s.Version = 2 }, "version: unknown schema version 2: this git-liza reads version 1"},
		{"goal id", func(s *State) { s.Goal.ID, s.Sprint.GoalRef = "g", "g" }, func(s *State) { s.Goal.ID, s.Sprint.GoalRef = "", "" }, "goal: goal has no id"},
		{"goal description", func(s *State) { s.Goal.Description = "x" }, func(s *State) { s.Goal.Description = "" }, "goal: goal has no description"},
		{"goal status", func(s *State) { s.Goal.Status = "DONE" }, func(s *State) { s.Goal.Status = "" }, "goal: goal has no status"},
		{"integration branch set", func(s *State) { s.Config.IntegrationBranch = "main" }, func(s *State) { s.Config.IntegrationBranch = "" }, "config: no integration_branch"},
		{"integration branch space", func(s *State) { s.Config.IntegrationBranch = "team/int-1" }, func(s *State) { s.Config.IntegrationBranch = "my branch" }, `config: integration_branch: invalid branch name "my branch": contains ' '`},
		{"integration branch dots", func(s *State) { s.Config.IntegrationBranch = "v1.2" }, func(s *State) { s.Config.IntegrationBranch = "a..b" }, `contains ".."`},
		{"integration branch dash", func(s *State) { s.Config.IntegrationBranch = "a-b" }, func(s *State) { s.Config.IntegrationBranch = "-b" }, "starts with a dash"},
		{"config tunables", func(s *State) { s.Config.MaxInFlight = 3 }, func(s *State) { s.Config.LeaseDuration = -1 }, "config: lease_duration -1 is negative"},
		{"sprint id", func(s *State) { s.Sprint.ID = "s2" }, func(s *State) { s.Sprint.ID = "" }, "sprint: sprint has no id"},
		{"sprint goal_ref", func(s *State) {}, func(s *State) { s.Sprint.GoalRef = "" }, "sprint: sprint has no goal_ref"},
		{"sprint goal_ref matches", func(s *State) {}, func(s *State) { s.Sprint.GoalRef = "goal-2" }, `sprint: goal_ref "goal-2" does not match goal.id "goal-1"`},

		{"task id", on("task-8", func(t *Task) { t.ID = "task-8b" }), on("task-8", func(t *Task) { t.ID = "Task_8" }), `tasks[Task_8]: invalid task id "Task_8"`},
		{"task id unique", on("task-8", func(t *Task) { t.ID = "task-80" }), on("task-8", func(t *Task) { t.ID = "task-0" }), "archive[task-0]: duplicate task id task-0 (ids are unique across tasks and archive)"},
		{"status known", on("task-8", func(t *Task) { t.Status = Blocked; t.BlockedReason = "x"; t.BlockedQuestions = StringList{"q"} }), on("task-8", func(t *Task) { t.Status = "DONE" }), `tasks[task-8]: unknown status "DONE"`},
		{"priority low", on("task-8", func(t *Task) { t.Priority = 1 }), on("task-8", func(t *Task) { t.Priority = 0 }), "tasks[task-8]: priority 0 out of range 1..5"},
		{"priority high", on("task-8", func(t *Task) { t.Priority = 5 }), on("task-8", func(t *Task) { t.Priority = 6 }), "tasks[task-8]: priority 6 out of range 1..5"},
		{"draft unassigned", on("task-9", func(t *Task) { t.PreviousAssignee = "coder-1" }), on("task-9", func(t *Task) { t.AssignedTo = "coder-8" }), "tasks[task-9]: DRAFT task is assigned to coder-8"},
		{"claimed assigned_to", func(s *State) {}, on("task-2", func(t *Task) { t.AssignedTo = "" }), "tasks[task-2]: CLAIMED task has no assigned_to"},
		{"claimed worktree", func(s *State) {}, on("task-2", func(t *Task) { t.Worktree = "" }), "tasks[task-2]: CLAIMED task has no worktree"},
		{"claimed lease", func(s *State) {}, on("task-2", func(t *Task) { t.LeaseExpires = "" }), "tasks[task-2]: CLAIMED task has no lease_expires"},
		{"claimed base commit", func(s *State) {}, on("task-2", func(t *Task) { t.BaseCommit = "" }), "tasks[task-2]: CLAIMED task has no base_commit"},
		{"ready review commit", func(s *State) {}, on("task-3", func(t *Task) { t.ReviewCommit = "" }), "tasks[task-3]: READY_FOR_REVIEW task has no review_commit"},
		{"ready assigned", func(s *State) {
			findTask(s, "task-3").ReviewingBy = ""
			s.Agents["code-reviewer-1"] = &Agent{Role: "code_reviewer", Status: "IDLE"}
		}, on("task-3", func(t *Task) { t.AssignedTo = "" }), "tasks[task-3]: READY_FOR_REVIEW task has no assigned_to"},
		{"rejected reason", func(s *State) {}, on("task-4", func(t *Task) { t.RejectionReason = "" }), "tasks[task-4]: REJECTED task has no rejection_reason"},
		{"approved by", func(s *State) {}, on("task-5", func(t *Task) { t.ApprovedBy = "" }), "tasks[task-5]: APPROVED task has no approved_by"},
		{"approved review commit", func(s *State) {}, on("task-5", func(t *Task) { t.ReviewCommit = "" }), "tasks[task-5]: APPROVED task has no review_commit"},
		{"blocked reason", func(s *State) {}, on("task-6", func(t *Task) { t.BlockedReason = "" }), "tasks[task-6]: BLOCKED task has no blocked_reason"},
		{"blocked no questions", func(s *State) {}, on("task-6", func(t *Task) { t.BlockedQuestions = nil }), "tasks[task-6]: BLOCKED task has no blocked_questions (want 1 to 3)"},
		{"blocked too many questions", on("task-6", func(t *Task) { t.BlockedQuestions = StringList{"a", "b", "c"} }), on("task-6", func(t *Task) { t.BlockedQuestions = StringList{"a", "b", "c", "d"} }), "tasks[task-6]: BLOCKED task has 4 blocked_questions (want 1 to 3)"},
		{"superseded by", func(s *State) {}, on("task-7", func(t *Task) { t.SupersededBy = nil }), "tasks[task-7]: SUPERSEDED task has no superseded_by"},
		{"rescope reason", func(s *State) {}, on("task-7", func(t *Task) { t.RescopeReason = "" }), "tasks[task-7]: SUPERSEDED task has no rescope_reason"},
		{"merge commit", func(s *State) {}, on("task-1", func(t *Task) { t.MergeCommit = "" }), "tasks[task-1]: MERGED task has no merge_commit"},
		{"merged worktree", func(s *State) {}, on("task-1", func(t *Task) { t.Worktree = ".worktrees/task-1" }), "tasks[task-1]: MERGED task still has worktree .worktrees/task-1"},
		{"done_when", on("task-11", func(t *Task) { t.DoneWhen = "" }), on("task-8", func(t *Task) { t.DoneWhen = "" }), "tasks[task-8]: UNCLAIMED task has no done_when"},
		{"spec_ref", on("task-9", func(t *Task) { t.SpecRef = "" }), on("task-8", func(t *Task) { t.SpecRef = "" }), "tasks[task-8]: UNCLAIMED task has no spec_ref"},
		{"assigned_to role", on("task-4", func(t *Task) { t.AssignedTo = "coder-7" }), on("task-4", func(t *Task) { t.AssignedTo = "planner-1" }), "tasks[task-4]: assigned_to planner-1 is not a coder"},
		{"assigned_to id", func(s *State) {}, on("task-4", func(t *Task) { t.AssignedTo = "Bob" }), `tasks[task-4]: assigned_to: invalid agent id "Bob"`},
		{"reviewing_by role", func(s *State) {}, on("task-3", func(t *Task) { t.ReviewingBy = "coder-1" }), "tasks[task-3]: reviewing_by coder-1 is not a code_reviewer"},
		{"approved_by role", func(s *State) {}, on("task-5", func(t *Task) { t.ApprovedBy = "coder-4" }), "tasks[task-5]: approved_by coder-4 is not a code_reviewer"},
		{"no self-approval", func(s *State) {}, on("task-5", func(t *Task) { t.ApprovedBy = "coder-4" }), "tasks[task-5]: approved by its own coder coder-4 (no self-approval)"},
		{"created time", on("task-8", func(t *Task) { t.Created = "2025-01-10T09:00:00+02:00" }), on("task-8", func(t *Task) { t.Created = "yesterday" }), `tasks[task-8]: created: invalid timestamp "yesterday"`},
		{"lease time", func(s *State) {}, on("task-2", func(t *Task) { t.LeaseExpires = "2025-01-10 09:00" }), `tasks[task-2]: lease_expires: invalid timestamp`},
		{"review lease time", func(s *State) {}, on("task-3", func(t *Task) { t.ReviewLeaseExpires = "soon" }), `tasks[task-3]: review_lease_expires: invalid timestamp "soon"`},
		{"history time", on("task-8", func(t *Task) { t.History[0].Time = t2 }), on("task-8", func(t *Task) { t.History[0].Time = "noon" }), `tasks[task-8]: history[0].time: invalid timestamp "noon"`},
		{"history entry", func(s *State) {}, on("task-8", func(t *Task) { t.History = append(t.History, nil) }), "tasks[task-8]: history[1] is empty"},
		{"iteration", on("task-8", func(t *Task) { t.Iteration = 0 }), on("task-8", func(t *Task) { t.Iteration = -1 }), "tasks[task-8]: iteration -1 is negative"},
		{"review cycles", on("task-3", func(t *Task) { t.ReviewCyclesCurrent = 2 }), on("task-3", func(t *Task) { t.ReviewCyclesCurrent = 3 }), "tasks[task-3]: review_cycles_current 3 exceeds review_cycles_total 2"},
		{"negative review cycles", func(s *State) {}, on("task-3", func(t *Task) { t.ReviewCyclesCurrent = -3 }), "tasks[task-3]: review cycle counts are negative"},
		{"empty task", func(s *State) {}, func(s *State) { s.Tasks = append(s.Tasks, nil) }, "tasks[#11]: empty task entry"},

		{"dependency exists", on("task-8", func(t *Task) { t.DependsOn = StringList{"task-0", "task-7"} }), on("task-8", func(t *Task) { t.DependsOn = StringList{"task-99"} }), "tasks[task-8]: depends on unknown task task-99"},
		{"no self dependency", func(s *State) {}, on("task-8", func(t *Task) { t.DependsOn = StringList{"task-8"} }), "tasks[task-8]: depends on itself"},
		{"no cycle", func(s *State) {
			findTask(s, "task-8").DependsOn = StringList{"task-6"}
			findTask(s, "task-6").DependsOn = StringList{"task-4"}
		}, func(s *State) {
			findTask(s, "task-8").DependsOn = StringList{"task-6"}
			findTask(s, "task-6").DependsOn = StringList{"task-4"}
			findTask(s, "task-4").DependsOn = StringList{"task-8"}
		}, "tasks[task-4]: dependency cycle task-4 -> task-8 -> task-6 -> task-4"},
		{"claimed dependencies merged", on("task-2", func(t *Task) { t.DependsOn = StringList{"task-1", "task-0"} }), on("task-2", func(t *Task) { t.DependsOn = StringList{"task-5"} }), "tasks[task-2]: CLAIMED but dependency task-5 is APPROVED (dependencies must be MERGED)"},

		{"one claimed task per coder", func(s *State) {
			tk := findTask(s, "task-8")
			tk.Status, tk.AssignedTo, tk.Worktree, tk.LeaseExpires, tk.BaseCommit = Claimed, "coder-7", "w", t2, "c"
		}, func(s *State) {
			tk := findTask(s, "task-8")
			tk.Status, tk.AssignedTo, tk.Worktree, tk.LeaseExpires, tk.BaseCommit = Claimed, "coder-1", "w", t2, "c"
		}, "tasks[task-8]: coder-1 already holds CLAIMED task task-2 (one task per agent)"},
		{"integration_fix needs a failure", on("task-2", func(t *Task) {
			t.IntegrationFix = true
			t.History = append(t.History, &HistoryEvent{Time: t1, Event: "integration_failed"})
		}), on("task-2", func(t *Task) { t.IntegrationFix = true }), "tasks[task-2]: integration_fix is set but its history has no integration failure"},
		{"failed_by unique", on("task-8", func(t *Task) { t.FailedBy = StringList{"coder-1", "coder-2"} }), on("task-8", func(t *Task) { t.FailedBy = StringList{"coder-1", "coder-1"} }), "tasks[task-8]: failed_by names coder-1 twice"},
		{"sprint status", func(s *State) { s.Sprint.Status = "CHECKPOINT" }, func(s *State) { s.Sprint.Status = "RUNNING" }, `sprint: unknown sprint status "RUNNING" (want one of IN_PROGRESS, CHECKPOINT, COMPLETED, ABORTED)`},
		{"sprint started", func(s *State) { s.Sprint.Timeline.Deadline = t2 }, func(s *State) { s.Sprint.Timeline.Started = "" }, "sprint: sprint has no timeline.started"},
		{"sprint scope", func(s *State) { s.Sprint.Scope.Planned = StringList{"task-0", "task-8"} }, func(s *State) { s.Sprint.Scope.Stretch = StringList{"task-42"} }, "sprint: scope.stretch names unknown task task-42"},
		{"agents section", func(s *State) { s.Agents = map[string]*Agent{} }, func(s *State) { s.Agents = nil }, "agents: no agents section"},
		{"working agent task", func(s *State) {}, func(s *State) { s.Agents["coder-1"].CurrentTask = "" }, "agents[coder-1]: WORKING without a current_task"},
		{"working agent lease", func(s *State) {}, func(s *State) { s.Agents["coder-1"].LeaseExpires = "" }, "agents[coder-1]: WORKING without a lease_expires"},
		{"handoff next action", func(s *State) {
			s.Handoff = map[string]*Handoff{"task-2": {Agent: "coder-1", Time: t1, Summary: "half done", NextAction: "write the test"}}
		}, func(s *State) {
			s.Handoff = map[string]*Handoff{"task-2": {Agent: "coder-1", Time: t1, Summary: "half done"}}
		}, "handoff[task-2]: handoff has no next_action"},
		{"breaker history", func(s *State) {
			s.CircuitBreaker = &CircuitBreaker{Status: BreakerOK, LastCheck: t1, History: []*BreakerCheck{{Timestamp: t1, Result: BreakerOK}}}
		}, func(s *State) {
			s.CircuitBreaker = &CircuitBreaker{Status: BreakerOK, History: []*BreakerCheck{{Timestamp: t1, Result: "FINE"}}}
		}, `circuit_breaker: history[0]: unknown result "FINE"`},
		{"one review per reviewer", func(s *State) {
			tk := findTask(s, "task-8")
			tk.Status, tk.AssignedTo, tk.ReviewCommit, tk.ReviewingBy = ReadyForReview, "coder-7", "c", "code-reviewer-2"
		}, func(s *State) {
			tk := findTask(s, "task-8")
			tk.Status, tk.AssignedTo, tk.ReviewCommit, tk.ReviewingBy = ReadyForReview, "coder-7", "c", "code-reviewer-1"
		}, "tasks[task-8]: code-reviewer-1 already reviews task task-3 (one review per agent)"},

		{"agent id", func(s *State) { s.Agents["coder-11"] = &Agent{Role: "coder", Status: "IDLE"} }, func(s *State) { s.Agents["bob"] = &Agent{Role: "coder", Status: "IDLE"} }, `agents[bob]: invalid agent id "bob"`},
		{"agent role", func(s *State) {}, func(s *State) { s.Agents["coder-1"].Role = "code_reviewer" }, `agents[coder-1]: role "code_reviewer" does not match the id (want coder)`},
		{"agent status", func(s *State) { s.Agents["coder-1"].Status = "HANDOFF" }, func(s *State) { s.Agents["coder-1"].Status = "BUSY" }, `agents[coder-1]: unknown status "BUSY"`},
		{"agent heartbeat", func(s *State) {}, func(s *State) { s.Agents["coder-1"].Heartbeat = "now" }, `agents[coder-1]: heartbeat: invalid timestamp "now"`},
		{"empty agent", func(s *State) {}, func(s *State) { s.Agents["coder-3"] = nil }, "agents[coder-3]: empty agent entry"},

		{"anomaly type", func(s *State) { s.Anomalies[0].Type = "retry_loop" }, func(s *State) { s.Anomalies[0].Type = "bad_luck" }, `anomalies[anomaly-1]: unknown anomaly type "bad_luck"`},
		{"anomaly details", func(s *State) { s.Anomalies[0].Details["extra"] = 1 }, func(s *State) { delete(s.Anomalies[0].Details, "count") }, "anomalies[anomaly-1]: retry_loop anomaly lacks details count"},
		{"anomaly id unique", func(s *State) {
			s.Anomalies = append(s.Anomalies, &Anomaly{ID: "anomaly-2", Type: "spec_gap"})
		}, func(s *State) {
			s.Anomalies = append(s.Anomalies, &Anomaly{ID: "anomaly-1", Type: "spec_gap"})
		}, "anomalies[anomaly-1]: duplicate anomaly id anomaly-1"},
		{"anomaly task", func(s *State) { s.Anomalies[0].TaskID = "task-0" }, func(s *State) { s.Anomalies[0].TaskID = "task-99" }, "anomalies[anomaly-1]: task_id task-99 names no task"},
		{"anomaly without id", func(s *State) { s.Anomalies = append(s.Anomalies, &Anomaly{Type: "spec_gap"}) }, func(s *State) { s.Anomalies = append(s.Anomalies, &Anomaly{Type: "gap"}) }, `anomalies[#1]: unknown anomaly type "gap"`},

		{"severity", func(s *State) { s.Discovered[0].Severity = "critical" }, func(s *State) { s.Discovered[0].Severity = "huge" }, `discovered[disc-1]: unknown severity "huge"`},
		{"urgency", func(s *State) { s.Discovered[0].Urgency = "immediate" }, func(s *State) { s.Discovered[0].Urgency = "now" }, `discovered[disc-1]: unknown urgency "now"`},
	}
	for _, r := range rules {
		t.Run(r.rule, func(t *testing.T) {
			good := validState()
			r.good(good)
			if ps := Validate(good); len(ps) > 0 {
				t.Errorf("passing case has problems:\n%s", problemText(ps))
			}
			bad := validState()
			r.bad(bad)
			got := problemText(Validate(bad))
			if !strings.Contains(got, r.want) {
				t.Errorf("problems:\n%s\nwant %q", got, r.want)
			}
		})
	}
}

// TestLeftovers: what an older git-liza wrote and the current rules do
// not (one active task per coder, agent entries true to what their agents
// hold) is a leftover, not a problem: a state that has one still
// validates, and Leftovers names it.
func TestLeftovers(t *testing.T) {
	rules := []struct {
		rule      string
		good, bad func(*State)
		want      string
	}{
		// liza-validate.sh: one agent on two active tasks, REJECTED and
		// READY_FOR_REVIEW included.
		{"one active task per coder", func(s *State) {
			tk := findTask(s, "task-8")
			tk.Status, tk.AssignedTo, tk.RejectionReason = Rejected, "coder-7", "r"
		}, func(s *State) {
			tk := findTask(s, "task-8")
			tk.Status, tk.AssignedTo, tk.RejectionReason = Rejected, "coder-2", "r"
		}, "tasks[task-8]: coder-2 already holds READY_FOR_REVIEW task task-3 (one active task per coder)"},
		{"idle agent lease", func(s *State) { s.Agents["planner-1"].SupervisorLease = t2 }, func(s *State) { s.Agents["planner-1"].LeaseExpires = t2 }, "agents[planner-1]: IDLE but keeps a lease_expires"},
		{"working agent holds its task", func(s *State) {
			s.Agents["coder-2"] = &Agent{Role: "coder", Status: "WAITING", CurrentTask: "task-3", LeaseExpires: t2}
		}, func(s *State) {
			s.Agents["coder-2"] = &Agent{Role: "coder", Status: "WORKING", CurrentTask: "task-3", LeaseExpires: t2}
		}, "agents[coder-2]: WORKING on task-3, which it does not hold (under review by code-reviewer-1)"},
		{"reviewing agent holds its review", func(s *State) {}, func(s *State) { findTask(s, "task-3").ReviewingBy = "code-reviewer-2" },
			"agents[code-reviewer-1]: REVIEWING task-3, which it does not hold (under review by code-reviewer-2)"},
	}
	for _, r := range rules {
		t.Run(r.rule, func(t *testing.T) {
			good := validState()
			r.good(good)
			if ps := append(Validate(good), Leftovers(good)...); len(ps) > 0 {
				t.Errorf("passing case has problems:\n%s", problemText(ps))
			}
			bad := validState()
			r.bad(bad)
			if ps := Validate(bad); len(ps) > 0 {
				t.Errorf("a leftover makes the state invalid:\n%s", problemText(ps))
			}
			if got := problemText(Leftovers(bad)); !strings.Contains(got, r.want) {
				t.Errorf("leftovers:\n%s\nwant %q", got, r.want)
			}
		})
	}
}

func TestValidateReportsEveryProblemInOrder(t *testing.T) {
	s := validState()
	s.Version = 0
	findTask(s, "task-2").Worktree = ""
	findTask(s, "task-8").Priority = 9
	s.Agents["coder-1"].Status = "BUSY"
	s.Discovered[0].Urgency = "now"
	ps := Validate(s)
	want := []string{
		"version: unknown schema version 0: this git-liza reads version 1",
		"tasks[task-2]: CLAIMED task has no worktree",
		"tasks[task-8]: priority 9 out of range 1..5",
		`agents[coder-1]: unknown status "BUSY" (want one of STARTING, IDLE, WORKING, REVIEWING, WAITING, HANDOFF)`,
		`discovered[disc-1]: unknown urgency "now" (want one of immediate, deferred)`,
	}
	if got := strings.Split(problemText(ps), "\n"); !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := 0; i < 5; i++ {
		if again := Validate(s); !slices.Equal(again, ps) {
			t.Fatal("Validate is not deterministic")
		}
	}
	if Validate(nil)[0].String() != "no state" {
		t.Error("Validate(nil)")
	}
}

func TestValidateTask(t *testing.T) {
	tk := task("task-3", Claimed)
	got := problemText(ValidateTask(tk))
	for _, want := range []string{"tasks[task-3]: CLAIMED task has no assigned_to", "tasks[task-3]: CLAIMED task has no worktree"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant %q", got, want)
		}
	}
	if ps := ValidateTask(task("task-3", Unclaimed)); len(ps) > 0 {
		t.Errorf("problems:\n%s", problemText(ps))
	}
	if got := problemText(ValidateTask(nil)); got != "task: empty task entry" {
		t.Errorf("ValidateTask(nil) = %q", got)
	}
}

func TestProblemString(t *testing.T) {
	if s := (Problem{Msg: "m"}).String(); s != "m" {
		t.Error(s)
	}
	if s := (Problem{Where: "w", Msg: "m"}).String(); s != "w: m" {
		t.Error(s)
	}
}

func TestValidBranch(t *testing.T) {
	for _, name := range []string{"integration", "main", "team/int", "v1.2", "a-b_c"} {
		if err := ValidBranch(name); err != nil {
			t.Errorf("ValidBranch(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", "@", "-x", "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, "a@{1}", "a/", "/a", "a//b", ".a", "a/.b", "a.lock", "a/b.lock/c", "a.", "a\tb", "a\x7f"} {
		if err := ValidBranch(name); err == nil {
			t.Errorf("ValidBranch(%q) succeeded", name)
		} else {
			wantCode(t, err, CodeInvalid)
		}
	}
}

func TestValidateParts(t *testing.T) {
	s := validState()
	if ps := ValidateHeader(s); len(ps) > 0 {
		t.Errorf("header: %s", problemText(ps))
	}
	s.Sprint.GoalRef = "other"
	if got := problemText(ValidateHeader(s)); !strings.Contains(got, "sprint: goal_ref") {
		t.Errorf("header: %q", got)
	}
	if ps := ValidateAgent("coder-1", &Agent{Role: "coder", Status: "IDLE"}); len(ps) > 0 {
		t.Errorf("agent: %s", problemText(ps))
	}
	if got := problemText(ValidateAgent("coder-1", &Agent{Role: "planner", Status: "IDLE"})); got != `agents[coder-1]: role "planner" does not match the id (want coder)` {
		t.Errorf("agent: %q", got)
	}
	if ps := ValidateAnomaly(&Anomaly{ID: "a-1", Type: "spec_gap", TaskID: "task-99"}); len(ps) > 0 {
		t.Errorf("anomaly: %s", problemText(ps))
	}
	if got := problemText(ValidateAnomaly(&Anomaly{Type: "external_blocker"})); got != "anomalies[]: external_blocker anomaly lacks details blocker_service" {
		t.Errorf("anomaly: %q", got)
	}
	if ps := ValidateDiscovery(&Discovery{ID: "d-1", Severity: "high"}); len(ps) > 0 {
		t.Errorf("discovery: %s", problemText(ps))
	}
	if got := problemText(ValidateDiscovery(&Discovery{ID: "d-1", Severity: "meh"})); !strings.HasPrefix(got, `discovered[d-1]: unknown severity "meh"`) {
		t.Errorf("discovery: %q", got)
	}
	if got := problemText(ValidateDiscovery(nil)); got != "discovered[]: empty discovery entry" {
		t.Errorf("discovery: %q", got)
	}
}
