package contracts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// texts holds the contract texts agents are given: CORE.md, the two mode
// files and one file per role under roles/.
//
//go:embed texts
var texts embed.FS

// The names of the embedded texts, as Text and TextNames spell them.
const (
	TextCore         = "CORE"
	TextPairing      = "PAIRING_MODE"
	TextMultiAgent   = "MULTI_AGENT_MODE"
	TextPlanner      = "roles/PLANNER"
	TextCoder        = "roles/CODER"
	TextCodeReviewer = "roles/CODE_REVIEWER"
)

// TextNames lists the names of the embedded contract texts, sorted: the
// file names under texts/ without their .md extension, such as "CORE" and
// "roles/CODER".
func TextNames() []string {
	var names []string
	_ = fs.WalkDir(texts, "texts", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(p, "texts/"), ".md"))
		}
		return nil
	})
	slices.Sort(names)
	return names
}

// Text returns the embedded text called name (as TextNames lists it; a
// trailing ".md" is accepted) and whether there is one.
func Text(name string) (string, bool) {
	name = strings.TrimSuffix(name, ".md")
	if name == "" || !fs.ValidPath(name) {
		return "", false
	}
	b, err := texts.ReadFile(path.Join("texts", name+".md"))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// mustText returns an embedded text that the build guarantees.
func mustText(name string) string {
	s, ok := Text(name)
	if !ok {
		panic("contracts: no embedded text " + name)
	}
	return s
}

// ParseRole reads a role as a person types it: planner, coder or
// code-reviewer (code_reviewer and reviewer are accepted too).
func ParseRole(name string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "planner":
		return RolePlanner, nil
	case "coder":
		return RoleCoder, nil
	case "code-reviewer", "code_reviewer", "reviewer":
		return RoleReviewer, nil
	}
	return "", Invalidf("unknown role %q (roles: planner, coder, code-reviewer)", name)
}

// roleText is the embedded section of a role, and its title.
func roleText(r Role) (name, title string, ok bool) {
	switch r {
	case RolePlanner:
		return TextPlanner, "Planner", true
	case RoleCoder:
		return TextCoder, "Coder", true
	case RoleReviewer:
		return TextCodeReviewer, "Code Reviewer", true
	}
	return "", "", false
}

// PromptContext is what a supervisor knows when it starts an agent session.
type PromptContext struct {
	AgentID     string
	Role        Role
	ProjectRoot string // the main checkout, absolute
	Worktree    string // the task's worktree, absolute; default: from the task and ProjectRoot
	Task        *Task  // the coder's task, or the task under review
	Author      string // for reviewers: the coder; default: the task's assignee
	// BaseCommit and ReviewCommit default to the task's fields.
	BaseCommit, ReviewCommit string
	Planning                 *PlanningContext // for planners
	// Goal and Sprint are the board's goal and sprint, for planners.
	Goal       *Goal
	Sprint     *Sprint
	HumanNotes []NumberedNote // the notes relevant to the agent or task
	Handoff    *Handoff       // the task's handoff, if any
	Generation int            // the supervisor registration the agent runs under
	// Tools: the session's CLI has git liza's MCP server (MCPServer), so
	// its steps name the tools beside the shell commands.
	Tools bool
}

// NotesFor selects the human notes meant for an agent working on a task:
// notes for everyone, for the agent and for the task.
func NotesFor(notes []*HumanNote, agent, task string) []NumberedNote {
	var out []NumberedNote
	for i, n := range notes {
		if n != nil && (n.For == "" || n.For == agent && agent != "" || n.For == task && task != "") {
			out = append(out, NumberedNote{N: i + 1, HumanNote: n})
		}
	}
	return out
}

