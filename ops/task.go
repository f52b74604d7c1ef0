package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// AddTaskRequest adds a task. Task.Status is UNCLAIMED, or DRAFT to finish
// the task later; the other fields are the task's own.
type AddTaskRequest struct {
	Call
	Task contracts.Task
	// FromDiscovery, when not zero, is the number of the discovery the
	// task comes from: its converted_to_task is set in the same commit.
	FromDiscovery int
}

// AddTask adds a task (planner or human operator), checking its fields,
// its dependencies and its spec reference.
func (s *Service) AddTask(ctx context.Context, r AddTaskRequest) (*TaskResult, error) {
	t := r.Task
	if t.ID == "" {
		return nil, contracts.Invalidf("task add needs --id")
	}
	if err := contracts.ValidTaskID(t.ID); err != nil {
		return nil, err
	}
	if t.Description == "" {
		return nil, contracts.Invalidf("task add needs --desc")
	}
	if t.Status != contracts.Draft {
		for _, req := range []struct{ flag, val string }{{"--spec", t.SpecRef}, {"--done", t.DoneWhen}, {"--scope", t.Scope}} {
			if req.val == "" {
				return nil, contracts.Invalidf("task %s needs %s (or --draft to finish it later)", t.ID, req.flag)
			}
		}
	}
	if t.Priority < 1 || t.Priority > 5 {
		return nil, contracts.Invalidf("priority %d is out of range: 1 (highest) to 5 (lowest)", t.Priority)
	}
	if t.MaxFiles < 0 || t.MaxLOC < 0 {
		return nil, contracts.Invalidf("--max-files and --max-loc take positive numbers")
	}
	for _, p := range t.Paths {
		if err := contracts.ValidPath(p); err != nil {
			return nil, err
		}
	}
	for _, d := range t.DependsOn {
		if err := contracts.ValidTaskID(d); err != nil {
			return nil, err
		}
		if d == t.ID {
			return nil, contracts.Invalidf("task %s cannot depend on itself", t.ID)
		}
	}
	if t.DependsOn == nil {
		t.DependsOn = contracts.StringList{}
	}
	if r.FromDiscovery < 0 {
		return nil, contracts.Invalidf("--from-discovery takes a discovery number")
	}
	docs, err := contracts.CheckDocs(t.ID, t.Docs)
	if err != nil {
		return nil, err
	}
	// The spec and the docs must be in the repository: a check of git,
	// which the live add makes inside its attempt (it needs the integration
	// branch's name).
	checkSpec := func(tx *cas.Tx) error {
		if err := s.checkSpecIn(tx, t.SpecRef); err != nil {
			return err
		}
		return s.checkDocsIn(tx, docs)
	}
	in := addInput{ID: t.ID, Description: t.Description, SpecRef: t.SpecRef, DoneWhen: t.DoneWhen, Scope: t.Scope, Priority: t.Priority,
		DependsOn: t.DependsOn, Paths: t.Paths, MaxFiles: t.MaxFiles, MaxLOC: t.MaxLOC, Draft: t.Status == contracts.Draft,
		FromDiscovery: r.FromDiscovery, Docs: docs}
	res, err := s.write(ctx, r.Call, kindAdd, in, checkSpec)
	if err != nil {
		return nil, err
	}
	return &TaskResult{ID: t.ID, Status: t.Status, Verb: "added", Written: written(res)}, nil
}

// addInput is what task add records: the task's own fields.
type addInput struct {
	ID          string               `json:"id"`
	Description string               `json:"description"`
	SpecRef     string               `json:"spec_ref,omitempty"`
	DoneWhen    string               `json:"done_when,omitempty"`
	Scope       string               `json:"scope,omitempty"`
	Priority    int                  `json:"priority"`
	DependsOn   contracts.StringList `json:"depends_on"`
	Paths       contracts.StringList `json:"paths,omitempty"`
	MaxFiles    int                  `json:"max_files,omitempty"`
	MaxLOC      int                  `json:"max_loc,omitempty"`
	Draft       bool                 `json:"draft,omitempty"`
	// FromDiscovery is the discovery the task comes from (disc-N).
	FromDiscovery int `json:"from_discovery,omitempty"`
	// Docs are the task's extra documents (seed 002: at most two).
	Docs contracts.StringList `json:"docs,omitempty"`
}

