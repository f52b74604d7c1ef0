package contracts

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTexts(t *testing.T) {
	want := []string{"CORE", "MULTI_AGENT_MODE", "PAIRING_MODE", "roles/CODER", "roles/CODE_REVIEWER", "roles/PLANNER"}
	if got := TextNames(); !slices.Equal(got, want) {
		t.Fatalf("TextNames() = %q, want %q", got, want)
	}
	for _, name := range want {
		s, ok := Text(name)
		if !ok || !strings.HasPrefix(s, "# ") {
			t.Errorf("Text(%q) = %.40q, %v; want a markdown text", name, s, ok)
		}
		if s2, ok := Text(name + ".md"); !ok || s2 != s {
			t.Errorf("Text(%q) differs from Text(%q)", name+".md", name)
		}
	}
	for _, name := range []string{"", "NOPE", "../prompt.go", "texts/CORE", "roles", "/CORE"} {
		if _, ok := Text(name); ok {
			t.Errorf("Text(%q) found a text", name)
		}
	}
	core, _ := Text(TextCore)
	for _, s := range []string{"Mode: Liza", "Mode: Pairing", "=== ASSIGNED TASK ==="} {
		if !strings.Contains(core, s) {
			t.Errorf("CORE lacks the mode gate's %q", s)
		}
	}
}

