package contracts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Problem is one thing wrong with a state: where it is and what is wrong.
type Problem struct {
	Where string
	Msg   string
}

func (p Problem) String() string {
	if p.Where == "" {
		return p.Msg
	}
	return p.Where + ": " + p.Msg
}

type problems []Problem

func (ps *problems) add(where, msg string) {
	*ps = append(*ps, Problem{Where: where, Msg: msg})
}

func (ps *problems) addf(where, format string, args ...any) {
	ps.add(where, fmt.Sprintf(format, args...))
}

// AgentStatuses are the seed's agent statuses.
var AgentStatuses = []string{"STARTING", "IDLE", "WORKING", "REVIEWING", "WAITING", "HANDOFF"}

// SprintStatuses are the seed's sprint statuses (liza-validate.sh's
// VALID_SPRINT_STATUSES).
var SprintStatuses = []string{"IN_PROGRESS", "CHECKPOINT", "COMPLETED", "ABORTED"}

// ActiveStatuses are the statuses in which a task keeps its coder busy: one
// such task per coder (liza-validate.sh: "Agent assigned to multiple active
// tasks simultaneously"). A coder whose work awaits review, or came back
// rejected, takes no second task.
var ActiveStatuses = []Status{Claimed, ReadyForReview, Rejected}

// Active reports whether a task in s keeps its coder busy.
func (s Status) Active() bool { return slices.Contains(ActiveStatuses, s) }

// Severities and Urgencies are the seed's values for a discovery.
var (
	Severities = []string{"critical", "high", "medium", "low"}
	Urgencies  = []string{"immediate", "deferred"}
)

// placedTask is a task with the place it is reported at.
type placedTask struct {
	where string
	*Task
}

// Validate checks a whole state and returns every problem found, in a
// stable order: header sections, tasks, dependencies, agent exclusivity,
// agents, anomalies, discoveries.
func Validate(s *State) []Problem { return ValidateUnder(s, Rules) }

// ValidateUnder is Validate under a rule set: a state whose last commit
// was made under the first rules is checked by those.
func ValidateUnder(s *State, rules int) []Problem {
	if s == nil {
		return []Problem{{Msg: "no state"}}
	}
	ps := problems(ValidateHeaderUnder(s, rules))

	tasks := append(placeTasks("tasks", s.Tasks), placeTasks("archive", s.Archive)...)
	byID := make(map[string]*Task, len(tasks))
	for _, t := range tasks {
		if t.Task == nil {
			ps.add(t.where, "empty task entry")
			continue
		}
		ps = append(ps, validateTask(t.where, t.Task, rules)...)
		if t.ID == "" {
			continue
		}
		if byID[t.ID] != nil {
			ps.addf(t.where, "duplicate task id %s (ids are unique across tasks and archive)", t.ID)
			continue
		}
		byID[t.ID] = t.Task
	}
	validateDependencies(&ps, tasks, byID)
	validateExclusivity(&ps, placeTasks("tasks", s.Tasks))
	if s.Agents == nil {
		ps.add("agents", "no agents section")
	}
	validateAgents(&ps, s.Agents)
	validateScope(&ps, s.Sprint, byID)
	validateHandoffs(&ps, s.Handoff)
	validateAnomalies(&ps, s.Anomalies, byID)
	validateDiscovered(&ps, s.Discovered)
	return ps
}

// HolderProblem says what is wrong with agent id's entry a given t, the live
// task its current_task names (nil when there is none): a WORKING agent
// (or one STARTING on a task it claimed, before its checkpoint) must hold
// t as its CLAIMED assignee, a REVIEWING one as its reviewer.
// It returns "" when nothing is.
func HolderProblem(id string, a *Agent, t *Task) string {
	if a == nil || a.CurrentTask == "" {
		return ""
	}
	switch a.Status {
	case "WORKING", "STARTING":
		if t == nil || t.Status != Claimed || t.AssignedTo != id {
			return fmt.Sprintf("%s on %s, which it does not hold (%s)", a.Status, a.CurrentTask, holding(t))
		}
	case "REVIEWING":
		if t == nil || t.Status != ReadyForReview || t.ReviewingBy != id {
			return fmt.Sprintf("REVIEWING %s, which it does not hold (%s)", a.CurrentTask, holding(t))
		}
	}
	return ""
}

