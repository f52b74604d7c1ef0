package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// HeartbeatResult is what a heartbeat found and did.
type HeartbeatResult struct {
	Held         []string `json:"held"`    // the tasks whose lease the agent holds
	Renewed      bool     `json:"renewed"` // whether anything was written
	LeaseExpires string   `json:"lease_expires"`
	Written      `json:"-"`
}

// Heartbeat extends the caller's task and review leases. Liveness stays in
// the state, where every clone sees it and the compare-and-swap guards it,
// but a lease is renewed only once it is past half its term: at most two
// commits per agent per lease period (one an hour per agent with the
// default 30-minute lease), however often the heartbeat runs.
func (s *Service) Heartbeat(ctx context.Context, call Call) (*HeartbeatResult, error) {
	agent := s.Agent
	res, err := s.update(ctx, call, cas.Op{Name: contracts.OpHeartbeat, Apply: func(tx *cas.Tx) (any, error) {
		term, lease, err := tx.Lease()
		if err != nil {
			return nil, err
		}
		due := func(expires string) bool { return cas.LeaseDue(expires, tx.Now, term) }
		idx, err := tx.Index()
		if err != nil {
			return nil, err
		}
		var held, renewed []string
		for _, sum := range idx {
			coder := sum.AssignedTo == agent && (sum.Status == contracts.Claimed || sum.Status == contracts.ReadyForReview || sum.Status == contracts.Rejected || sum.Status == contracts.IntegrationFailed)
			reviewer := sum.ReviewingBy == agent && sum.Status == contracts.ReadyForReview
			if !coder && !reviewer {
				continue
			}
			held = append(held, sum.ID)
			if !(coder && due(sum.LeaseExpires)) && !(reviewer && due(sum.ReviewLeaseExpires)) {
				continue
			}
			t, err := tx.MustTask(sum.ID)
			if err != nil {
				return nil, err
			}
			if coder {
				t.LeaseExpires = lease
			}
			if reviewer {
				t.ReviewLeaseExpires = lease
			}
			tx.PutTask(t)
			renewed = append(renewed, sum.ID)
		}
		// The agent's lease_expires covers the work it holds, so an agent
		// that holds none keeps none (a supervisor's lease is
		// supervisor_lease).
		if a, err := tx.Agent(agent); err != nil {
			return nil, err
		} else if a != nil {
			working := len(held) > 0 && a.Status != "IDLE"
			change := false
			if working && (len(renewed) > 0 || due(a.LeaseExpires)) {
				a.LeaseExpires, change = lease, true
			} else if !working && a.LeaseExpires != "" && a.Status == "IDLE" {
				a.LeaseExpires, change = "", true
			}
			if a.SupervisorLease != "" && due(a.SupervisorLease) {
				a.SupervisorLease, change = lease, true
			}
			if change {
				a.Heartbeat = tx.NowString()
				tx.PutAgent(agent, a)
				renewed = append(renewed, "")
			}
		}
		if len(renewed) > 0 {
			tx.Describe(fmt.Sprintf("heartbeat (%s)", agent), "")
		}
		return map[string]any{"held": held, "renewed": len(renewed) > 0, "lease_expires": lease}, nil
	}})
	if err != nil {
		return nil, err
	}
	out, err := decode[HeartbeatResult](res)
	if err != nil {
		return nil, err
	}
	out.Written = written(res)
	return &out, nil
}

// CheckpointRequest is a coder's pre-execution checkpoint.
type CheckpointRequest struct {
	Call
	Task       string
	Checkpoint contracts.Checkpoint
}

// Checkpoint records the pre-execution checkpoint in the task's history.
func (s *Service) Checkpoint(ctx context.Context, r CheckpointRequest) (*TaskResult, error) {
	cp := r.Checkpoint
	cp.Intent, cp.Validation = strings.TrimSpace(cp.Intent), strings.TrimSpace(cp.Validation)
	for _, f := range []struct{ flag, val string }{{"--intent", cp.Intent}, {"--validation", cp.Validation}, {"--files", strings.Join(cp.FilesToModify, "")}} {
		if f.val == "" {
			return nil, contracts.Invalidf("a checkpoint needs %s", f.flag)
		}
	}
	return s.coderStep(ctx, r.Call, contracts.OpCheckpoint, r.Task, "checkpoint recorded", func(tx *cas.Tx, t *contracts.Task) error {
		c := cp
		t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "pre_execution_checkpoint", Agent: s.Agent, Checkpoint: &c})
		t.HandoffPending = false
		return nil
	})
}

// HandoffRequest hands a task over at context exhaustion.
type HandoffRequest struct {
	Call
	Task    string
	Summary string // the task's state, in one phrase
	Next    string // what the replacement should do first
}

// Handoff records a handoff: the task stays CLAIMED, with what its next
// session needs.
func (s *Service) Handoff(ctx context.Context, r HandoffRequest) (*TaskResult, error) {
	summary, next := strings.TrimSpace(r.Summary), strings.TrimSpace(r.Next)
	if summary == "" || next == "" {
		return nil, contracts.Invalidf("a handoff needs --summary and --next")
	}
	return s.coderStep(ctx, r.Call, contracts.OpHandoff, r.Task, "handed off", func(tx *cas.Tx, t *contracts.Task) error {
		t.HandoffPending = true
		t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "handoff", Agent: s.Agent, Reason: summary})
		tx.PutHandoff(t.ID, &contracts.Handoff{Agent: s.Agent, Time: tx.NowString(), Summary: summary, NextAction: next})
		return setAgent(tx, s.Agent, contracts.RoleCoder, "HANDOFF", t.ID, t.LeaseExpires)
	})
}

// TaskResult is what an operation on one task reports: the task, its
// status afterwards and a verb for people ("finalized", "blocked").
type TaskResult struct {
	ID     string           `json:"id"`
	Status contracts.Status `json:"status"`
	Verb   string           `json:"verb"`
	Written
}

// coderStep runs a step the assignee of a CLAIMED task takes on it.
func (s *Service) coderStep(ctx context.Context, call Call, op contracts.Op, id, verb string, step func(tx *cas.Tx, t *contracts.Task) error) (*TaskResult, error) {
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	res, err := s.update(ctx, call, cas.Op{Name: op, Apply: func(tx *cas.Tx) (any, error) {
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if err := checkSubmitter(t, s.Agent); err != nil {
			return nil, err
		}
		if err := step(tx, t); err != nil {
			return nil, err
		}
		tx.PutTask(t)
		tx.Describe(fmt.Sprintf("%s %s (%s)", op, id, s.Agent), id)
		return nil, nil
	}})
	if err != nil {
		return nil, err
	}
	return &TaskResult{ID: id, Status: contracts.Claimed, Verb: verb, Written: written(res)}, nil
}

func checkSubmitter(t *contracts.Task, agent string) error {
	if t.Status != contracts.Claimed {
		return contracts.Invalidf("task %s is %s, not CLAIMED", t.ID, t.Status)
	}
	if t.AssignedTo != agent {
		return contracts.Invalidf("task %s is assigned to %s, not %s", t.ID, t.AssignedTo, agent)
	}
	return nil
}