var kindAdd = def("add", contracts.OpAdd, func(tx *cas.Tx, in *addInput) (any, error) {
	t := contracts.Task{ID: in.ID, Description: in.Description, SpecRef: in.SpecRef, DoneWhen: in.DoneWhen, Scope: in.Scope,
		Priority: in.Priority, DependsOn: in.DependsOn, Paths: in.Paths, MaxFiles: in.MaxFiles, MaxLOC: in.MaxLOC, Status: contracts.Unclaimed}
	if in.Draft {
		t.Status = contracts.Draft
	}
	if len(in.Docs) > 0 {
		// Checked again where the commit is replayed: a recorded input is
		// anyone's to write.
		docs, err := contracts.CheckDocs(in.ID, in.Docs)
		if err != nil {
			return nil, err
		}
		t.Docs = docs
	}
	if t.DependsOn == nil {
		t.DependsOn = contracts.StringList{}
	}
	if err := contracts.ValidTaskID(t.ID); err != nil {
		return nil, err
	}
	if err := checkGoalOpen(tx, "new tasks"); err != nil {
		return nil, err
	}
	live, archived, err := tx.HasTask(t.ID)
	if err != nil {
		return nil, err
	}
	if live || archived {
		return nil, contracts.Invalidf("task %s already exists", t.ID)
	}
	if d, err := unknownDependency(tx, t.DependsOn); err != nil {
		return nil, err
	} else if d != "" {
		return nil, contracts.Invalidf("task %s depends on unknown task %s", t.ID, d)
	}
	now := tx.NowString()
	t.Created = now
	t.History = []*contracts.HistoryEvent{{Time: now, Event: "created", Agent: contracts.ActorName(tx.Actor)}}
	tx.PutTask(&t)
	if err := tx.Plan(t.ID); err != nil {
		return nil, err
	}
	if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{Time: now, Event: "task_added", Task: t.ID, Agent: contracts.ActorName(tx.Actor)}); err != nil {
		return nil, err
	}
	subject := fmt.Sprintf("add %s%s", t.ID, by(tx.Actor))
	if in.FromDiscovery != 0 {
		disc, err := convert(tx, in.FromDiscovery, t.ID)
		if err != nil {
			return nil, err
		}
		subject = fmt.Sprintf("add %s from %s%s", t.ID, disc, by(tx.Actor))
	}
	tx.Describe(subject, t.ID)
	return map[string]string{"id": t.ID, "status": string(t.Status)}, nil
})

// FinalizeRequest moves a DRAFT task to UNCLAIMED.
type FinalizeRequest struct {
	Call
	Task string
}