func holding(t *Task) string {
	switch {
	case t == nil:
		return "no such live task"
	case t.Status == Claimed && t.AssignedTo != "":
		return "CLAIMED by " + t.AssignedTo
	case t.Status == ReadyForReview && t.ReviewingBy != "":
		return "under review by " + t.ReviewingBy
	}
	return string(t.Status)
}

// validateScope checks that the sprint plans only tasks that exist.
func validateScope(ps *problems, sp Sprint, byID map[string]*Task) {
	for _, l := range []struct {
		name string
		ids  StringList
	}{{"planned", sp.Scope.Planned}, {"stretch", sp.Scope.Stretch}} {
		for _, id := range l.ids {
			if byID[id] == nil {
				ps.addf("sprint", "scope.%s names unknown task %s", l.name, id)
			}
		}
	}
}

// validateHandoffs checks that every handoff says where the task is and
// what to do first.
func validateHandoffs(ps *problems, handoffs map[string]*Handoff) {
	for _, id := range slices.Sorted(maps.Keys(handoffs)) {
		h := handoffs[id]
		where := "handoff[" + id + "]"
		if h == nil {
			ps.add(where, "empty handoff entry")
			continue
		}
		if strings.TrimSpace(h.Summary) == "" {
			ps.add(where, "handoff has no summary")
		}
		if strings.TrimSpace(h.NextAction) == "" {
			ps.add(where, "handoff has no next_action")
		}
	}
}

func placeTasks(section string, list []*Task) []placedTask {
	placed := make([]placedTask, len(list))
	for i, t := range list {
		id := ""
		if t != nil {
			id = t.ID
		}
		placed[i] = placedTask{entryWhere(section, i, id), t}
	}
	return placed
}

// ValidateHeader checks the sections other than tasks, agents and logs:
// version, goal, config and sprint.
func ValidateHeader(s *State) []Problem { return ValidateHeaderUnder(s, Rules) }