func TestParseRole(t *testing.T) {
	for in, want := range map[string]Role{
		"planner": RolePlanner, "coder": RoleCoder, "code-reviewer": RoleReviewer,
		"code_reviewer": RoleReviewer, "Reviewer": RoleReviewer,
	} {
		if got, err := ParseRole(in); err != nil || got != want {
			t.Errorf("ParseRole(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "human", "coder-1", "judge"} {
		if _, err := ParseRole(in); err == nil {
			t.Errorf("ParseRole(%q) succeeded", in)
		}
	}
}

func TestNotesFor(t *testing.T) {
	notes := []*HumanNote{
		{Message: "all"}, {Message: "task", For: "task-3"}, {Message: "agent", For: "coder-1"},
		{Message: "other task", For: "task-4"}, {Message: "other agent", For: "coder-2"}, nil,
	}
	var got []string
	for _, n := range NotesFor(notes, "coder-1", "task-3") {
		got = append(got, n.Message)
	}
	if want := []string{"all", "task", "agent"}; !slices.Equal(got, want) {
		t.Errorf("NotesFor = %q, want %q", got, want)
	}
	if n := NotesFor(notes, "", ""); len(n) != 1 {
		t.Errorf("NotesFor with no agent and no task = %d notes, want the one for everyone", len(n))
	}
}

// sampleTask is a claimed task as the prompts see it.
func sampleTask() *Task {
	tk := task("task-3", Claimed)
	tk.Description = "Add retries to the HTTP client"
	tk.DoneWhen = "- go test ./client passes\n- a 503 is retried 3 times"
	tk.Scope = "IN: client/\nOUT: server/"
	tk.Paths = StringList{"client/**"}
	tk.MaxFiles = 4
	tk.AssignedTo, tk.Worktree = "coder-1", ".worktrees/task-3"
	tk.BaseCommit, tk.Iteration = "1111111111111111111111111111111111111111", 1
	return tk
}

func TestBuildPromptErrors(t *testing.T) {
	tests := []struct {
		name string
		pc   PromptContext
		msg  string
	}{
		{"no role", PromptContext{AgentID: "coder-1", Task: sampleTask()}, "a prompt needs a role"},
		{"human", PromptContext{Role: RoleHuman}, `no prompt for role "human"`},
		{"unknown role", PromptContext{Role: "judge"}, `no prompt for role "judge"`},
		{"coder without task", PromptContext{Role: RoleCoder, AgentID: "coder-1"}, "a coder prompt needs a task"},
		{"reviewer without task", PromptContext{Role: RoleReviewer, AgentID: "code-reviewer-1"}, "a code reviewer prompt needs a task"},
		{"reviewer without commit", PromptContext{Role: RoleReviewer, AgentID: "code-reviewer-1", Task: sampleTask()}, "task task-3 has no commit to review"},
	}
	for _, tc := range tests {
		_, err := BuildPrompt(tc.pc)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalid || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%s: err = %v, want exit 1 with %q", tc.name, err, tc.msg)
		}
	}
}

// wantIn checks that every wanted string is in the prompt, and that none
// of the unwanted ones is in its context sections (the contract texts name
// them all).
func wantIn(t *testing.T, prompt string, want, unwanted []string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(prompt, s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
	_, ctx, ok := strings.Cut(prompt, "\n=== SESSION ===\n")
	if !ok {
		t.Fatalf("prompt has no === SESSION === section")
	}
	for _, s := range unwanted {
		if strings.Contains(ctx, s) {
			t.Errorf("prompt context has %q", s)
		}
	}
}

// contractParts checks that the prompt holds CORE, the multi-agent
// contract (a coder's without the sections it does not act on) and exactly
// its own role's section.
func contractParts(t *testing.T, prompt, role string) {
	t.Helper()
	whole := []string{TextCore, TextMultiAgent, role}
	if role == TextCoder {
		whole = []string{TextCore, role}
		for _, sec := range multiAgentSections(t) {
			switch in, out := strings.Contains(prompt, sec.body), slices.Contains(coderLeavesOut, sec.heading); {
			case in && out:
				t.Errorf("coder prompt holds section %q of MULTI_AGENT_MODE, which it leaves out", sec.heading)
			case !in && !out:
				t.Errorf("coder prompt lacks section %q of MULTI_AGENT_MODE", sec.heading)
			}
		}
	}
	for _, name := range whole {
		s, _ := Text(name)
		if !strings.Contains(prompt, strings.TrimSpace(s)) {
			t.Errorf("prompt lacks the text %s", name)
		}
	}
	for _, name := range []string{TextPairing, TextPlanner, TextCoder, TextCodeReviewer} {
		if name == role {
			continue
		}
		s, _ := Text(name)
		if head, _, _ := strings.Cut(s, "\n"); strings.Contains(prompt, head) {
			t.Errorf("prompt holds the text %s", name)
		}
	}
	if len(prompt) >= 30*1024 {
		t.Errorf("prompt is %d bytes, want under 30 KB", len(prompt))
	}
}

func TestBuildPromptCoder(t *testing.T) {
	tk := sampleTask()
	pc := PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/src/proj", Task: tk, Generation: 2,
		HumanNotes: []NumberedNote{{N: 2, HumanNote: &HumanNote{Timestamp: t1, Message: "reuse retry.Do", For: "task-3", By: "ada"}}}}
	p, err := BuildPrompt(pc)
	if err != nil {
		t.Fatal(err)
	}
	contractParts(t, p, TextCoder)
	wantIn(t, p, []string{
		"ROLE: Coder\n", "AGENT ID: coder-1\n", "GENERATION: 2\n", "PROJECT ROOT: /src/proj\n",
		"=== ASSIGNED TASK ===\nTASK ID: task-3\n",
		"WORKTREE: /src/proj/.worktrees/task-3\n",
		"ITERATION: 1\n",
		"DESCRIPTION: Add retries to the HTTP client\n",
		"DONE WHEN:\n  - go test ./client passes\n  - a 503 is retried 3 times\n",
		"SCOPE:\n  IN: client/\n  OUT: server/\n",
		"PATHS: client/**\n", "LIMITS: at most 4 files\n",
		"INSTRUCTIONS:\n  1. cd /src/proj/.worktrees/task-3",
		"git liza checkpoint task-3 --intent", "git liza submit task-3",
		"=== HUMAN NOTES ===\n- note 2, " + t1 + " (for task-3, by ada):\n  reuse retry.Do\n",
	}, []string{"REJECTION REASON", "INTEGRATION FIX", "HANDOFF", "=== REVIEW TASK ===", "=== PLANNING CONTEXT ==="})

	// A worktree given by the supervisor wins over the task's.
	pc.Worktree = "/elsewhere/task-3"
	p, _ = BuildPrompt(pc)
	wantIn(t, p, []string{"WORKTREE: /elsewhere/task-3\n"}, []string{"/src/proj/.worktrees"})
}

func TestBuildPromptCoderAfterRejection(t *testing.T) {
	tk := sampleTask()
	tk.Iteration = 2
	tk.RejectionReason = "Blockers: 1\n- client/retry.go:12 - no backoff"
	tk.History = append(tk.History,
		&HistoryEvent{Time: t1, Event: "rejected", Agent: "code-reviewer-1", Reason: tk.RejectionReason},
		&HistoryEvent{Time: t2, Event: "resumed", Agent: "coder-1"})
	pc := PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk,
		Handoff: &Handoff{Agent: "coder-1", Time: t2, Summary: "tests written", NextAction: "add backoff"}}
	p, err := BuildPrompt(pc)
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, p, []string{
		"ITERATION: 2\n",
		"REJECTION REASON (by code-reviewer-1):\n  Blockers: 1\n  - client/retry.go:12 - no backoff\n",
		"HANDOFF (from coder-1 at " + t2 + "):\n  SUMMARY: tests written\n  NEXT ACTION: add backoff\n",
	}, nil)

	// Approved since: the old rejection is history, not feedback.
	tk.History = append(tk.History, &HistoryEvent{Time: t2, Event: "approved", Agent: "code-reviewer-1"})
	p, _ = BuildPrompt(PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk})
	wantIn(t, p, nil, []string{"REJECTION REASON"})

	// An integration fix says why the merge failed and what to merge.
	tk.IntegrationFix = true
	tk.History = append(tk.History, &HistoryEvent{Time: t2, Event: "integration_failed", Reason: "conflict in client/retry.go"})
	p, _ = BuildPrompt(PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk})
	wantIn(t, p, []string{
		"INTEGRATION FIX:\n  The approved work did not merge: conflict in client/retry.go\n",
		"git merge " + tk.BaseCommit,
	}, nil)

	// Sent back before review: nobody approved it.
	tk.History = append(tk.History, &HistoryEvent{Time: t2, Event: "integration_failed", From: string(ReadyForReview),
		Reason: "merge conflict in client/retry.go with integration"})
	p, _ = BuildPrompt(PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk})
	wantIn(t, p, []string{
		"INTEGRATION FIX:\n  The submitted work no longer merges, so it went back to you before review: merge conflict in client/retry.go with integration\n",
	}, []string{"approved work"})
}

