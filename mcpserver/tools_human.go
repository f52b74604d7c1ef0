package mcpserver

import (
	"context"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// humanTools are the operator's levers (git liza mcp --human): note, pause,
// resume, abort, unblock, task_add, task_edit. The planner's finalize,
// supersede, abandon, note_done and discover_convert are not among them:
// the operator has them on the command line.
func humanTools(s *Server) {
	addTool(s, "note", "Leave a note for the agents (human_notes), optionally for one task or agent (git liza note).", s.note)
	addTool(s, "pause", "Pause the team: supervisors start no agent until resume; with stop_sessions they also stop the running sessions, a coder's with a handoff (git liza pause).", s.pause)
	addTool(s, "resume", "Lift a pause, a checkpoint or an abort (git liza resume).", s.resume)
	addTool(s, "abort", "Stop the team: supervisors kill their agents and exit (git liza abort).", s.abort)
	addUnblock(s)
	addTaskTools(s)
}

// NoteIn is the input of note.
type NoteIn struct {
	Message   string `json:"message" jsonschema:"the note"`
	For       string `json:"for,omitempty" jsonschema:"the task or agent id the note is for; none: everyone"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// NoteAddedOut is what note reports: the note it added.
type NoteAddedOut struct {
	N        int    `json:"n" jsonschema:"the note's number, from 1"`
	For      string `json:"for,omitempty" jsonschema:"whom it is for"`
	By       string `json:"by" jsonschema:"who wrote it"`
	Commit   string `json:"commit" jsonschema:"the state commit"`
	Replayed bool   `json:"replayed,omitempty" jsonschema:"the request id had been applied already"`
}

func (s *Server) note(ctx context.Context, in NoteIn) (*NoteAddedOut, error) {
	r, err := s.svc.Note(ctx, ops.NoteRequest{Call: call(in.RequestID), Message: in.Message, For: in.For})
	if err != nil {
		return nil, err
	}
	return &NoteAddedOut{N: r.N, For: r.For, By: r.By, Commit: r.Commit.String(), Replayed: r.Replayed}, nil
}

// PauseIn is the input of pause.
type PauseIn struct {
	Reason       string `json:"reason,omitempty" jsonschema:"why, for the agents and the audit log"`
	StopSessions bool   `json:"stop_sessions,omitempty" jsonschema:"also ask the supervisors to stop running sessions (SIGINT, then SIGTERM), a coder's with a handoff"`
	RequestID    string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// AbortIn is the input of abort.
type AbortIn struct {
	Reason    string `json:"reason,omitempty" jsonschema:"why, for the agents and the audit log"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// ResumeIn is the input of resume.
type ResumeIn struct {
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) pause(ctx context.Context, in PauseIn) (*ops.ModeResult, error) {
	return s.svc.SetMode(ctx, ops.ModeRequest{Call: call(in.RequestID), Mode: contracts.ModePaused, Reason: in.Reason, StopSessions: in.StopSessions})
}

func (s *Server) resume(ctx context.Context, in ResumeIn) (*ops.ModeResult, error) {
	return s.svc.SetMode(ctx, ops.ModeRequest{Call: call(in.RequestID), Mode: contracts.ModeRunning})
}

func (s *Server) abort(ctx context.Context, in AbortIn) (*ops.ModeResult, error) {
	return s.svc.SetMode(ctx, ops.ModeRequest{Call: call(in.RequestID), Mode: contracts.ModeAborted, Reason: in.Reason})
}
