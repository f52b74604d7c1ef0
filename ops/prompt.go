package ops

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

// PromptRequest asks for the prompt a supervisor would give an agent now.
type PromptRequest struct {
	Role contracts.Role
	// Task is the coder's assignment or the task under review; planners
	// take none.
	Task string
	// Trigger is the planner's wake trigger; empty for the most urgent one
	// present.
	Trigger string
	// Tools: the prompt of a session whose CLI has git liza's MCP server
	// (the supervisor's, when git-liza-mcp is installed).
	Tools bool
}

// Prompt builds the prompt a supervisor would give an agent of r.Role (the
// service's agent, else the task's coder or reviewer, else the first agent
// of the role) from the current state.
func (s *Service) Prompt(ctx context.Context, r PromptRequest) (string, error) {
	role, taskID, trigger := r.Role, r.Task, r.Trigger
	needsTask := role == contracts.RoleCoder || role == contracts.RoleReviewer
	switch {
	case needsTask && taskID == "":
		return "", contracts.Invalidf("a %s prompt needs --task ID", role.IDPrefix())
	case !needsTask && taskID != "":
		return "", contracts.Invalidf("--task is for coder and code-reviewer prompts")
	case role != contracts.RolePlanner && trigger != "":
		return "", contracts.Invalidf("--trigger is for planner prompts")
	}
	if s.Agent != "" {
		if got, _ := contracts.ParseAgentID(s.Agent); got != role {
			return "", contracts.Invalidf("agent %s is not a %s", s.Agent, role.IDPrefix())
		}
	}
	st, err := s.State(ctx, "")
	if err != nil {
		return "", err
	}
	agent := s.Agent
	var task *contracts.Task
	var planning *contracts.PlanningContext
	switch role {
	case contracts.RolePlanner:
		if trigger != "" {
			t := strings.ToUpper(trigger)
			if !contracts.KnownTrigger(t) {
				return "", contracts.Invalidf("unknown trigger %q (triggers: %s)", trigger, strings.Join(contracts.WakeTriggers, ", "))
			}
			pl := contracts.Planning(st)
			pl.Trigger = t
			planning = &pl
		}
		if agent == "" {
			agent = "planner-1"
		}
	default:
		if err := contracts.ValidTaskID(taskID); err != nil {
			return "", err
		}
		if task = st.Task(taskID); task == nil {
			return "", contracts.Invalidf("no task %s", taskID)
		}
		if agent == "" {
			agent = promptAgent(role, task)
		}
	}
	pc := contracts.SessionContext(st, role, agent, task, planning)
	pc.ProjectRoot = s.Repo.MainWorkTree()
	pc.Tools = r.Tools
	switch {
	case role == contracts.RoleReviewer:
		// The prompt names the reviewer's own checkout, which must exist
		// when the prompt is read: make it now, as the supervisor does
		// before it starts a reviewer.
		if pc.ProjectRoot == "" {
			break
		}
		wt, err := s.ReviewCheckout(ctx, agent, task.ID)
		if err != nil {
			return "", err
		}
		pc.Worktree = wt
	case task == nil:
	case filepath.IsAbs(task.Worktree):
		pc.Worktree = task.Worktree
	default:
		if path, err := worktree.Path(s.Repo, task.ID); err == nil {
			pc.Worktree = path
		}
	}
	return contracts.BuildPrompt(pc)
}

// promptAgent is the agent a prompt is for when none is named: the task's
// coder or reviewer, else the first agent of the role.
func promptAgent(role contracts.Role, t *contracts.Task) string {
	if role == contracts.RoleReviewer {
		if t.ReviewingBy != "" {
			return t.ReviewingBy
		}
		return "code-reviewer-1"
	}
	if t.AssignedTo != "" {
		return t.AssignedTo
	}
	return "coder-1"
}
