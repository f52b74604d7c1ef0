package ops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// EditTaskRequest changes the fields of a task that is not started: each
// field given (not nil) replaces the task's.
type EditTaskRequest struct {
	Call
	Task        string
	Description *string
	SpecRef     *string
	DoneWhen    *string
	Scope       *string
	Priority    *int
	DependsOn   *[]string
	Paths       *[]string
	MaxFiles    *int
	MaxLOC      *int
	// Docs, when given, replace the task's extra documents (at most two;
	// empty for none).
	Docs *[]string
}

// EditTask changes a DRAFT or UNCLAIMED task (planner or human): the
// planner finishes a draft, or rescopes work nobody has started. The
// task's history records each field's value before and after; for an
// UNCLAIMED task the change is a rescope and goal.alignment_history has it
// too (seed 004: the planner "must append to goal.alignment_history after
// each rescope"). An UNCLAIMED task keeps every gate it passed to leave
// DRAFT. A new spec must be in the repository: a check of git, which the
// live edit makes inside its attempt.
func (s *Service) EditTask(ctx context.Context, r EditTaskRequest) (*TaskResult, error) {
	text := func(p *string) *string {
		if p == nil {
			return nil
		}
		v := strings.TrimSpace(*p)
		return &v
	}
	in := editInput{Task: r.Task, Description: text(r.Description), SpecRef: text(r.SpecRef), DoneWhen: text(r.DoneWhen), Scope: text(r.Scope),
		Priority: r.Priority, Paths: r.Paths, MaxFiles: r.MaxFiles, MaxLOC: r.MaxLOC}
	if r.DependsOn != nil {
		deps := []string{}
		for _, d := range *r.DependsOn {
			if !slices.Contains(deps, d) {
				deps = append(deps, d)
			}
		}
		in.DependsOn = &deps
	}
	in.Docs = r.Docs
	if err := in.check(); err != nil {
		return nil, err
	}
	return s.writeLeverLive(ctx, r.Call, kindEdit, r.Task, in, func(tx *cas.Tx) error {
		if in.SpecRef != nil {
			if err := s.checkSpecIn(tx, *in.SpecRef); err != nil {
				return err
			}
		}
		if in.Docs == nil {
			return nil
		}
		return s.checkDocsIn(tx, *in.Docs)
	})
}

// editInput is what task edit records: the task and the fields given.
type editInput struct {
	Task        string    `json:"task"`
	Description *string   `json:"description,omitempty"`
	SpecRef     *string   `json:"spec_ref,omitempty"`
	DoneWhen    *string   `json:"done_when,omitempty"`
	Scope       *string   `json:"scope,omitempty"`
	Priority    *int      `json:"priority,omitempty"`
	DependsOn   *[]string `json:"depends_on,omitempty"`
	Paths       *[]string `json:"paths,omitempty"`
	MaxFiles    *int      `json:"max_files,omitempty"`
	MaxLOC      *int      `json:"max_loc,omitempty"`
	Docs        *[]string `json:"docs,omitempty"`
}

// check refuses fields no task may have.
func (in *editInput) check() error {
	if err := contracts.ValidTaskID(in.Task); err != nil {
		return err
	}
	if in.Description != nil && strings.TrimSpace(*in.Description) == "" {
		return contracts.Invalidf("--desc cannot be empty")
	}
	if p := in.Priority; p != nil && (*p < 1 || *p > 5) {
		return contracts.Invalidf("priority %d is out of range: 1 (highest) to 5 (lowest)", *p)
	}
	if in.MaxFiles != nil && *in.MaxFiles < 0 || in.MaxLOC != nil && *in.MaxLOC < 0 {
		return contracts.Invalidf("--max-files and --max-loc take positive numbers")
	}
	if in.DependsOn != nil {
		for _, d := range *in.DependsOn {
			if err := contracts.ValidTaskID(d); err != nil {
				return err
			}
			if d == in.Task {
				return contracts.Invalidf("task %s cannot depend on itself", in.Task)
			}
		}
	}
	if in.Paths != nil {
		for _, p := range *in.Paths {
			if err := contracts.ValidPath(p); err != nil {
				return err
			}
		}
	}
	if in.Docs != nil {
		docs, err := contracts.CheckDocs(in.Task, *in.Docs)
		if err != nil {
			return err
		}
		d := []string(docs)
		in.Docs = &d
	}
	return nil
}