func TestBuildPromptReviewer(t *testing.T) {
	tk := sampleTask()
	tk.Status = ReadyForReview
	tk.ReviewCommit = "2222222222222222222222222222222222222222"
	tk.ReviewingBy = "code-reviewer-1"
	tk.History = append(tk.History, &HistoryEvent{Time: t1, Event: "checkpoint", Agent: "coder-1",
		Checkpoint: &Checkpoint{Intent: "retry 503s", Validation: "go test ./client", FilesToModify: StringList{"client/retry.go"}, Assumptions: StringList{"stdlib only"}}})
	p, err := BuildPrompt(PromptContext{AgentID: "code-reviewer-1", Role: RoleReviewer, ProjectRoot: "/p", Task: tk})
	if err != nil {
		t.Fatal(err)
	}
	contractParts(t, p, TextCodeReviewer)
	wantIn(t, p, []string{
		"ROLE: Code Reviewer\n",
		"=== REVIEW TASK ===\nTASK ID: task-3\nWORKTREE: /p/.worktrees/task-3\n",
		"COMMIT TO REVIEW: " + tk.ReviewCommit + "\n",
		"BASE COMMIT: " + tk.BaseCommit + "\n",
		"DIFF: git diff " + tk.BaseCommit + ".." + tk.ReviewCommit + "\n",
		"AUTHOR: coder-1\n",
		"DONE WHEN:\n  - go test ./client passes\n",
		"INTENT: retry 503s\n", "VALIDATION: go test ./client\n", "ASSUMPTION: stdlib only\n",
		"git liza verdict task-3 approve --commit " + tk.ReviewCommit,
	}, []string{"=== ASSIGNED TASK ===", "PREVIOUS REJECTION"})

	// The supervisor's values win over the task's.
	p, _ = BuildPrompt(PromptContext{AgentID: "code-reviewer-1", Role: RoleReviewer, Task: tk, Author: "coder-9",
		BaseCommit: "base", ReviewCommit: "tip", Worktree: "/w"})
	wantIn(t, p, []string{"AUTHOR: coder-9\n", "DIFF: git diff base..tip\n", "WORKTREE: /w\n"}, nil)
}

