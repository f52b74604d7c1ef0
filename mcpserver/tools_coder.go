package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// coderTools are a coder's: checkpoint, submit, block, handoff, anomaly,
// discover; and the resource of its task's notes.
func coderTools(s *Server) {
	addTool(s, "checkpoint", "Record the pre-execution checkpoint of your task before changing any file (git liza checkpoint): an observable intent, a validation that is a concrete command with its expected result, every file to modify, each assumption.", s.checkpoint)
	addTool(s, "submit", "Submit your task for review (git liza submit): the commit (default: the tip of task/ID) must be on the task branch, descend from the base, leave the worktree clean and stay within the task's scope and size limits, and the task needs a checkpoint recorded since its latest claim. Commit your work first. A commit that no longer merges onto the integration tip and the tasks approved ahead of it comes back at once: status INTEGRATION_FAILED, with the conflicting files in conflict; your session can end there, and the task returns to you as an integration fix.", s.submit)
	addTool(s, "block", "Block your task (git liza task block): a specific blocked_reason and 1 to 3 blocked_questions whose answers would unblock it; what you attempted. Not for questions the specs answer.", s.block)
	addTool(s, "handoff", "Hand your task over at context exhaustion (git liza handoff): its state in one phrase (summary) and what your replacement should do first (next_action). Commit pending changes first, then end the session with exit 42.", s.handoff)
	addTool(s, "anomaly", "Log an anomaly on your task (git liza anomaly): a type of seed 004 a coder logs (retry_loop, trade_off, spec_ambiguity, external_blocker, assumption_violated, system_ambiguity) with the type's required details.", s.anomaly)
	addTool(s, "discover", "Log an adjacent problem found during your task, without fixing it (git liza discover): what it is, its severity and urgency (immediate wakes the planner), and a recommendation. Then carry on with your task.", s.discover)
	coderResources(s)
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

// SubmitIn is the input of submit: git liza submit ID [COMMIT].
type SubmitIn struct {
	Task      string `json:"task,omitempty" jsonschema:"your task (default: the session's own; no other is accepted)"`
	Commit    string `json:"commit,omitempty" jsonschema:"the commit to submit (default: the tip of your task branch task/ID)"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// SubmitOut is what a submission recorded.
type SubmitOut struct {
	Task         string `json:"task" jsonschema:"the task"`
	Status       string `json:"status" jsonschema:"its status now: READY_FOR_REVIEW, or INTEGRATION_FAILED when the commit no longer merges onto the integration tip and the tasks approved ahead of it"`
	Conflict     string `json:"conflict,omitempty" jsonschema:"why it went back to you at once: the conflicting files, and what they conflict with"`
	ReviewCommit string `json:"review_commit" jsonschema:"the full id of the commit under review"`
	BaseCommit   string `json:"base_commit" jsonschema:"the commit the task started from"`
	DiffRange    string `json:"diff_range" jsonschema:"what the reviewer reads: BASE..REVIEW"`
	Commit       string `json:"commit" jsonschema:"the state commit on refs/liza/state that records it"`
	Replayed     bool   `json:"replayed,omitempty" jsonschema:"the request id had been applied already: nothing new was written"`
}

func (s *Server) submit(ctx context.Context, in SubmitIn) (*SubmitOut, error) {
	task, err := s.taskOf(in.Task)
	if err != nil {
		return nil, err
	}
	r, err := s.svc.Submit(ctx, ops.SubmitRequest{Call: call(in.RequestID), Task: task, Rev: in.Commit})
	if err != nil {
		return nil, err
	}
	out := &SubmitOut{Task: r.ID, Status: string(contracts.ReadyForReview), ReviewCommit: r.ReviewCommit, BaseCommit: r.BaseCommit,
		DiffRange: r.BaseCommit + ".." + r.ReviewCommit, Commit: r.Commit.String(), Replayed: r.Replayed}
	if r.Conflict != "" {
		out.Status, out.Conflict = string(contracts.IntegrationFailed), r.Conflict
	}
	return out, nil
}

// BlockIn is the input of block, in the seed's field names (seed 004's
// blocking protocol).
type BlockIn struct {
	Task             string   `json:"task,omitempty" jsonschema:"your task (default: the session's own; no other is accepted)"`
	BlockedReason    string   `json:"blocked_reason" jsonschema:"what blocks progress: specific, not vague"`
	BlockedQuestions []string `json:"blocked_questions" jsonschema:"1 to 3 questions whose answers would unblock the task"`
	Attempted        []string `json:"attempted,omitempty" jsonschema:"each approach tried before blocking"`
	RequestID        string   `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) block(ctx context.Context, in BlockIn) (*TaskOut, error) {
	task, err := s.taskOf(in.Task)
	if err != nil {
		return nil, err
	}
	r, err := s.svc.Block(ctx, ops.BlockRequest{Call: call(in.RequestID), Task: task, Reason: in.BlockedReason,
		Questions: in.BlockedQuestions, Attempted: in.Attempted})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

// HandoffIn is the input of handoff, in the seed's field names.
type HandoffIn struct {
	Task       string `json:"task,omitempty" jsonschema:"your task (default: the session's own; no other is accepted)"`
	Summary    string `json:"summary" jsonschema:"one phrase: the task's state"`
	NextAction string `json:"next_action" jsonschema:"one phrase: what your replacement should do first"`
	RequestID  string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) handoff(ctx context.Context, in HandoffIn) (*TaskOut, error) {
	task, err := s.taskOf(in.Task)
	if err != nil {
		return nil, err
	}
	r, err := s.svc.Handoff(ctx, ops.HandoffRequest{Call: call(in.RequestID), Task: task, Summary: in.Summary, Next: in.NextAction})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

// AnomalyIn is the input of anomaly: git liza anomaly TYPE --task ID
// --detail KEY=VALUE ...
type AnomalyIn struct {
	Type      string            `json:"type" jsonschema:"the anomaly's type (seed 004), such as retry_loop or spec_ambiguity"`
	Task      string            `json:"task,omitempty" jsonschema:"your task (default: the session's own; no other is accepted)"`
	Details   map[string]string `json:"details,omitempty" jsonschema:"the details, KEY: VALUE; the type's required keys must be present (retry_loop: count, error_pattern; trade_off: what, why, debt_created; ...)"`
	RequestID string            `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// EntryOut is what anomaly and discover appended to the board's lists.
type EntryOut struct {
	ID       string `json:"id" jsonschema:"the entry's id: anomaly-N or disc-N"`
	N        int    `json:"n" jsonschema:"its number in its list, from 1"`
	Type     string `json:"type,omitempty" jsonschema:"the anomaly's type"`
	Task     string `json:"task,omitempty" jsonschema:"the task it is about, or was found during"`
	By       string `json:"by" jsonschema:"who logged it"`
	Severity string `json:"severity,omitempty" jsonschema:"the discovery's severity"`
	Urgency  string `json:"urgency,omitempty" jsonschema:"the discovery's urgency"`
	Commit   string `json:"commit" jsonschema:"the state commit on refs/liza/state that records it"`
	Replayed bool   `json:"replayed,omitempty" jsonschema:"the request id had been applied already: nothing new was written"`
}

func entryOut(r *ops.EntryResult) *EntryOut {
	return &EntryOut{ID: r.ID, N: r.N, Type: r.Type, Task: r.Task, By: r.By, Severity: r.Severity, Urgency: r.Urgency,
		Commit: r.Commit.String(), Replayed: r.Replayed}
}

func (s *Server) anomaly(ctx context.Context, in AnomalyIn) (*EntryOut, error) {
	task, err := s.taskOf(in.Task)
	if err != nil {
		return nil, err
	}
	// The details stay strings: contracts.TypeDetails, in ops, makes the
	// typed keys (count, debt_created) numbers and booleans, as it does
	// for the command line's KEY=VALUE.
	var details contracts.Extra
	if len(in.Details) > 0 {
		details = contracts.Extra{}
		for k, v := range in.Details {
			details[k] = v
		}
	}
	r, err := s.svc.Anomaly(ctx, ops.AnomalyRequest{Call: call(in.RequestID), Type: in.Type, Task: task, Details: details})
	if err != nil {
		return nil, err
	}
	return entryOut(r), nil
}

// DiscoverIn is the input of discover, in the seed's field names.
type DiscoverIn struct {
	Description    string `json:"description" jsonschema:"what was discovered"`
	Severity       string `json:"severity,omitempty" jsonschema:"critical, high, medium or low"`
	Urgency        string `json:"urgency,omitempty" jsonschema:"deferred (the default), or immediate to wake the planner"`
	Recommendation string `json:"recommendation,omitempty" jsonschema:"the suggested action"`
	Task           string `json:"task,omitempty" jsonschema:"the task it was found during (default: the session's own; no other is accepted)"`
	RequestID      string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) discover(ctx context.Context, in DiscoverIn) (*EntryOut, error) {
	// A session without a task of its own may leave the task out, as the
	// command line does: ops then records the agent's current task.
	task := ""
	if in.Task != "" || s.id.Task != "" {
		var err error
		if task, err = s.taskOf(in.Task); err != nil {
			return nil, err
		}
	}
	r, err := s.svc.Discover(ctx, ops.DiscoverRequest{Call: call(in.RequestID), Description: in.Description, Severity: in.Severity,
		Urgency: in.Urgency, Recommendation: in.Recommendation, Task: task})
	if err != nil {
		return nil, err
	}
	return entryOut(r), nil
}

// coderResources are a coder's: the human notes for its task and itself.
func coderResources(s *Server) {
	taskResource(s, "liza://task/", "/notes", "task-notes", "The human notes for your task",
		"The operator's notes (human_notes) that concern you: those for everyone, for you and for your task, numbered as git liza note numbers them. Read them at the start and when told a note arrived.",
		s.notes)
}

// NotesOut is the resource of a task's notes.
type NotesOut struct {
	Task  string    `json:"task"`
	Agent string    `json:"agent"`
	Notes []NoteOut `json:"notes"`
}

// NoteOut is one human note.
type NoteOut struct {
	N         int    `json:"n"`
	Timestamp string `json:"timestamp"`
	By        string `json:"by,omitempty"`
	For       string `json:"for,omitempty"`
	Message   string `json:"message"`
}

// notes are the human notes a session of the agent on task reads: those
// its prompt holds when it starts (contracts.NotesFor), as they are now.
func (s *Server) notes(ctx context.Context, task string) (any, error) {
	snap, err := s.svc.Snapshot(ctx, "")
	if err != nil {
		return nil, err
	}
	st, err := snap.LoadLive()
	if err != nil {
		return nil, err
	}
	out := &NotesOut{Task: task, Agent: s.id.Agent, Notes: []NoteOut{}}
	for _, n := range contracts.NotesFor(st.HumanNotes, s.id.Agent, task) {
		out.Notes = append(out.Notes, NoteOut{N: n.N, Timestamp: n.Timestamp, By: n.By, For: n.For, Message: n.Message})
	}
	return out, nil
}

// taskResource adds a JSON resource about one task, at prefix+ID+suffix:
// a template for any task, and the session's own task's resource by name
// so that it is listed. Reading it is bound as the tools are: a session
// with a task of its own reads that task's only (Server.taskOf).
func taskResource(s *Server, prefix, suffix, name, title, description string, read func(ctx context.Context, task string) (any, error)) {
	handler := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		uri := req.Params.URI
		given, ok := strings.CutPrefix(uri, prefix)
		if ok {
			given, ok = strings.CutSuffix(given, suffix)
		}
		if !ok || given == "" {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		task, err := s.taskOf(given)
		if err != nil {
			return nil, refuse(err)
		}
		v, err := read(ctx, task)
		if err != nil {
			return nil, refuse(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		// Within resultMax, as a tool's result; what was cut is said in
		// the contents' _meta (the text stays JSON).
		b, note, err := fit(b, "git liza show")
		if err != nil {
			return nil, refuse(err)
		}
		var meta mcp.Meta
		var text bytes.Buffer
		if note != "" {
			meta = mcp.Meta{"cut": note}
			text.Write(b)
		} else if err := json.Indent(&text, b, "", "  "); err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: text.String(), Meta: meta}}}, nil
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: prefix + "{task}" + suffix, Name: name, Title: title,
		Description: description, MIMEType: "application/json"}, handler)
	if s.id.Task != "" {
		s.mcp.AddResource(&mcp.Resource{URI: prefix + s.id.Task + suffix, Name: name, Title: title,
			Description: description, MIMEType: "application/json"}, handler)
	}
}