// ValidateHeaderUnder is ValidateHeader under a rule set: the first rules
// did not require a known sprint status or a sprint start, so a commit
// made under them is not refused for lacking one.
func ValidateHeaderUnder(s *State, rules int) []Problem {
	var ps problems
	if s.Version != 1 {
		ps.addf("version", "unknown schema version %d: this git-liza reads version 1", s.Version)
	}
	for _, f := range []struct{ name, value string }{
		{"id", s.Goal.ID}, {"description", s.Goal.Description}, {"status", s.Goal.Status},
	} {
		if f.value == "" {
			ps.addf("goal", "goal has no %s", f.name)
		}
	}
	if sp := s.Goal.Spend; sp != nil && rules >= RulesGoalSpend {
		if msg := CheckUsage(Usage(*sp), MaxSpendTokens, MaxSpendUSD); msg != "" {
			ps.addf("goal", "spend: %s", msg)
		}
	}

	c := s.Config
	if c.IntegrationBranch == "" {
		ps.add("config", "no integration_branch")
	} else if err := ValidBranch(c.IntegrationBranch); err != nil {
		ps.addf("config", "integration_branch: %v", err)
	}
	for _, f := range []struct {
		name  string
		value int
	}{
		{"max_coder_iterations", c.MaxCoderIterations},
		{"max_review_cycles", c.MaxReviewCycles},
		{"lease_duration", c.LeaseDuration},
		{"heartbeat_interval", c.HeartbeatInterval},
		{"coder_poll_interval", c.CoderPollInterval},
		{"reviewer_poll_interval", c.ReviewerPollInterval},
		{"planner_poll_interval", c.PlannerPollInterval},
		{"max_in_flight", c.MaxInFlight},
		{"merge_batch", c.MergeBatch},
		{"stall_threshold", c.StallThreshold},
		{"draft_stale_threshold", c.DraftStaleThreshold},
		{"pause_stale_threshold", c.PauseStaleThreshold},
		{"checkpoint_stale_threshold", c.CheckpointStaleThreshold},
		{"park_stale_threshold", c.ParkStaleThreshold},
		{"timebox_coder", c.TimeboxCoder},
		{"timebox_code_reviewer", c.TimeboxCodeReviewer},
		{"timebox_planner", c.TimeboxPlanner},
		{"timebox_grace", c.TimeboxGrace},
		{"worktree_setup_timeout", c.WorktreeSetupTimeout},
		{"integration_test_timeout", c.IntegrationTestTimeout},
	} {
		if f.value < 0 {
			ps.addf("config", "%s %d is negative", f.name, f.value)
		}
	}
	if c.MergeBatch > MaxMergeBatch {
		ps.addf("config", "merge_batch %d is more than %d", c.MergeBatch, MaxMergeBatch)
	}
	if c.WorktreeSetupTimeout > MaxSetupTimeout {
		ps.addf("config", "worktree_setup_timeout %d is more than %d (a day)", c.WorktreeSetupTimeout, MaxSetupTimeout)
	}
	if c.IntegrationTestTimeout > MaxTestTimeout {
		ps.addf("config", "integration_test_timeout %d is more than %d (a day)", c.IntegrationTestTimeout, MaxTestTimeout)
	}
	validateSpendConfig(&ps, c)

	if s.Sprint.ID == "" {
		ps.add("sprint", "sprint has no id")
	}
	if st := s.Sprint.Status; rules >= RulesWhole && st != "" && !slices.Contains(SprintStatuses, st) {
		ps.addf("sprint", "unknown sprint status %q (want one of %s)", st, strings.Join(SprintStatuses, ", "))
	}
	if rules >= RulesWhole && s.Sprint.Timeline.Started == "" {
		ps.add("sprint", "sprint has no timeline.started")
	}
	for _, f := range []struct{ name, value string }{
		{"started", s.Sprint.Timeline.Started}, {"deadline", s.Sprint.Timeline.Deadline},
	} {
		if _, err := ParseTime(f.value); f.value != "" && err != nil {
			ps.addf("sprint", "timeline.%s: %v", f.name, err)
		}
	}
	switch {
	case s.Sprint.GoalRef == "":
		ps.add("sprint", "sprint has no goal_ref")
	case s.Goal.ID != "" && s.Sprint.GoalRef != s.Goal.ID:
		ps.addf("sprint", "goal_ref %q does not match goal.id %q", s.Sprint.GoalRef, s.Goal.ID)
	}
	if c := s.Control; c != nil {
		if c.Mode != "" && !slices.Contains(Modes, c.Mode) {
			ps.addf("control", "unknown mode %q (want one of %s)", c.Mode, strings.Join(Modes, ", "))
		}
		if c.Since != "" {
			if _, err := ParseTime(c.Since); err != nil {
				ps.addf("control", "since: %v", err)
			}
		}
		if v, ok := c.Extra[StopSessionsKey]; ok {
			switch {
			case v != true:
				ps.add("control", "stop_sessions is set to something other than true")
			case c.Mode != ModePaused:
				ps.add("control", "stop_sessions is set on a control section that is not PAUSED")
			}
		}
	}
	if cb := s.CircuitBreaker; cb != nil {
		if !slices.Contains(BreakerStatuses, cb.Status) {
			ps.addf("circuit_breaker", "unknown status %q (want one of %s)", cb.Status, strings.Join(BreakerStatuses, ", "))
		}
		for _, f := range []struct{ name, value string }{{"last_check", cb.LastCheck}, {"triggered_at", cb.TriggeredAt}, {"resolved_at", cb.ResolvedAt}} {
			if _, err := ParseTime(f.value); f.value != "" && err != nil {
				ps.addf("circuit_breaker", "%s: %v", f.name, err)
			}
		}
		for i, h := range cb.History {
			switch {
			case h == nil:
				ps.addf("circuit_breaker", "history[%d] is empty", i)
			case !slices.Contains(BreakerStatuses, h.Result):
				ps.addf("circuit_breaker", "history[%d]: unknown result %q (want one of %s)", i, h.Result, strings.Join(BreakerStatuses, ", "))
			default:
				if _, err := ParseTime(h.Timestamp); err != nil {
					ps.addf("circuit_breaker", "history[%d].timestamp: %v", i, err)
				}
			}
		}
	}
	return ps
}