func TestBuildPromptPlanner(t *testing.T) {
	blocked := task("task-2", Blocked)
	blocked.BlockedReason = "which retry policy?"
	st := planState(task("task-1", Merged), blocked)
	st.HumanNotes = []*HumanNote{{Timestamp: t1, Message: "use exponential backoff", For: "task-2"}}
	pl := Planning(st)
	p, err := BuildPrompt(PromptContext{AgentID: "planner-1", Role: RolePlanner, ProjectRoot: "/p", Planning: &pl, HumanNotes: PendingNotes(st)})
	if err != nil {
		t.Fatal(err)
	}
	contractParts(t, p, TextPlanner)
	wantIn(t, p, []string{
		"ROLE: Planner\n",
		"=== PLANNING CONTEXT ===\nWAKE TRIGGER: BLOCKED_TASKS\nALL TRIGGERS: BLOCKED_TASKS, HUMAN_NOTES\n",
		"SPRINT STATE: total 2, merged 1, in_progress 0, unclaimed 0, draft 0, blocked 1, integration_failed 0, hypothesis_exhausted 0, immediate_discoveries 0, human_notes 1\n",
		"TRIGGERED BY:\n  - blocked:task-2: which retry policy?\n  - note:1\n",
		"1. BLOCKED_TASKS: ", "2. HUMAN_NOTES: ",
		"=== HUMAN NOTES ===\n- note 1, " + t1 + " (for task-2):\n  use exponential backoff\n",
		"git liza note --done N",
		"name at most two\nmore files of the repository with `--docs A,B`",
	}, []string{"=== ASSIGNED TASK ===", "INITIAL_PLANNING:"})

	// With no trigger the planner is told there is nothing to do; with no
	// task yet it is told to plan.
	p, _ = BuildPrompt(PromptContext{AgentID: "planner-1", Role: RolePlanner})
	wantIn(t, p, []string{"WAKE TRIGGER: NONE\n", "Nothing calls for planning"}, nil)
	pl = Planning(planState())
	p, _ = BuildPrompt(PromptContext{AgentID: "planner-1", Role: RolePlanner, Planning: &pl})
	wantIn(t, p, []string{"WAKE TRIGGER: INITIAL_PLANNING\n", "  - initial:goal-1: ship it\n", "1. INITIAL_PLANNING: "}, nil)
}

// TestSessionContext checks the one rule for what a session is told: the
// planner every pending note, whoever it is for; a coder the notes for it
// and its task, and a handoff only while it is pending.
func TestSessionContext(t *testing.T) {
	tk := sampleTask()
	st := planState(tk, task("task-4", Blocked))
	st.Agents = map[string]*Agent{
		"coder-1":   {Role: string(RoleCoder), Status: "WORKING", Generation: 3},
		"planner-1": {Role: string(RolePlanner), Status: "IDLE", NotesProcessed: []int{4}},
	}
	st.HumanNotes = []*HumanNote{
		{Message: "for everyone", By: "human"},
		{Message: "for task-3", For: "task-3", By: "human"},
		{Message: "for task-4", For: "task-4", By: "human"},
		{Message: "already dealt with", By: "human"},
		{Message: "answer for task-4", For: "task-4", By: "planner-1"},
	}
	st.Handoff = map[string]*Handoff{"task-3": {Agent: "coder-1", Summary: "half done", NextAction: "finish"}}
	numbers := func(ns []NumberedNote) []int {
		var out []int
		for _, n := range ns {
			out = append(out, n.N)
		}
		return out
	}

	pc := SessionContext(st, RolePlanner, "planner-1", nil, nil)
	if got := numbers(pc.HumanNotes); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("planner notes = %v, want [1 2 3]: every pending note, for any task", got)
	}
	if pc.Planning == nil || pc.Planning.Trigger != TriggerBlockedTasks {
		t.Errorf("planner wake = %+v, want BLOCKED_TASKS from the state", pc.Planning)
	}

	pc = SessionContext(st, RoleCoder, "coder-1", tk, nil)
	if got := numbers(pc.HumanNotes); !slices.Equal(got, []int{1, 2, 4}) {
		t.Errorf("coder notes = %v, want [1 2 4]", got)
	}
	if pc.Generation != 3 || pc.Task != tk {
		t.Errorf("coder context: generation %d, task %v", pc.Generation, pc.Task)
	}
	if pc.Handoff != nil {
		t.Errorf("a handoff that is no longer pending reached the prompt: %+v", pc.Handoff)
	}
	tk.HandoffPending = true
	if pc = SessionContext(st, RoleCoder, "coder-1", tk, nil); pc.Handoff == nil {
		t.Errorf("the pending handoff is missing")
	}
}

