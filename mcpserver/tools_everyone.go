package mcpserver

import (
	"context"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// everyoneTools are the reads every session has: status, show_task,
// log_task, validate.
func everyoneTools(s *Server) {
	addTool(s, "status", "The board, as git liza status --json shows it: the goal and sprint, the team's mode (RUNNING, PAUSED, CHECKPOINT, ABORTED), tasks in attention order with their leases and reasons, agents, kill switches and alarms.", s.status)
}

// StatusIn is the input of status.
type StatusIn struct {
	Statuses []string `json:"statuses,omitempty" jsonschema:"only tasks in these statuses (UNCLAIMED, CLAIMED, READY_FOR_REVIEW, ...); none: all"`
	Mine     bool     `json:"mine,omitempty" jsonschema:"only the tasks assigned to or reviewed by you"`
}

func (s *Server) status(ctx context.Context, in StatusIn) (*ops.Board, error) {
	r := ops.StatusRequest{}
	for _, st := range in.Statuses {
		status := contracts.Status(st)
		if !status.Known() {
			return nil, contracts.Invalidf("unknown status %q", st)
		}
		r.Statuses = append(r.Statuses, status)
	}
	if in.Mine {
		if s.id.Human() {
			return nil, contracts.Invalidf("mine is for an agent's session: the operator holds no task")
		}
		r.Agent = s.id.Agent
	}
	return s.svc.Status(ctx, r)
}