// ValidateTask checks the rules that concern one task alone: its id,
// status, priority, the fields its status requires, agent ids, timestamps
// and counters.
func ValidateTask(t *Task) []Problem { return ValidateTaskUnder(t, Rules) }

// ValidateTaskUnder is ValidateTask under a rule set: the first rules did
// not check failed_by for repeats or integration_fix against the history.
func ValidateTaskUnder(t *Task, rules int) []Problem {
	where := "task"
	if t != nil && t.ID != "" {
		where = "tasks[" + t.ID + "]"
	}
	return validateTask(where, t, rules)
}

func validateTask(where string, t *Task, rules int) []Problem {
	var ps problems
	if t == nil {
		ps.add(where, "empty task entry")
		return ps
	}
	if err := ValidTaskID(t.ID); err != nil {
		ps.add(where, err.Error())
	}
	if !t.Status.Known() {
		ps.addf(where, "unknown status %q (want one of %s)", t.Status, joinStatuses(Statuses))
	}
	if t.Priority < 1 || t.Priority > 5 {
		ps.addf(where, "priority %d out of range 1..5", t.Priority)
	}
	validatePaths(&ps, where, t, rules)
	validateDocs(&ps, where, t, rules)

	need := func(field, value string) {
		if value == "" {
			ps.addf(where, "%s task has no %s", t.Status, field)
		}
	}
	switch t.Status {
	case Draft:
		if t.AssignedTo != "" {
			ps.addf(where, "DRAFT task is assigned to %s", t.AssignedTo)
		}
	case Claimed:
		need("assigned_to", t.AssignedTo)
		need("worktree", t.Worktree)
		need("lease_expires", t.LeaseExpires)
		need("base_commit", t.BaseCommit)
	case ReadyForReview:
		need("review_commit", t.ReviewCommit)
		need("assigned_to", t.AssignedTo)
	case Rejected:
		need("rejection_reason", t.RejectionReason)
	case Approved:
		need("approved_by", t.ApprovedBy)
		need("review_commit", t.ReviewCommit)
	case Blocked:
		need("blocked_reason", t.BlockedReason)
		if n := len(t.BlockedQuestions); n == 0 {
			ps.add(where, "BLOCKED task has no blocked_questions (want 1 to 3)")
		} else if n > 3 {
			ps.addf(where, "BLOCKED task has %d blocked_questions (want 1 to 3)", n)
		}
	case Superseded:
		need("superseded_by", strings.Join(t.SupersededBy, ","))
		need("rescope_reason", t.RescopeReason)
	case Merged:
		need("merge_commit", t.MergeCommit)
		if t.Worktree != "" {
			ps.addf(where, "MERGED task still has worktree %s", t.Worktree)
		}
	}
	if t.Status.Known() && t.Status != Draft && t.Status != Abandoned {
		need("done_when", t.DoneWhen)
		need("spec_ref", t.SpecRef)
	}

	agent := func(field, id string, want Role) {
		if id == "" {
			return
		}
		if role, err := ParseAgentID(id); err != nil {
			ps.addf(where, "%s: %v", field, err)
		} else if role != want {
			ps.addf(where, "%s %s is not a %s", field, id, want)
		}
	}
	agent("assigned_to", t.AssignedTo, RoleCoder)
	agent("reviewing_by", t.ReviewingBy, RoleReviewer)
	agent("approved_by", t.ApprovedBy, RoleReviewer)
	if t.ApprovedBy != "" && t.ApprovedBy == t.AssignedTo {
		ps.addf(where, "approved by its own coder %s (no self-approval)", t.ApprovedBy)
	}

	stamp := func(field, value string) {
		if value == "" {
			return
		}
		if _, err := ParseTime(value); err != nil {
			ps.addf(where, "%s: %v", field, err)
		}
	}
	stamp("created", t.Created)
	stamp("lease_expires", t.LeaseExpires)
	stamp("review_lease_expires", t.ReviewLeaseExpires)
	for i, e := range t.History {
		if e == nil {
			ps.addf(where, "history[%d] is empty", i)
			continue
		}
		stamp(fmt.Sprintf("history[%d].time", i), e.Time)
		if e.Usage != nil {
			if msg := CheckUsage(*e.Usage, MaxSessionTokens, MaxSessionUSD); msg != "" {
				ps.addf(where, "history[%d].usage: %s", i, msg)
			}
		}
	}

	if t.Iteration < 0 {
		ps.addf(where, "iteration %d is negative", t.Iteration)
	}
	if t.ReviewCyclesCurrent < 0 || t.ReviewCyclesTotal < 0 {
		ps.add(where, "review cycle counts are negative")
	} else if t.ReviewCyclesCurrent > t.ReviewCyclesTotal {
		ps.addf(where, "review_cycles_current %d exceeds review_cycles_total %d", t.ReviewCyclesCurrent, t.ReviewCyclesTotal)
	}
	if t.ID != "" && t.DependsOn.Contains(t.ID) {
		ps.add(where, "depends on itself")
	}
	if rules < RulesWhole {
		return ps
	}
	seen := map[string]bool{}
	for _, a := range t.FailedBy {
		if seen[a] {
			ps.addf(where, "failed_by names %s twice", a)
		}
		seen[a] = true
	}
	if t.IntegrationFix && latestEvent(t, "integration_failed") == nil {
		ps.add(where, "integration_fix is set but its history has no integration failure")
	}
	return ps
}

