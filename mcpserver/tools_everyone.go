package mcpserver

import (
	"context"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// everyoneTools are the reads every session has: status, show_task,
// log_task, validate.
func everyoneTools(s *Server) {
	addTool(s, "status", "The board, as git liza status --json shows it: the goal and sprint, the team's mode (RUNNING, PAUSED, CHECKPOINT, ABORTED), the counts of every status, agents, kill switches, alarms, and a page of the tasks in attention order with their leases and reasons: the first 10 of each status (limit says how many, at most 100), the finished ones (MERGED, ABANDONED, SUPERSEDED) only when statuses asks for them; more counts by status the tasks left out. At most 50 agents and 50 alarms (the critical ones first); more_agents and more_alarms count the rest.", s.status)
	addTool(s, "show_task", "One task, as git liza show ID --json prints it: its fields in the seed's names, history, reasons, questions, checkpoint and worktree (whole, unless past the 40,000 characters of any result: then its long texts and lists come cut, and a note says what was cut).", s.showTask)
	addTool(s, "log_task", "The audit log of one task, newest first, as git liza log --task ID --json prints it: each state commit with its operation, agent, time and reason (20 entries unless max says, at most 200).", s.logTask)
	addTool(s, "validate", "Check the board against the Liza contract, as git liza validate --json: valid, and the first 50 problems and warnings (more_problems and more_warnings count the rest).", s.validate)
}

// StatusIn is the input of status.
type StatusIn struct {
	Statuses []string `json:"statuses,omitempty" jsonschema:"only tasks in these statuses (UNCLAIMED, CLAIMED, READY_FOR_REVIEW, ...); none: all"`
	Mine     bool     `json:"mine,omitempty" jsonschema:"only the tasks assigned to or reviewed by you"`
	Limit    int      `json:"limit,omitempty" jsonschema:"at most this many tasks of each status (default 10, at most 100)"`
}

// Bounds of status: a board of a few hundred tasks whole is more than an
// agent CLI keeps of a tool's result (Claude Code keeps 50,000
// characters in the conversation), so a model gets a page of it, as a
// person reading git liza status does.
const (
	statusDefault = 10
	statusMax     = 100
	// statusListMax bounds the agents and the alarms of a page: every
	// coder that ever claimed stays on the board, and every stale lease
	// raises an alarm.
	statusListMax = 50
)

func (s *Server) status(ctx context.Context, in StatusIn) (*StatusOut, error) {
	limit, err := bounded("limit", "tasks", in.Limit, statusDefault, statusMax)
	if err != nil {
		return nil, err
	}
	r := ops.StatusRequest{Limit: limit}
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
	b, err := s.svc.Status(ctx, r)
	if err != nil {
		return nil, err
	}
	b.Page(limit, len(r.Statuses) > 0)
	b.CapLists(statusListMax)
	return &StatusOut{Board: *b}, nil
}

// ShowTaskIn is the input of show_task.
type ShowTaskIn struct {
	Task string `json:"task" jsonschema:"the task, live or archived"`
}

// showTask is one task as git liza show ID --json prints it: the seed's
// field names in the seed's order, its history, reasons, questions,
// checkpoint and worktree included. Its result has no output schema (the
// seed's task document is open: fields the seed adds are kept).
func (s *Server) showTask(ctx context.Context, in ShowTaskIn) (any, error) {
	t, err := s.svc.Task(ctx, "", in.Task)
	if err != nil {
		return nil, err
	}
	return contracts.SeedJSON(t)
}

// LogTaskIn is the input of log_task.
type LogTaskIn struct {
	Task  string `json:"task" jsonschema:"the task"`
	Max   int    `json:"max,omitempty" jsonschema:"at most this many entries, newest first (default 20, at most 200)"`
	Patch bool   `json:"patch,omitempty" jsonschema:"each entry with what it changed, field by field"`
}

// LogTaskOut is what log_task reports.
type LogTaskOut struct {
	Entries []ops.LogEntry `json:"entries" jsonschema:"the state commits that changed the task, newest first"`
	Cut     string         `json:"cut,omitempty" jsonschema:"only when the result was too long for a tool (40,000 characters): what was cut, and the command that prints it whole"`
}

func (o *LogTaskOut) noteCut(note string) { o.Cut = note }

// Bounds of log_task: a model gets a page of the log, not all of it, and
// of an entry's changes the first logChanges entities (an import changes
// every task of the board; the others are counted in more_changes).
const (
	logDefault = 20
	logMax     = 200
	logChanges = 50
)

func (s *Server) logTask(ctx context.Context, in LogTaskIn) (*LogTaskOut, error) {
	n, err := bounded("max", "entries", in.Max, logDefault, logMax)
	if err != nil {
		return nil, err
	}
	if in.Task == "" {
		return nil, contracts.Invalidf("log_task needs the task")
	}
	out, err := s.svc.Log(ctx, ops.LogRequest{Task: in.Task, Max: n, Patch: in.Patch, MaxChanges: logChanges})
	if err != nil {
		return nil, err
	}
	return &LogTaskOut{Entries: nonNil(out)}, nil
}

// ValidateIn is the input of validate.
type ValidateIn struct {
	History bool `json:"history,omitempty" jsonschema:"check every commit of refs/liza/state and every transition between consecutive states"`
}

// ValidateOut is what validate reports, as git liza validate --json prints
// it. An invalid board is a result (valid false, with its problems), not a
// refusal: the call itself succeeded.
type ValidateOut struct {
	Valid    bool     `json:"valid" jsonschema:"the state satisfies the contract"`
	States   int      `json:"states" jsonschema:"how many states were checked"`
	Problems []string `json:"problems" jsonschema:"the violations of the contract, the first 50"`
	Warnings []string `json:"warnings" jsonschema:"what is allowed but worth a look, the first 50"`
	Shallow  string   `json:"shallow,omitempty" jsonschema:"the commit a history check stopped at in a shallow clone"`
	// A state broken in every task has a problem for each: a model gets
	// the first validateListMax, and the counts of the rest (git liza
	// validate lists them all).
	MoreProblems int    `json:"more_problems,omitempty" jsonschema:"the problems left out (git liza validate lists them all)"`
	MoreWarnings int    `json:"more_warnings,omitempty" jsonschema:"the warnings left out"`
	Cut          string `json:"cut,omitempty" jsonschema:"only when the result was too long for a tool (40,000 characters): what was cut, and the command that prints it whole"`
}

func (o *ValidateOut) noteCut(note string) { o.Cut = note }

// StatusOut is what status gives: the board's page, as git liza status
// --json prints the board.
type StatusOut struct {
	ops.Board
	Cut string `json:"cut,omitempty" jsonschema:"only when the result was too long for a tool (40,000 characters): what was cut, and the command that prints it whole"`
}

func (o *StatusOut) noteCut(note string) { o.Cut = note }

// validateListMax bounds the problems and the warnings validate gives.
const validateListMax = 50

func (s *Server) validate(ctx context.Context, in ValidateIn) (*ValidateOut, error) {
	v, err := s.svc.Validate(ctx, ops.ValidateRequest{History: in.History})
	if err != nil {
		return nil, err
	}
	texts := func(ps []contracts.Problem) ([]string, int) {
		list := make([]string, min(len(ps), validateListMax))
		for i := range list {
			list[i] = ps[i].String()
		}
		return list, len(ps) - len(list)
	}
	out := &ValidateOut{Valid: len(v.Problems) == 0, States: v.States, Shallow: v.Shallow}
	out.Problems, out.MoreProblems = texts(v.Problems)
	out.Warnings, out.MoreWarnings = texts(v.Warnings)
	return out, nil
}

// bounded is a count a model asked for (field, of what): def when it
// asked for none, at most max, and a refusal when it is negative.
func bounded(field, what string, n, def, max int) (int, error) {
	switch {
	case n < 0:
		return 0, contracts.Invalidf("%s %d: want a positive number of %s", field, n, what)
	case n == 0:
		return def, nil
	}
	return min(n, max), nil
}