// SessionContext is what an agent of role is told about st when it starts:
// the one rule that both the supervisor and git liza prompt follow. A
// planner gets its wake (planning, or the triggers of st when nil) and every
// pending human note, whoever it is for, since the planner is the one who
// deals with them. A coder or a reviewer gets its task, the notes for
// everyone, for itself and for the task, and the task's handoff while one is
// pending. The caller fills in ProjectRoot and Worktree, which depend on the
// checkout.
func SessionContext(st *State, role Role, agent string, task *Task, planning *PlanningContext) PromptContext {
	pc := PromptContext{AgentID: agent, Role: role}
	if a := st.Agents[agent]; a != nil {
		pc.Generation = a.Generation
	}
	if role == RolePlanner {
		if planning == nil {
			p := Planning(st)
			planning = &p
		}
		pc.Planning = planning
		pc.HumanNotes = PendingNotes(st)
		goal, sprint := st.Goal, st.Sprint
		pc.Goal, pc.Sprint = &goal, &sprint
		return pc
	}
	pc.Task = task
	taskID := ""
	if task != nil {
		taskID = task.ID
		if task.HandoffPending {
			pc.Handoff = st.Handoff[task.ID]
		}
	}
	pc.HumanNotes = NotesFor(st.HumanNotes, agent, taskID)
	return pc
}

// BuildPrompt assembles the prompt a supervisor gives an agent: CORE, the
// multi-agent contract (a coder's without what it does not act on: see
// multiAgentFor), the role's section, then the session's context in
// the sections seed 003 names (=== ASSIGNED TASK === for a coder,
// === REVIEW TASK === for a reviewer, === PLANNING CONTEXT === for a
// planner) and the human notes. It fails (exit 1) without a role, for a
// role that has no prompt, and for a coder or reviewer without a task.
func BuildPrompt(pc PromptContext) (string, error) {
	if pc.Role == "" {
		return "", Invalidf("a prompt needs a role")
	}
	name, title, ok := roleText(pc.Role)
	if !ok {
		return "", Invalidf("no prompt for role %q (roles: planner, coder, code-reviewer)", pc.Role.IDPrefix())
	}
	ctx, err := fitContext(func(w *promptWriter) error { return writeContext(w, pc, title) })
	if err != nil {
		return "", err
	}
	parts := []string{mustText(TextCore), multiAgentFor(pc.Role, pc.Tools), mustText(name), ctx}
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return strings.Join(parts, "\n\n---\n\n") + "\n", nil
}

// writeContext writes the session's context of pc: what the board says
// to the agent, after the contract's texts.
func writeContext(w *promptWriter, pc PromptContext, title string) error {
	w.section("SESSION")
	w.field("MODE", "Liza multi-agent")
	w.field("ROLE", title)
	w.field("AGENT ID", pc.AgentID)
	if pc.Generation != 0 {
		w.field("GENERATION", fmt.Sprint(pc.Generation))
	}
	w.field("PROJECT ROOT", pc.ProjectRoot)
	toolsLine(w, pc)

	switch pc.Role {
	case RoleCoder:
		if pc.Task == nil {
			return Invalidf("a coder prompt needs a task")
		}
		coderContext(w, pc)
	case RoleReviewer:
		if pc.Task == nil {
			return Invalidf("a code reviewer prompt needs a task")
		}
		if err := reviewerContext(w, pc); err != nil {
			return err
		}
	case RolePlanner:
		plannerContext(w, pc)
	}
	if len(pc.HumanNotes) > 0 {
		w.section("HUMAN NOTES")
		notes, more := w.some(len(pc.HumanNotes))
		for _, n := range pc.HumanNotes[:notes] {
			if n.HumanNote == nil {
				continue
			}
			var meta []string
			if n.For != "" {
				meta = append(meta, "for "+n.For)
			}
			if n.By != "" {
				meta = append(meta, "by "+n.By)
			}
			head := fmt.Sprintf("- note %d", n.N)
			if n.Timestamp != "" {
				head += ", " + n.Timestamp
			}
			if len(meta) > 0 {
				head += " (" + strings.Join(meta, ", ") + ")"
			}
			w.line(head + ":")
			w.indented(w.text(n.Message))
		}
		if more > 0 {
			w.line(fmt.Sprintf("- … %d more notes (git liza show lists them)", more))
		}
	}
	return nil
}

// taskWorktree is the absolute worktree of the session's task.
func taskWorktree(pc PromptContext) string {
	switch {
	case pc.Worktree != "":
		return pc.Worktree
	case pc.Task.Worktree != "" && filepath.IsAbs(pc.Task.Worktree):
		return pc.Task.Worktree
	case pc.ProjectRoot == "":
		return pc.Task.Worktree
	case pc.Task.Worktree != "":
		return filepath.Join(pc.ProjectRoot, pc.Task.Worktree)
	}
	return filepath.Join(pc.ProjectRoot, ".worktrees", pc.Task.ID)
}