func validateDependencies(ps *problems, tasks []placedTask, byID map[string]*Task) {
	for _, t := range tasks {
		if t.Task == nil {
			continue
		}
		for _, dep := range t.DependsOn {
			d := byID[dep]
			switch {
			case dep == t.ID:
			case d == nil:
				ps.addf(t.where, "depends on unknown task %s", dep)
			case t.Status == Claimed && d.Status != Merged:
				ps.addf(t.where, "CLAIMED but dependency %s is %s (dependencies must be MERGED)", dep, d.Status)
			}
		}
	}

	const (
		unseen = iota
		active
		done
	)
	color := make(map[string]int, len(byID))
	where := make(map[string]string, len(tasks))
	for _, t := range tasks {
		if t.Task != nil && byID[t.ID] == t.Task {
			where[t.ID] = t.where
		}
	}
	var stack []string
	var visit func(id string)
	visit = func(id string) {
		color[id] = active
		stack = append(stack, id)
		for _, dep := range byID[id].DependsOn {
			if dep == id || byID[dep] == nil {
				continue
			}
			switch color[dep] {
			case unseen:
				visit(dep)
			case active:
				cycle := append(slices.Clone(stack[slices.Index(stack, dep):]), dep)
				ps.addf(where[dep], "dependency cycle %s", strings.Join(cycle, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = done
	}
	for _, t := range tasks {
		if t.Task != nil && byID[t.ID] == t.Task && color[t.ID] == unseen {
			visit(t.ID)
		}
	}
}

func validateExclusivity(ps *problems, tasks []placedTask) {
	coding := map[string]string{}
	reviewing := map[string]string{}
	for _, t := range tasks {
		if t.Task == nil {
			continue
		}
		// Two CLAIMED tasks: one beside another active task is a
		// leftover (Leftovers).
		if a := t.AssignedTo; t.Status == Claimed && a != "" {
			if other, ok := coding[a]; ok {
				ps.addf(t.where, "%s already holds %s task %s (one task per agent)", a, Claimed, other)
			} else {
				coding[a] = t.ID
			}
		}
		if a := t.ReviewingBy; t.Status == ReadyForReview && a != "" {
			if other, ok := reviewing[a]; ok {
				ps.addf(t.where, "%s already reviews task %s (one review per agent)", a, other)
			} else {
				reviewing[a] = t.ID
			}
		}
	}
}
