package mcpserver

import (
	"context"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// coderTools are a coder's: checkpoint, submit, block, handoff, anomaly,
// discover.
func coderTools(s *Server) {
	addTool(s, "checkpoint", "Record the pre-execution checkpoint of your task before changing any file (git liza checkpoint): an observable intent, a validation that is a concrete command with its expected result, every file to modify, each assumption.", s.checkpoint)
}

// CheckpointIn is the input of checkpoint, in the seed's field names.
type CheckpointIn struct {
	Task          string   `json:"task,omitempty" jsonschema:"your task (default: the session's own; no other is accepted)"`
	Intent        string   `json:"intent" jsonschema:"what you will do, specific and observable"`
	Validation    string   `json:"validation" jsonschema:"how you will check it: a command and its expected output"`
	FilesToModify []string `json:"files_to_modify" jsonschema:"every file you will modify"`
	Assumptions   []string `json:"assumptions,omitempty" jsonschema:"each assumption the work rests on"`
	Risks         string   `json:"risks,omitempty" jsonschema:"what could go wrong"`
	RequestID     string   `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) checkpoint(ctx context.Context, in CheckpointIn) (*TaskOut, error) {
	task, err := s.taskOf(in.Task)
	if err != nil {
		return nil, err
	}
	r, err := s.svc.Checkpoint(ctx, ops.CheckpointRequest{Call: call(in.RequestID), Task: task, Checkpoint: contracts.Checkpoint{
		Intent: in.Intent, Validation: in.Validation, FilesToModify: in.FilesToModify, Assumptions: in.Assumptions, Risks: in.Risks,
	}})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}
