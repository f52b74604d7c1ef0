package contracts

import (
	"fmt"
	"strings"
	"testing"
)

// flood is n bytes of one word repeated.
func flood(n int, word string) string { return strings.Repeat(word+" ", n/(len(word)+1)) }

// floodedTask is sampleTask after every agent that writes on it wrote as
// much as a task file holds: the planner's description, done_when and
// paths, the coder's checkpoint (2,000 assumptions, 1,500 files), the
// reviewer's rejection (reason and feedback), the session's handoff.
func floodedTask() (*Task, *Handoff) {
	tk := sampleTask()
	tk.Iteration = 2
	tk.Status = ReadyForReview
	tk.ReviewCommit = "2222222222222222222222222222222222222222"
	tk.Description = flood(150_000, "description")
	tk.DoneWhen = flood(80_000, "done")
	tk.Scope = flood(60_000, "scope")
	for i := range 3000 {
		tk.Paths = append(tk.Paths, fmt.Sprintf("src/p%d/**", i))
		tk.DependsOn = append(tk.DependsOn, fmt.Sprintf("task-%d", 1000+i))
	}
	tk.RejectionReason = flood(100_000, "reason")
	tk.RejectionFeedback = flood(200_000, "feedback")
	cp := &Checkpoint{Intent: flood(60_000, "intent"), Validation: flood(40_000, "validation"), Risks: flood(30_000, "risk")}
	for i := range 2000 {
		cp.Assumptions = append(cp.Assumptions, fmt.Sprintf("assumption %d holds", i))
	}
	for i := range 1500 {
		cp.FilesToModify = append(cp.FilesToModify, fmt.Sprintf("src/p%d/file.go", i))
	}
	tk.History = append(tk.History,
		&HistoryEvent{Time: t1, Event: "checkpoint", Agent: "coder-1", Checkpoint: cp},
		&HistoryEvent{Time: t1, Event: "rejected", Agent: "code-reviewer-1", Reason: tk.RejectionReason})
	return tk, &Handoff{Agent: "coder-1", Time: t2, Summary: flood(100_000, "summary"), NextAction: flood(50_000, "next")}
}

// floodedNotes are 400 pending human notes of 5 KB each.
func floodedNotes() []NumberedNote {
	var ns []NumberedNote
	for i := range 400 {
		ns = append(ns, NumberedNote{N: i + 1, HumanNote: &HumanNote{Timestamp: t1, Message: flood(5000, fmt.Sprintf("note%d", i))}})
	}
	return ns
}

// The session context of a prompt (what the board says, after the
// contract's texts) stays within PromptContextMax whatever the board
// holds, and what an agent acts on survives it: its task, commits and
// every instruction, whole. A context that fits is not touched.
func TestPromptFitsWhateverTheBoardHolds(t *testing.T) {
	tk, h := floodedTask()
	integration := *tk
	integration.History = append(integration.History[:len(integration.History):len(integration.History)],
		&HistoryEvent{Time: t2, Event: "integration_failed", Reason: flood(300_000, "output") + "FAIL: TestRetry"})
	planning := &PlanningContext{Trigger: TriggerBlockedTasks, Triggers: []string{TriggerBlockedTasks}, Details: map[string]string{}, Counts: map[string]int{}}
	for i := range 5000 {
		item := fmt.Sprintf("blocked:task-%d", i)
		planning.Items = append(planning.Items, item)
		planning.Details[item] = flood(1000, "why")
	}
	goal := Goal{ID: "goal-1", Description: flood(200_000, "goal"), SpecRef: "specs/vision.md"}
	sprint := Sprint{ID: "sprint-1"}
	for i := range 20_000 {
		sprint.Scope.Planned = append(sprint.Scope.Planned, fmt.Sprintf("task-%d", i))
	}
	for _, c := range []struct {
		name  string
		pc    PromptContext
		whole []string
	}{
		{"coder after a rejection, with a handoff", PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk, Handoff: h, HumanNotes: floodedNotes()},
			[]string{"TASK ID: task-3\n", "BASE COMMIT: " + tk.BaseCommit + "\n", "ITERATION: 2\n", "git liza submit task-3", "git liza checkpoint task-3", "exit 42."}},
		{"coder on an integration fix", PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: &integration},
			[]string{"INTEGRATION FIX:\n", "FAIL: TestRetry", "git merge " + tk.BaseCommit}},
		{"reviewer", PromptContext{AgentID: "code-reviewer-1", Role: RoleReviewer, ProjectRoot: "/p", Task: tk, HumanNotes: floodedNotes()},
			[]string{"COMMIT TO REVIEW: " + tk.ReviewCommit + "\n", "AUTHOR: coder-1\n", "git liza verdict task-3 approve --commit " + tk.ReviewCommit}},
		{"planner", PromptContext{AgentID: "planner-1", Role: RolePlanner, ProjectRoot: "/p", Planning: planning, Goal: &goal, Sprint: &sprint, HumanNotes: floodedNotes()},
			[]string{"WAKE TRIGGER: BLOCKED_TASKS\n", "GOAL: goal-1\n", "  - blocked:task-0: why", "1. BLOCKED_TASKS: ", "Exit 0 when this wake's work is done."}},
	} {
		p, err := BuildPrompt(c.pc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, ctx, ok := strings.Cut(p, "=== SESSION ===")
		if !ok {
			t.Fatalf("%s: no session context", c.name)
		}
		if len(ctx) > PromptContextMax {
			t.Errorf("%s: a session context of %d bytes, over %d", c.name, len(ctx), PromptContextMax)
		}
		wantIn(t, p, append(c.whole, "[…", "characters cut…]", "was cut to fit this prompt"), nil)
		if strings.Count(p, "INSTRUCTIONS:\n") != 1 {
			t.Errorf("%s: the instructions are not there once", c.name)
		}
	}
}

// A context within the bound is written as it always was, however long
// one of its texts: nothing is cut unless the whole is too long.
func TestPromptUncutWhenItFits(t *testing.T) {
	tk := sampleTask()
	tk.RejectionFeedback = flood(PromptContextMax/2, "feedback")
	tk.History = append(tk.History, &HistoryEvent{Time: t1, Event: "rejected", Agent: "code-reviewer-1", Reason: "see feedback"})
	p, err := BuildPrompt(PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk})
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, p, []string{strings.TrimSpace(tk.RejectionFeedback) + "\n"}, []string{"cut"})
}
