package mcpserver

import (
	"context"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// plannerTools are a planner's: task_add, task_edit, finalize, supersede,
// abandon, unblock, note_done, discover_convert. A planner's session has no
// task of its own: these tools name the task they act on, and ops checks
// that a planner may do it.
func plannerTools(s *Server) {
	addTaskTools(s)
	addTool(s, "finalize", "Move a DRAFT task to UNCLAIMED once its spec_ref, done_when and scope are set (git liza task finalize).", s.finalize)
	addTool(s, "supersede", "Mark a task SUPERSEDED by existing replacement tasks, with the one-sentence root cause of the rescope (git liza task supersede).", s.supersede)
	addTool(s, "abandon", "Drop a DRAFT, UNCLAIMED or BLOCKED task: ABANDONED, with the reason (git liza task abandon).", s.abandon)
	addUnblock(s)
	addTool(s, "note_done", "Mark human notes you have dealt with as processed, by their numbers (from 1), so that they wake no planner again (git liza note --done).", s.noteDone)
	addTool(s, "discover_convert", "Record that a discovery became a task: sets its converted_to_task, so that it wakes no planner again (git liza discover convert).", s.discoverConvert)
}

// addTaskTools adds task_add and task_edit, which the planner and the
// human operator share.
func addTaskTools(s *Server) {
	addTool(s, "task_add", "Add a task: UNCLAIMED, or DRAFT with draft (git liza task add). The spec_ref and the docs (at most two) must name files in the repository; dependencies must be tasks on the board.", s.taskAdd)
	addTool(s, "task_edit", "Change fields of a DRAFT or UNCLAIMED task; fields left out keep their value, and the task's history records what changed (git liza task edit).", s.taskEdit)
}

// addUnblock adds unblock, which the planner and the human operator share.
func addUnblock(s *Server) {
	addTool(s, "unblock", "Move a BLOCKED task back to UNCLAIMED, keeping its worktree for the next claim (git liza task unblock).", s.unblock)
}

// TaskAddIn is the input of task_add: the seed's task fields.
type TaskAddIn struct {
	ID            string   `json:"id" jsonschema:"the task id, kebab-case"`
	Description   string   `json:"description" jsonschema:"what to build, in a sentence or two"`
	SpecRef       string   `json:"spec_ref,omitempty" jsonschema:"the spec: a path in the repository, optionally with #anchor (required unless draft)"`
	DoneWhen      string   `json:"done_when,omitempty" jsonschema:"falsifiable completion criteria (required unless draft)"`
	Scope         string   `json:"scope,omitempty" jsonschema:"what is in and out of scope (required unless draft)"`
	Priority      int      `json:"priority,omitempty" jsonschema:"1 (highest) to 5 (lowest); default 3"`
	DependsOn     []string `json:"depends_on,omitempty" jsonschema:"task ids that must be MERGED first"`
	Paths         []string `json:"paths,omitempty" jsonschema:"paths or globs the task owns"`
	MaxFiles      int      `json:"max_files,omitempty" jsonschema:"most files a submission may touch"`
	MaxLOC        int      `json:"max_loc,omitempty" jsonschema:"most lines a submission may add and remove"`
	Draft         bool     `json:"draft,omitempty" jsonschema:"keep the task in DRAFT until finalize"`
	FromDiscovery int      `json:"from_discovery,omitempty" jsonschema:"the number N of the discovery (disc-N) the task comes from: sets its converted_to_task"`
	Docs          []string `json:"docs,omitempty" jsonschema:"at most two more files of the repository the task's agents should read besides the spec (seed 002's context diet)"`
	RequestID     string   `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) taskAdd(ctx context.Context, in TaskAddIn) (*TaskOut, error) {
	t := contracts.Task{ID: in.ID, Description: in.Description, SpecRef: in.SpecRef, DoneWhen: in.DoneWhen, Scope: in.Scope,
		Priority: in.Priority, DependsOn: contracts.StringList(in.DependsOn), Paths: contracts.StringList(in.Paths),
		MaxFiles: in.MaxFiles, MaxLOC: in.MaxLOC, Docs: contracts.StringList(in.Docs), Status: contracts.Unclaimed}
	if t.Priority == 0 {
		t.Priority = 3 // the command's default
	}
	if in.Draft {
		t.Status = contracts.Draft
	}
	r, err := s.svc.AddTask(ctx, ops.AddTaskRequest{Call: call(in.RequestID), Task: t, FromDiscovery: in.FromDiscovery})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

// TaskEditIn is the input of task_edit. A field left out (or null) keeps
// its value; an empty list clears depends_on or paths.
type TaskEditIn struct {
	Task        string    `json:"task" jsonschema:"the task to change"`
	Description *string   `json:"description,omitempty" jsonschema:"what to build"`
	SpecRef     *string   `json:"spec_ref,omitempty" jsonschema:"the spec: a path in the repository, optionally with #anchor"`
	DoneWhen    *string   `json:"done_when,omitempty" jsonschema:"falsifiable completion criteria"`
	Scope       *string   `json:"scope,omitempty" jsonschema:"what is in and out of scope"`
	Priority    *int      `json:"priority,omitempty" jsonschema:"1 (highest) to 5 (lowest)"`
	DependsOn   *[]string `json:"depends_on,omitempty" jsonschema:"task ids that must be MERGED first ([] for none)"`
	Paths       *[]string `json:"paths,omitempty" jsonschema:"paths or globs the task owns ([] for none)"`
	MaxFiles    *int      `json:"max_files,omitempty" jsonschema:"most files a submission may touch"`
	MaxLOC      *int      `json:"max_loc,omitempty" jsonschema:"most lines a submission may add and remove"`
	Docs        *[]string `json:"docs,omitempty" jsonschema:"at most two more files of the repository the task's agents should read ([] for none)"`
	RequestID   string    `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) taskEdit(ctx context.Context, in TaskEditIn) (*TaskOut, error) {
	r, err := s.svc.EditTask(ctx, ops.EditTaskRequest{Call: call(in.RequestID), Task: in.Task,
		Description: in.Description, SpecRef: in.SpecRef, DoneWhen: in.DoneWhen, Scope: in.Scope, Priority: in.Priority,
		DependsOn: in.DependsOn, Paths: in.Paths, MaxFiles: in.MaxFiles, MaxLOC: in.MaxLOC, Docs: in.Docs})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

// TaskIn is the input of a tool that acts on one named task.
type TaskIn struct {
	Task      string `json:"task" jsonschema:"the task"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) finalize(ctx context.Context, in TaskIn) (*TaskOut, error) {
	r, err := s.svc.Finalize(ctx, ops.FinalizeRequest{Call: call(in.RequestID), Task: in.Task})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

func (s *Server) unblock(ctx context.Context, in TaskIn) (*TaskOut, error) {
	r, err := s.svc.Unblock(ctx, ops.UnblockRequest{Call: call(in.RequestID), Task: in.Task})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

// SupersedeIn is the input of supersede.
type SupersedeIn struct {
	Task      string   `json:"task" jsonschema:"the task being replaced"`
	By        []string `json:"by" jsonschema:"the existing tasks that replace it"`
	Reason    string   `json:"reason" jsonschema:"one-sentence root cause of the rescope"`
	RequestID string   `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) supersede(ctx context.Context, in SupersedeIn) (*TaskOut, error) {
	r, err := s.svc.Supersede(ctx, ops.SupersedeRequest{Call: call(in.RequestID), Task: in.Task, By: in.By, Reason: in.Reason})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

// AbandonIn is the input of abandon.
type AbandonIn struct {
	Task      string `json:"task" jsonschema:"the task to drop"`
	Reason    string `json:"reason" jsonschema:"why the task is dropped"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

func (s *Server) abandon(ctx context.Context, in AbandonIn) (*TaskOut, error) {
	r, err := s.svc.Abandon(ctx, ops.AbandonRequest{Call: call(in.RequestID), Task: in.Task, Reason: in.Reason})
	if err != nil {
		return nil, err
	}
	return taskOut(r), nil
}

// NoteDoneIn is the input of note_done.
type NoteDoneIn struct {
	Notes     []int  `json:"notes" jsonschema:"the note numbers, from 1 (as status lists the human notes)"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// NoteDoneOut is what note_done reports.
type NoteDoneOut struct {
	Agent     string `json:"agent" jsonschema:"the planner that processed them"`
	Processed []int  `json:"processed" jsonschema:"the notes newly marked (none: they were processed already)"`
	Commit    string `json:"commit" jsonschema:"the state commit"`
	Replayed  bool   `json:"replayed,omitempty" jsonschema:"the request id had been applied already"`
}

func (s *Server) noteDone(ctx context.Context, in NoteDoneIn) (*NoteDoneOut, error) {
	if len(in.Notes) == 0 {
		return nil, contracts.Invalidf("note_done needs the numbers of the notes")
	}
	for _, n := range in.Notes {
		if n < 1 {
			return nil, contracts.Invalidf("note %d: note numbers start at 1", n)
		}
	}
	r, err := s.svc.NotesDone(ctx, ops.NotesDoneRequest{Call: call(in.RequestID), Notes: in.Notes})
	if err != nil {
		return nil, err
	}
	return &NoteDoneOut{Agent: r.Agent, Processed: nonNil(r.Processed), Commit: r.Commit.String(), Replayed: r.Replayed}, nil
}

// DiscoverConvertIn is the input of discover_convert.
type DiscoverConvertIn struct {
	Discovery int    `json:"discovery" jsonschema:"the discovery's number N (disc-N)"`
	Task      string `json:"task" jsonschema:"the task it became (it must exist)"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retried call idempotent: the same id again changes nothing"`
}

// DiscoverConvertOut is what discover_convert reports.
type DiscoverConvertOut struct {
	Discovery string `json:"discovery" jsonschema:"the discovery (disc-N)"`
	Task      string `json:"task" jsonschema:"the task it became"`
	Commit    string `json:"commit" jsonschema:"the state commit"`
	Replayed  bool   `json:"replayed,omitempty" jsonschema:"the request id had been applied already"`
}

func (s *Server) discoverConvert(ctx context.Context, in DiscoverConvertIn) (*DiscoverConvertOut, error) {
	if in.Discovery < 1 {
		return nil, contracts.Invalidf("discovery %d: want its number (1 for disc-1)", in.Discovery)
	}
	r, err := s.svc.ConvertDiscovery(ctx, ops.ConvertRequest{Call: call(in.RequestID), Discovery: in.Discovery, Task: in.Task})
	if err != nil {
		return nil, err
	}
	return &DiscoverConvertOut{Discovery: r.Discovery, Task: r.Task, Commit: r.Commit.String(), Replayed: r.Replayed}, nil
}

// nonNil is list, or an empty list for none: a JSON array, never null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
