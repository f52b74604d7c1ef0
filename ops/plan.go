package ops

import (
	"context"
	"fmt"
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
}

// EditTask changes a DRAFT or UNCLAIMED task (planner or human): the
// planner finishes a draft, or rescopes work nobody has started. The
// task's history records each field's value before and after; for an
// UNCLAIMED task the change is a rescope and goal.alignment_history has it
// too (seed 004: the planner "must append to goal.alignment_history after
// each rescope"). An UNCLAIMED task keeps every gate it passed to leave
// DRAFT.
func (s *Service) EditTask(ctx context.Context, r EditTaskRequest) (*TaskResult, error) {
	id := r.Task
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	text := func(p *string) *string {
		if p == nil {
			return nil
		}
		v := strings.TrimSpace(*p)
		return &v
	}
	desc, spec, done, scope := text(r.Description), text(r.SpecRef), text(r.DoneWhen), text(r.Scope)
	if desc != nil && *desc == "" {
		return nil, contracts.Invalidf("--desc cannot be empty")
	}
	if r.Priority != nil && (*r.Priority < 1 || *r.Priority > 5) {
		return nil, contracts.Invalidf("priority %d is out of range: 1 (highest) to 5 (lowest)", *r.Priority)
	}
	if r.MaxFiles != nil && *r.MaxFiles < 0 || r.MaxLOC != nil && *r.MaxLOC < 0 {
		return nil, contracts.Invalidf("--max-files and --max-loc take positive numbers")
	}
	var deps, paths contracts.StringList
	if r.DependsOn != nil {
		deps = contracts.StringList{}
		for _, d := range *r.DependsOn {
			if err := contracts.ValidTaskID(d); err != nil {
				return nil, err
			}
			if d == id {
				return nil, contracts.Invalidf("task %s cannot depend on itself", id)
			}
			if !deps.Contains(d) {
				deps = append(deps, d)
			}
		}
	}
	if r.Paths != nil {
		for _, p := range *r.Paths {
			if err := contracts.ValidPath(p); err != nil {
				return nil, err
			}
		}
		paths = contracts.StringList(*r.Paths)
	}
	// The spec is checked against the repository before the operation,
	// which reads only the state.
	if spec != nil && *spec != "" {
		if err := s.checkSpecNow(ctx, *spec); err != nil {
			return nil, err
		}
	}
	return s.lever(ctx, r.Call, contracts.OpEdit, id, "edited", func(tx *cas.Tx, t *contracts.Task) (leverChange, error) {
		if t.Status != contracts.Draft && t.Status != contracts.Unclaimed {
			return leverChange{}, contracts.Invalidf("task %s is %s: only DRAFT or UNCLAIMED tasks are edited (supersede it to rescope started work)", t.ID, t.Status)
		}
		changes := contracts.Extra{}
		setText := func(field string, dst *string, v *string) {
			if v != nil && *v != *dst {
				changes[field] = contracts.Extra{"from": *dst, "to": *v}
				*dst = *v
			}
		}
		setText("description", &t.Description, desc)
		setText("spec_ref", &t.SpecRef, spec)
		setText("done_when", &t.DoneWhen, done)
		setText("scope", &t.Scope, scope)
		setInt := func(field string, dst *int, v *int) {
			if v != nil && *v != *dst {
				changes[field] = contracts.Extra{"from": *dst, "to": *v}
				*dst = *v
			}
		}
		setInt("priority", &t.Priority, r.Priority)
		setInt("max_files", &t.MaxFiles, r.MaxFiles)
		setInt("max_loc", &t.MaxLOC, r.MaxLOC)
		setList := func(field string, dst *contracts.StringList, v contracts.StringList, given bool) {
			if given && !slices.Equal(*dst, v) {
				changes[field] = contracts.Extra{"from": []string(*dst), "to": []string(v)}
				*dst = v
			}
		}
		setList("depends_on", &t.DependsOn, deps, r.DependsOn != nil)
		setList("paths", &t.Paths, paths, r.Paths != nil)
		if len(changes) == 0 {
			return leverChange{}, contracts.Invalidf("task edit %s changes nothing", t.ID)
		}
		for _, d := range t.DependsOn {
			if live, archived, err := tx.HasTask(d); err != nil {
				return leverChange{}, err
			} else if !live && !archived {
				return leverChange{}, contracts.Invalidf("task %s depends on unknown task %s", t.ID, d)
			}
		}
		if t.Status == contracts.Unclaimed {
			if err := taskGates(t); err != nil {
				return leverChange{}, contracts.Invalidf("task %s is UNCLAIMED and would lose a gate: %v", t.ID, err)
			}
			if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{
				Time: tx.NowString(), Event: "task_edited", Task: t.ID, Agent: contracts.ActorName(tx.Actor),
				Reason: "changed " + strings.Join(sortedKeys(changes), ", "),
			}); err != nil {
				return leverChange{}, err
			}
		}
		names := sortedKeys(changes)
		ev := leverChange{To: t.Status, Reason: "changed " + strings.Join(names, ", "), Verb: "edited: " + strings.Join(names, ", ")}
		ev.Extra = contracts.Extra{"changes": changes}
		return ev, nil
	})
}

func sortedKeys(m contracts.Extra) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
	res, err := s.update(ctx, r.Call, cas.Op{Name: contracts.OpConvert, Apply: func(tx *cas.Tx) (any, error) {
		if err := knownTask(tx, r.Task); err != nil {
			return nil, err
		}
		id, err := convert(tx, r.Discovery, r.Task)
		if err != nil {
			return nil, err
		}
		tx.Describe(fmt.Sprintf("convert %s to %s%s", id, r.Task, by(tx.Actor)), r.Task)
		return ConvertResult{Discovery: id, Task: r.Task}, nil
	}})
	if err != nil {
		return nil, err
	}
	out, err := decode[ConvertResult](res)
	if err != nil {
		return nil, err
	}
	out.Written = written(res)
	return &out, nil
}

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