// mdSection is one "## " section of a contract text, heading line included
// (the part before the first heading has an empty heading).
type mdSection struct{ heading, body string }

// multiAgentSections splits MULTI_AGENT_MODE at its "## " headings.
func multiAgentSections(t *testing.T) []mdSection {
	t.Helper()
	text, _ := Text(TextMultiAgent)
	var out []mdSection
	cur := mdSection{}
	for _, line := range strings.SplitAfter(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			out = append(out, cur)
			cur = mdSection{heading: strings.TrimSpace(h)}
		}
		cur.body += line
	}
	out = append(out, cur)
	for i := range out {
		out[i].body = strings.TrimSpace(out[i].body)
	}
	return out
}

// TestCoderPromptDiet: seed 002's context diet ("Actor: execution only, no
// additional context") for the coder's prompt. It carries CORE, its role's
// section and every section of MULTI_AGENT_MODE a coder acts on; the three
// it does not act on (the other roles' boundaries, the state table, the
// circuit breaker's mechanics) are left out and named, with where to read
// them. The reviewer's and the planner's prompts keep the whole text.
func TestCoderPromptDiet(t *testing.T) {
	names := map[string]bool{}
	for _, sec := range multiAgentSections(t) {
		names[sec.heading] = true
	}
	for _, h := range coderLeavesOut {
		if !names[h] {
			t.Fatalf("MULTI_AGENT_MODE has no section %q to leave out", h)
		}
	}
	tk := sampleTask()
	pc := PromptContext{AgentID: "coder-1", Role: RoleCoder, ProjectRoot: "/p", Task: tk}
	p, err := BuildPrompt(pc)
	if err != nil {
		t.Fatal(err)
	}
	contractParts(t, p, TextCoder)
	pointer := "Left out of this prompt, as a coder does not act on them: the sections Roles and their boundaries, Task states and Circuit breaker of MULTI_AGENT_MODE; read them with git liza prompt --text MULTI_AGENT_MODE."
	if !strings.Contains(p, pointer) {
		t.Errorf("coder prompt does not say what it leaves out and where to read it")
	}
	// Every rule a coder follows stays in front of it: the kill switches
	// (a triggered circuit breaker among them), its exit codes, the
	// checkpoint, the stop triggers.
	for _, rule := range []string{"A triggered `circuit_breaker` counts as CHECKPOINT", "`42`: graceful restart", "## Pre-execution checkpoint",
		"## Stop triggers", "## Kill switches", "## Anomalies", "never register yourself"} {
		if !strings.Contains(p, rule) {
			t.Errorf("coder prompt lacks %q", rule)
		}
	}
	pc.Tools = true
	if p, _ := BuildPrompt(pc); !strings.Contains(p, "read them with git liza prompt --text MULTI_AGENT_MODE or the MCP resource liza://contract/MULTI_AGENT_MODE.") {
		t.Errorf("coder prompt with the tools does not name the resource")
	}
	whole, _ := Text(TextMultiAgent)
	rv := sampleTask()
	rv.ReviewCommit = "2222222222222222222222222222222222222222"
	pl := Planning(planState())
	for _, pc := range []PromptContext{
		{AgentID: "code-reviewer-1", Role: RoleReviewer, ProjectRoot: "/p", Task: rv},
		{AgentID: "planner-1", Role: RolePlanner, ProjectRoot: "/p", Planning: &pl},
	} {
		p, err := BuildPrompt(pc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p, strings.TrimSpace(whole)) || strings.Contains(p, "Left out of this prompt") {
			t.Errorf("%s prompt: not the whole MULTI_AGENT_MODE", pc.Role)
		}
	}
	if saved := len(strings.TrimSpace(whole)) - len(multiAgentFor(RoleCoder, false)); saved < 2000 {
		t.Errorf("the coder's MULTI_AGENT_MODE is only %d bytes shorter", saved)
	}
}