// taskFields writes what both coder and reviewer need to know of a task.
func taskFields(w *promptWriter, t *Task) {
	w.field("DESCRIPTION", w.text(t.Description))
	w.field("SPEC", w.text(t.SpecRef))
	if len(t.Docs) > 0 {
		w.field("DOCS", w.joined(t.Docs))
	}
	w.block("DONE WHEN", w.text(t.DoneWhen))
	w.block("SCOPE", w.text(t.Scope))
	if len(t.Paths) > 0 {
		w.field("PATHS", w.joined(t.Paths))
	}
	if limit := t.ScopeLimitText(); limit != "" {
		w.field("LIMITS", limit)
	}
	if len(t.DependsOn) > 0 {
		w.field("DEPENDS ON", w.joined(t.DependsOn))
	}
}

// latestEvent is the task's latest history event named one of events, or
// nil.
func latestEvent(t *Task, events ...string) *HistoryEvent {
	for i := len(t.History) - 1; i >= 0; i-- {
		if ev := t.History[i]; ev != nil && slices.Contains(events, ev.Event) {
			return ev
		}
	}
	return nil
}

// lastCheckpoint is the task's latest pre-execution checkpoint.
func lastCheckpoint(t *Task) *HistoryEvent {
	for i := len(t.History) - 1; i >= 0; i-- {
		if ev := t.History[i]; ev != nil && ev.Checkpoint != nil {
			return ev
		}
	}
	return nil
}

func coderContext(w *promptWriter, pc PromptContext) {
	t := pc.Task
	wt := taskWorktree(pc)
	base := pc.BaseCommit
	if base == "" {
		base = t.BaseCommit
	}
	w.section("ASSIGNED TASK")
	w.field("TASK ID", t.ID)
	w.field("WORKTREE", wt)
	w.field("BASE COMMIT", base)
	w.field("ITERATION", fmt.Sprint(t.Iteration))
	taskFields(w, t)

	// The feedback that matters is what came after the last submission:
	// a rejection, or a merge that failed after the approval.
	last := latestEvent(t, "submitted", "rejected", "approved", "integration_failed")
	rejected := last != nil && last.Event == "rejected"
	integration := last != nil && last.Event == "integration_failed"
	if rejected {
		reason := last.Reason
		if reason == "" {
			reason = t.RejectionReason
		}
		by := ""
		if last.Agent != "" {
			by = " (by " + last.Agent + ")"
		}
		w.block("REJECTION REASON"+by, w.text(reason))
		if t.RejectionFeedback != "" {
			w.block("REJECTION FEEDBACK", w.text(t.RejectionFeedback))
		}
	}
	if integration {
		what := "The approved work did not merge: "
		if last.From == string(ReadyForReview) {
			// Sent back before review (issue 28): nobody approved it yet.
			what = "The submitted work no longer merges, so it went back to you before review: "
		}
		w.block("INTEGRATION FIX", what+orNone(w.text(last.Reason)))
	}
	if h := pc.Handoff; h != nil {
		w.line(fmt.Sprintf("HANDOFF (from %s at %s):", orNone(h.Agent), orNone(h.Time)))
		w.indented("SUMMARY: " + w.text(h.Summary))
		w.indented("NEXT ACTION: " + w.text(h.NextAction))
	}

	previous := previousSession(w, t)
	read := fmt.Sprintf("cd %s and read the task: %s", wt, tool(pc, "show_task", "git liza show "+t.ID))
	if len(t.Docs) > 0 {
		read += ", then the SPEC and the DOCS"
	}
	steps := []string{read}
	if previous && pc.Handoff == nil {
		steps = append(steps, "The PREVIOUS SESSION ended without finishing: start from what it left in the worktree (git log, git status) and carry on.")
	}
	switch {
	case pc.Handoff != nil:
		steps = append(steps, "Continue from the HANDOFF above: check the worktree's last commits against its summary, then do its next action.")
	case integration:
		steps = append(steps, fmt.Sprintf("Merge the integration tip into your branch: git merge %s; resolve mechanical conflicts, block the task for logic conflicts.", base))
	case rejected:
		steps = append(steps, "Address every blocker in the REJECTION REASON, and nothing else.")
	}
	steps = append(steps,
		"Before editing: "+tool(pc, "checkpoint", fmt.Sprintf("git liza checkpoint %s --intent \"...\" --validation \"...\" --files A,B", t.ID)),
		"Write the tests for DONE WHEN first and see them fail; then implement until they pass.",
		fmt.Sprintf("Commit on the task branch in the worktree, leave it clean, then: %s, and exit 0.", tool(pc, "submit", "git liza submit "+t.ID)),
		fmt.Sprintf("Stuck: %s, and exit 0. Out of context: %s, and exit 42.",
			tool(pc, "block", fmt.Sprintf("git liza task block %s --reason \"...\" --question \"...\"", t.ID)),
			tool(pc, "handoff", fmt.Sprintf("git liza handoff %s --summary \"...\" --next \"...\"", t.ID))),
	)
	w.steps(steps)
}

