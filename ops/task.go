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
	res, err := s.update(ctx, r.Call, cas.Op{
		Name: contracts.OpAdd,
		Apply: func(tx *cas.Tx) (any, error) {
			live, archived, err := tx.HasTask(t.ID)
			if err != nil {
				return nil, err
			}
			if live || archived {
				return nil, contracts.Invalidf("task %s already exists", t.ID)
			}
			for _, d := range t.DependsOn {
				if live, archived, err := tx.HasTask(d); err != nil {
					return nil, err
				} else if !live && !archived {
					return nil, contracts.Invalidf("task %s depends on unknown task %s", t.ID, d)
				}
			}
			m, err := tx.Meta()
			if err != nil {
				return nil, err
			}
			if t.SpecRef != "" {
				if err := s.checkSpecAt(t.SpecRef, m.Config.IntegrationBranch); err != nil {
					return nil, err
				}
			}
			now := tx.NowString()
			nt := t
			nt.Created = now
			nt.History = []*contracts.HistoryEvent{{Time: now, Event: "created", Agent: contracts.ActorName(tx.Actor)}}
			tx.PutTask(&nt)
			m.Sprint.Scope.Planned = append(m.Sprint.Scope.Planned, t.ID)
			tx.PutMeta(m)
			if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{Time: now, Event: "task_added", Task: t.ID, Agent: contracts.ActorName(tx.Actor)}); err != nil {
				return nil, err
			}
			subject := fmt.Sprintf("add %s%s", t.ID, by(tx.Actor))
			if r.FromDiscovery != 0 {
				disc, err := convert(tx, r.FromDiscovery, t.ID)
				if err != nil {
					return nil, err
				}
				subject = fmt.Sprintf("add %s from %s%s", t.ID, disc, by(tx.Actor))
			}
			tx.Describe(subject, t.ID)
			return map[string]string{"id": t.ID, "status": string(t.Status)}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &TaskResult{ID: t.ID, Status: t.Status, Verb: "added", Written: written(res)}, nil
}

// FinalizeRequest moves a DRAFT task to UNCLAIMED.
type FinalizeRequest struct {
	Call
	Task string
}

// Finalize moves a DRAFT task to UNCLAIMED once it passes every gate of
// seed 004's task definition ("Tasks missing any gate remain DRAFT"): a
// spec reference whose file is in the repository, a done_when, a scope,
// and dependencies that are on the board. The spec file is checked before
// the operation, which reads only the state.
func (s *Service) Finalize(ctx context.Context, r FinalizeRequest) (*TaskResult, error) {
	if err := contracts.ValidTaskID(r.Task); err != nil {
		return nil, err
	}
	var spec string
	if err := s.view(func(tx *cas.Tx) error {
		t, err := tx.MustTask(r.Task)
		if err == nil {
			spec = t.SpecRef
		}
		return err
	}); err != nil {
		return nil, err
	}
	specErr := error(nil)
	if spec != "" {
		specErr = s.checkSpecNow(ctx, spec)
	}
	return s.transition(ctx, r.Call, contracts.OpFinalize, r.Task, contracts.Unclaimed, "finalized", func(tx *cas.Tx, t *contracts.Task) error {
		if t.Status != contracts.Draft {
			return contracts.Invalidf("task %s is %s, not DRAFT", t.ID, t.Status)
		}
		if err := taskGates(t); err != nil {
			return contracts.Invalidf("task %s cannot be finalized: %v", t.ID, err)
		}
		for _, d := range t.DependsOn {
			if live, archived, err := tx.HasTask(d); err != nil {
				return err
			} else if !live && !archived {
				return contracts.Invalidf("task %s cannot be finalized: it depends on unknown task %s", t.ID, d)
			}
		}
		if t.SpecRef != spec {
			return contracts.Errorf(contracts.CodeContention, "task %s changed while it was being finalized; try again", t.ID)
		}
		if specErr != nil && Class(specErr) == contracts.CodeInvalid {
			return contracts.Invalidf("task %s cannot be finalized: %v", t.ID, specErr)
		}
		return specErr
	})
}

// checkSpecNow checks a spec reference against HEAD and the integration
// branch the state names.
func (s *Service) checkSpecNow(ctx context.Context, ref string) error {
	cfg, err := s.Config(ctx)
	if err != nil {
		return err
	}
	return s.checkSpecAt(ref, cfg.IntegrationBranch)
}

// transition runs an operation that moves one task to status `to` after
// check accepted it, recording event in the task's history.
func (s *Service) transition(ctx context.Context, call Call, op contracts.Op, id string, to contracts.Status, event string, check func(tx *cas.Tx, t *contracts.Task) error) (*TaskResult, error) {
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	res, err := s.update(ctx, call, cas.Op{
		Name: op,
		Apply: func(tx *cas.Tx) (any, error) {
			t, err := tx.MustTask(id)
			if err != nil {
				return nil, err
			}
			if err := check(tx, t); err != nil {
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
		},
	})
	if err != nil {
		return nil, err
	}
	return &TaskResult{ID: id, Status: to, Verb: event, Written: written(res)}, nil
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
	path, _, _ := strings.Cut(ref, "#")
	path = strings.TrimPrefix(path, "./")
	if path == "" || strings.HasPrefix(path, "/") || strings.Contains("/"+path+"/", "/../") {
		return contracts.Invalidf("spec reference %q must be a path inside the repository", ref)
	}
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
	return contracts.Invalidf("spec %s is not in HEAD or on the integration branch: commit it first", path)
}