var kindEdit = since(contracts.RulesWhole, def("edit", contracts.OpEdit, func(tx *cas.Tx, in *editInput) (any, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	return lever(tx, contracts.OpEdit, in.Task, "edited", func(t *contracts.Task) (leverChange, error) {
		if t.Status != contracts.Draft && t.Status != contracts.Unclaimed {
			return leverChange{}, contracts.Invalidf("task %s is %s: only DRAFT or UNCLAIMED tasks are edited (supersede it to rescope started work)", t.ID, t.Status)
		}
		changes := contracts.Extra{}
		setField(changes, "description", &t.Description, in.Description)
		setField(changes, "spec_ref", &t.SpecRef, in.SpecRef)
		setField(changes, "done_when", &t.DoneWhen, in.DoneWhen)
		setField(changes, "scope", &t.Scope, in.Scope)
		setField(changes, "priority", &t.Priority, in.Priority)
		setField(changes, "max_files", &t.MaxFiles, in.MaxFiles)
		setField(changes, "max_loc", &t.MaxLOC, in.MaxLOC)
		setList := func(field string, dst *contracts.StringList, v *[]string) {
			if v != nil && !slices.Equal(*dst, contracts.StringList(*v)) {
				changes[field] = contracts.Extra{"from": []string(*dst), "to": slices.Clone(*v)}
				*dst = contracts.StringList(slices.Clone(*v))
			}
		}
		setList("depends_on", &t.DependsOn, in.DependsOn)
		setList("paths", &t.Paths, in.Paths)
		setList("docs", &t.Docs, in.Docs)
		if len(changes) == 0 {
			return leverChange{}, contracts.Invalidf("task edit %s changes nothing", t.ID)
		}
		if d, err := unknownDependency(tx, t.DependsOn); err != nil {
			return leverChange{}, err
		} else if d != "" {
			return leverChange{}, contracts.Invalidf("task %s depends on unknown task %s", t.ID, d)
		}
		names := slices.Sorted(maps.Keys(changes))
		if t.Status == contracts.Unclaimed {
			if err := taskGates(t); err != nil {
				return leverChange{}, contracts.Invalidf("task %s is UNCLAIMED and would lose a gate: %v", t.ID, err)
			}
			if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{
				Time: tx.NowString(), Event: "task_edited", Task: t.ID, Agent: contracts.ActorName(tx.Actor),
				Reason: "changed " + strings.Join(names, ", "),
			}); err != nil {
				return leverChange{}, err
			}
		}
		return leverChange{To: t.Status, Reason: "changed " + strings.Join(names, ", "), Verb: "edited: " + strings.Join(names, ", "),
			Extra: contracts.Extra{"changes": changes}}, nil
	})
}))

// setField sets *dst to *v when v is given and differs, recording the
// change of field in changes.
func setField[T comparable](changes contracts.Extra, field string, dst *T, v *T) {
	if v != nil && *v != *dst {
		changes[field] = contracts.Extra{"from": *dst, "to": *v}
		*dst = *v
	}
}

// taskGates checks seed 004's task definition gates, which a task passes to
// leave DRAFT ("Tasks missing any gate remain DRAFT"): a spec reference, a
// falsifiable done_when, a scope boundary. The spec file and the
// dependencies are checked against the repository and the board by the
// callers; TDD inclusion is the reviewer's to judge.
func taskGates(t *contracts.Task) error {
	var missing []string
	for _, f := range []struct{ field, val string }{
		{"description", t.Description}, {"spec_ref", t.SpecRef}, {"done_when", t.DoneWhen}, {"scope", t.Scope},
	} {
		if strings.TrimSpace(f.val) == "" {
			missing = append(missing, f.field)
		}
	}
	if len(missing) > 0 {
		return contracts.Invalidf("it has no %s", strings.Join(missing, ", "))
	}
	return nil
}

// ConvertRequest records that a discovery became a task.
type ConvertRequest struct {
	Call
	// Discovery is the discovery's number, as git liza discover printed
	// it (disc-N).
	Discovery int
	Task      string
}

// ConvertResult is what a conversion recorded.
type ConvertResult struct {
	Discovery string `json:"discovery"`
	Task      string `json:"task"`
	Written   `json:"-"`
}

// ConvertDiscovery sets a discovery's converted_to_task (planner or human),
// so that an immediate discovery stops waking the planner. The task must
// exist; a discovery converted to another task stays as it is.
func (s *Service) ConvertDiscovery(ctx context.Context, r ConvertRequest) (*ConvertResult, error) {
	if err := contracts.ValidTaskID(r.Task); err != nil {
		return nil, err
	}
	return writeAs[ConvertResult](ctx, s, r.Call, kindConvert, convertInput{Discovery: r.Discovery, Task: r.Task}, nil)
}

// convertInput is what discover convert records.
type convertInput struct {
	Discovery int    `json:"discovery"`
	Task      string `json:"task"`
}

var kindConvert = since(contracts.RulesWhole, def("convert", contracts.OpConvert, func(tx *cas.Tx, in *convertInput) (any, error) {
	if err := knownTask(tx, in.Task); err != nil {
		return nil, err
	}
	id, err := convert(tx, in.Discovery, in.Task)
	if err != nil {
		return nil, err
	}
	tx.Describe(fmt.Sprintf("convert %s to %s%s", id, in.Task, by(tx.Actor)), in.Task)
	return ConvertResult{Discovery: id, Task: in.Task}, nil
}))

// convert sets discovery n's converted_to_task to task and returns its id.
func convert(tx *cas.Tx, n int, task string) (string, error) {
	count, err := tx.ListLen(cas.ListDiscovered)
	if err != nil {
		return "", err
	}
	if n < 1 || n > count {
		return "", contracts.Invalidf("no discovery %d (there are %d)", n, count)
	}
	list, err := tx.Discoveries()
	if err != nil {
		return "", err
	}
	d := *list[n-1]
	id := d.ID
	if id == "" {
		id = fmt.Sprintf("disc-%d", n)
	}
	switch d.ConvertedToTask {
	case task:
		return id, nil
	case "":
	default:
		return "", contracts.Invalidf("%s was converted to task %s already", id, d.ConvertedToTask)
	}
	d.ConvertedToTask = task
	tx.PutDiscovery(n, &d)
	return id, nil
}