func reviewerContext(w *promptWriter, pc PromptContext) error {
	t := pc.Task
	review, base, author := pc.ReviewCommit, pc.BaseCommit, pc.Author
	if review == "" {
		review = t.ReviewCommit
	}
	if base == "" {
		base = t.BaseCommit
	}
	if author == "" {
		author = t.AssignedTo
	}
	if review == "" {
		return Invalidf("task %s has no commit to review", t.ID)
	}
	wt := taskWorktree(pc)
	diff := fmt.Sprintf("git diff %s..%s", base, review)
	w.section("REVIEW TASK")
	w.field("TASK ID", t.ID)
	w.field("WORKTREE", wt)
	w.field("COMMIT TO REVIEW", review)
	w.field("BASE COMMIT", base)
	w.field("DIFF", diff)
	w.field("AUTHOR", author)
	w.field("ITERATION", fmt.Sprint(t.Iteration))
	w.field("REVIEW CYCLE", fmt.Sprint(t.ReviewCyclesCurrent+1))
	taskFields(w, t)
	if ev := lastCheckpoint(t); ev != nil {
		c := ev.Checkpoint
		w.line(fmt.Sprintf("CHECKPOINT (%s, %s):", orNone(ev.Agent), orNone(ev.Time)))
		w.indented("INTENT: " + w.text(c.Intent))
		w.indented("VALIDATION: " + w.text(c.Validation))
		w.indented("FILES: " + w.joined(c.FilesToModify))
		keep, more := w.some(len(c.Assumptions))
		for _, a := range c.Assumptions[:keep] {
			w.indented("ASSUMPTION: " + w.text(a))
		}
		if more > 0 {
			w.indented(fmt.Sprintf("ASSUMPTION: … %d more", more))
		}
		if c.Risks != "" {
			w.indented("RISKS: " + w.text(c.Risks))
		}
	} else {
		w.field("CHECKPOINT", "none recorded")
	}
	if ev := latestEvent(t, "rejected", "approved"); ev != nil && ev.Event == "rejected" {
		w.block("PREVIOUS REJECTION", w.text(ev.Reason))
	}
	w.steps([]string{
		fmt.Sprintf("cd %s; git rev-parse HEAD must print %s.", wt, review),
		"Read the task and its history: " + tool(pc, "show_task", "git liza show "+t.ID),
		fmt.Sprintf("Read every change: %s (--stat first).", diff),
		"Check the change against the spec, DONE WHEN, SCOPE and the CHECKPOINT; run the tests and the validation.",
		fmt.Sprintf("Verdict: %s; then exit 0.", tool(pc, "verdict",
			fmt.Sprintf("git liza verdict %s approve --commit %s, or git liza verdict %s reject --commit %s --reason \"...\"", t.ID, review, t.ID, review))),
	})
	return nil
}