// Finalize moves a DRAFT task to UNCLAIMED once it passes every gate of
// seed 004's task definition ("Tasks missing any gate remain DRAFT"): a
// spec reference whose file is in the repository, a done_when, a scope,
// and dependencies that are on the board. The spec file is a check of git,
// which the live finalize makes inside its attempt.
func (s *Service) Finalize(ctx context.Context, r FinalizeRequest) (*TaskResult, error) {
	if err := contracts.ValidTaskID(r.Task); err != nil {
		return nil, err
	}
	res, err := s.write(ctx, r.Call, kindFinalize, taskInput{Task: r.Task}, func(tx *cas.Tx) error {
		t, err := tx.MustTask(r.Task)
		if err != nil || t.Status != contracts.Draft || t.SpecRef == "" {
			return err // the operation says what is wrong
		}
		// The board's own error is no refusal of the spec.
		if _, err := tx.Meta(); err != nil {
			return err
		}
		if err := s.checkSpecIn(tx, t.SpecRef); err != nil {
			if Class(err) == contracts.CodeInvalid {
				return contracts.Invalidf("task %s cannot be finalized: %v", t.ID, err)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &TaskResult{ID: r.Task, Status: contracts.Unclaimed, Verb: "finalized", Written: written(res)}, nil
}

// taskInput is the input of an operation on one task that takes nothing
// else.
type taskInput struct {
	Task string `json:"task"`
}

var kindFinalize = def("finalize", contracts.OpFinalize, func(tx *cas.Tx, in *taskInput) (any, error) {
	if err := checkGoalOpen(tx, "finalized tasks"); err != nil {
		return nil, err
	}
	return transition(tx, contracts.OpFinalize, in.Task, contracts.Unclaimed, "finalized", func(t *contracts.Task) error {
		if t.Status != contracts.Draft {
			return contracts.Invalidf("task %s is %s, not DRAFT", t.ID, t.Status)
		}
		if tx.Rules < contracts.RulesWhole {
			for _, req := range []struct{ field, val string }{{"spec_ref", t.SpecRef}, {"done_when", t.DoneWhen}} {
				if req.val == "" {
					return contracts.Invalidf("task %s cannot be finalized: it has no %s", t.ID, req.field)
				}
			}
			return nil
		}
		if err := taskGates(t); err != nil {
			return contracts.Invalidf("task %s cannot be finalized: %v", t.ID, err)
		}
		if d, err := unknownDependency(tx, t.DependsOn); err != nil {
			return err
		} else if d != "" {
			return contracts.Invalidf("task %s cannot be finalized: it depends on unknown task %s", t.ID, d)
		}
		return nil
	})
})

// unknownDependency is the first of deps that is neither on the board nor
// in the archive, or "".
func unknownDependency(tx *cas.Tx, deps []string) (string, error) {
	for _, d := range deps {
		live, archived, err := tx.HasTask(d)
		if err != nil {
			return "", err
		}
		if !live && !archived {
			return d, nil
		}
	}
	return "", nil
}

// transition moves one task to status `to` after check accepted it,
// recording event in the task's history.
func transition(tx *cas.Tx, op contracts.Op, id string, to contracts.Status, event string, check func(t *contracts.Task) error) (any, error) {
	t, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	if err := check(t); err != nil {
		return nil, err
	}
	if err := contracts.CheckTransition(t.ID, t.Status, to); err != nil {
		return nil, err
	}
	from := t.Status
	t.Status = to
	t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: event, Agent: contracts.ActorName(tx.Actor), From: string(from), To: string(to)})
	tx.PutTask(t)
	tx.Describe(fmt.Sprintf("%s %s%s", op, id, by(tx.Actor)), id)
	return map[string]string{"id": id, "status": string(to)}, nil
}

// checkSpecIn checks a spec reference, if any, against HEAD and the
// integration branch tx's state names.
func (s *Service) checkSpecIn(tx *cas.Tx, ref string) error {
	if ref == "" {
		return nil
	}
	m, err := tx.Meta()
	if err != nil {
		return err
	}
	return s.checkSpecAt(ref, m.Config.IntegrationBranch)
}

// checkSpecAt checks a spec reference against HEAD and the integration
// branch.
func (s *Service) checkSpecAt(ref, branch string) error {
	_, head, err := s.Repo.Head()
	if err != nil {
		return err
	}
	integ, _, err := s.Repo.ReadRef("refs/heads/" + branch)
	if err != nil {
		return err
	}
	return s.checkSpec(ref, head, integ)
}

// checkSpec requires the file part of a spec reference (before any #anchor)
// to exist in HEAD or on the integration branch.
func (s *Service) checkSpec(ref string, head, integration refstore.Hash) error {
	path := contracts.DocPath(ref)
	if path == "" || strings.HasPrefix(path, "/") || strings.Contains("/"+path+"/", "/../") {
		return contracts.Invalidf("spec reference %q must be a path inside the repository", ref)
	}
	return s.committed("spec", path, head, integration)
}

// checkDocsIn checks that each of a task's docs (checked by
// contracts.CheckDocs) is in HEAD or on the integration branch, as
// checkSpecIn checks the spec.
func (s *Service) checkDocsIn(tx *cas.Tx, docs []string) error {
	if len(docs) == 0 {
		return nil
	}
	m, err := tx.Meta()
	if err != nil {
		return err
	}
	_, head, err := s.Repo.Head()
	if err != nil {
		return err
	}
	integ, _, err := s.Repo.ReadRef("refs/heads/" + m.Config.IntegrationBranch)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := s.committedFile(contracts.DocPath(d), head, integ); err != nil {
			return err
		}
	}
	return nil
}

// committedFile requires a doc to be a regular file in HEAD or on the
// integration branch: seed 002's docs are files, and a symbolic link
// would lead the agent that reads it out of the repository.
func (s *Service) committedFile(path string, head, integration refstore.Hash) error {
	other := ""
	for _, c := range []refstore.Hash{head, integration} {
		if c.IsZero() {
			continue
		}
		mode, err := s.modeAt(c, path)
		if err != nil {
			return err
		}
		switch mode {
		case refstore.ModeFile, "100755":
			return nil
		case "":
		default:
			other = mode
		}
	}
	if other != "" {
		return contracts.Invalidf("doc %s is not a file (mode %s): name a file of the repository", path, other)
	}
	return s.committed("doc", path, head, integration)
}

// modeAt is the mode of path's entry in commit's tree, or "" when there is
// none.
func (s *Service) modeAt(commit refstore.Hash, path string) (string, error) {
	c, err := s.Repo.ReadCommit(commit)
	if err != nil {
		return "", err
	}
	id, parts := c.Tree, strings.Split(path, "/")
	for i, name := range parts {
		entries, err := s.Repo.ReadTree(id)
		if err != nil {
			return "", err
		}
		e, ok := refstore.FindEntry(entries, name)
		if !ok || i < len(parts)-1 && !e.IsTree() {
			return "", nil
		}
		if i == len(parts)-1 {
			return e.Mode, nil
		}
		id = e.ID
	}
	return "", nil
}

// committed requires path to exist in HEAD or on the integration branch;
// what names it in the refusal.
func (s *Service) committed(what, path string, head, integration refstore.Hash) error {
	for _, c := range []refstore.Hash{head, integration} {
		if c.IsZero() {
			continue
		}
		ok, err := s.Repo.FileAt(c, path)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return contracts.Invalidf("%s %s is not in HEAD or on the integration branch: commit it first", what, path)
}