// previousSession writes what the task's history says of the last session
// on it, when that session ended without finishing (stopped at its
// timebox, exited 0 with the task still held, crashed), and reports
// whether it did: the next session starts from its work.
func previousSession(w *promptWriter, t *Task) bool {
	if len(t.History) == 0 {
		return false
	}
	ev := t.History[len(t.History)-1]
	if ev == nil || ev.Event != "session_ended" {
		return false
	}
	outcome := fmt.Sprint(ev.Extra["outcome"])
	if outcome == "done" || outcome == "restart" {
		return false
	}
	head := fmt.Sprintf("PREVIOUS SESSION (%s, %s): %s", orNone(ev.Agent), orNone(ev.Time), w.text(outcome))
	if l, ok := ev.Extra["log"]; ok {
		head += "; its output: " + w.text(fmt.Sprint(l))
	}
	w.line(head)
	if ev.Reason != "" {
		w.indented(clip(ev.Reason, 1200))
	}
	return true
}

// triggerSteps is what the planner is asked to do for each trigger.
var triggerSteps = map[string]string{
	TriggerInitialPlanning:     "No task exists: read the goal and its specs, add the tasks as drafts (git liza task add ... --draft), check their gates, then git liza task finalize each.",
	TriggerHypothesisExhausted: "Two coders failed these tasks: rescope them (new tasks, then git liza task supersede) or git liza task abandon them; do not unblock them unchanged.",
	TriggerBlockedTasks:        "Answer what the specs answer (git liza note --for ID, then git liza task unblock ID), rescope what was wrong, and leave for the human what only the human can answer (log spec_gap).",
	TriggerIntegrationFailed:   "Read the merge failure (git liza show ID). A coder will fix mechanical conflicts; block the task for the human when tasks overlap in logic.",
	TriggerImmediateDiscovery:  "Decide whether each discovery belongs to the goal; if it does, add a task for it naming the discovery id.",
	TriggerHumanNotes:          "Act on each human note below; then mark it processed: git liza note --done N (exiting 0 marks those still pending processed).",
}

func plannerContext(w *promptWriter, pc PromptContext) {
	p := pc.Planning
	if p == nil {
		p = &PlanningContext{}
	}
	w.section("PLANNING CONTEXT")
	trigger := p.Trigger
	if trigger == "" {
		trigger = "NONE"
	}
	w.field("WAKE TRIGGER", trigger)
	if len(p.Triggers) > 1 || len(p.Triggers) == 1 && p.Triggers[0] != p.Trigger {
		w.field("ALL TRIGGERS", strings.Join(p.Triggers, ", "))
	}
	if g := pc.Goal; g != nil {
		w.field("GOAL", g.ID)
		w.block("GOAL TEXT", w.text(g.Description))
		w.field("GOAL SPEC", w.text(g.SpecRef))
	}
	if sp := pc.Sprint; sp != nil {
		sprint := sp.ID
		if sp.Status != "" {
			sprint += " (" + sp.Status + ")"
		}
		w.field("SPRINT", w.text(sprint))
		if len(sp.Scope.Planned) > 0 {
			w.field("SPRINT PLANNED", w.joined(sp.Scope.Planned))
		}
	}
	var counts []string
	for _, k := range CountKeys {
		counts = append(counts, fmt.Sprintf("%s %d", k, p.Counts[k]))
	}
	w.field("SPRINT STATE", strings.Join(counts, ", "))
	if len(p.Items) > 0 {
		w.line("TRIGGERED BY:")
		keep, more := w.some(len(p.Items))
		for _, it := range p.Items[:keep] {
			d := p.Details[it]
			if d == "" || strings.HasPrefix(it, "note:") {
				w.indented("- " + it)
				continue
			}
			w.indented("- " + it + ": " + clip(d, 300))
		}
		if more > 0 {
			w.indented(fmt.Sprintf("- … %d more (git liza status)", more))
		}
	}
	order := []string{}
	if p.Trigger != "" {
		order = append(order, p.Trigger)
	}
	for _, t := range p.Triggers {
		if !slices.Contains(order, t) {
			order = append(order, t)
		}
	}
	var steps []string
	if pc.Tools {
		steps = append(steps, plannerToolsStep)
	}
	for _, t := range order {
		if s, ok := triggerSteps[t]; ok {
			steps = append(steps, t+": "+s)
		}
	}
	if len(steps) == 0 || pc.Tools && len(steps) == 1 {
		steps = append(steps, "Nothing calls for planning: check the board with git liza status, and exit 0 if there is nothing to do.")
	}
	steps = append(steps, "Exit 0 when this wake's work is done.")
	w.steps(steps)
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
