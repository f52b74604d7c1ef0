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
// commits per agent per lease period (one every 3 minutes per agent with
// the default 5-minute lease and the supervisor's 60-second heartbeat),
// however often the heartbeat runs.
func (s *Service) Heartbeat(ctx context.Context, call Call) (*HeartbeatResult, error) {
	return writeAs[HeartbeatResult](ctx, s, call, kindHeartbeat, struct{}{}, nil)
}

var kindHeartbeat = def("heartbeat", contracts.OpHeartbeat, func(tx *cas.Tx, _ *struct{}) (any, error) {
	agent := tx.Actor
	term, lease, err := tx.Lease()
	if err != nil {
		return nil, err
	}
	due := func(expires string) bool { return cas.LeaseDue(expires, tx.Now, term) }
	// What a heartbeat renews is in flight: the claim index holds it.
	idx, err := tx.InFlight()
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
	if a, err := tx.Agent(agent); err != nil {
		return nil, err
	} else if a != nil && tx.Rules < contracts.RulesWhole {
		if len(renewed) > 0 || due(a.LeaseExpires) || a.SupervisorLease != "" && due(a.SupervisorLease) {
			a.Heartbeat, a.LeaseExpires = tx.NowString(), lease
			if a.SupervisorLease != "" {
				a.SupervisorLease = lease
			}
			tx.PutAgent(agent, a)
			renewed = append(renewed, "")
		}
	} else if a != nil {
		// The agent's lease_expires covers the work it holds, so an agent
		// that holds none keeps none (a supervisor's lease is
		// supervisor_lease); an entry an older git-liza left is put right.
		change, err := settleAgent(tx, agent, a)
		if err != nil {
			return nil, err
		}
		working := len(held) > 0 && a.Status != "IDLE"
		if working && (len(renewed) > 0 || due(a.LeaseExpires)) {
			a.LeaseExpires, change = lease, true
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
})

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
	if cp.Assumptions == nil {
		// Recorded as the command line records it (an empty list), so
		// that every front end makes the same operation of the same
		// checkpoint.
		cp.Assumptions = contracts.StringList{}
	}
	return s.coderStep(ctx, r.Call, kindCheckpoint, checkpointInput{Task: r.Task, Checkpoint: cp}, r.Task, "checkpoint recorded")
}

type checkpointInput struct {
	Task       string               `json:"task"`
	Checkpoint contracts.Checkpoint `json:"checkpoint"`
}

var kindCheckpoint = def("checkpoint", contracts.OpCheckpoint, func(tx *cas.Tx, in *checkpointInput) (any, error) {
	return coderStep(tx, contracts.OpCheckpoint, in.Task, func(t *contracts.Task) error {
		cp := in.Checkpoint
		t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "pre_execution_checkpoint", Agent: tx.Actor, Checkpoint: &cp})
		t.HandoffPending = false
		if tx.Rules >= contracts.RulesCheckpointed {
			return setAgent(tx, tx.Actor, contracts.RoleCoder, "WORKING", t.ID, t.LeaseExpires)
		}
		return nil
	})
})

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
	return s.coderStep(ctx, r.Call, kindHandoff, handoffInput{Task: r.Task, Summary: summary, Next: next}, r.Task, "handed off")
}

type handoffInput struct {
	Task    string `json:"task"`
	Summary string `json:"summary"`
	Next    string `json:"next"`
}

var kindHandoff = def("handoff", contracts.OpHandoff, func(tx *cas.Tx, in *handoffInput) (any, error) {
	return coderStep(tx, contracts.OpHandoff, in.Task, func(t *contracts.Task) error {
		t.HandoffPending = true
		t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "handoff", Agent: tx.Actor, Reason: in.Summary})
		tx.PutHandoff(t.ID, &contracts.Handoff{Agent: tx.Actor, Time: tx.NowString(), Summary: in.Summary, NextAction: in.Next})
		return setAgent(tx, tx.Actor, contracts.RoleCoder, "HANDOFF", t.ID, t.LeaseExpires)
	})
})

// TaskResult is what an operation on one task reports: the task, its
// status afterwards and a verb for people ("finalized", "blocked").
type TaskResult struct {
	ID     string           `json:"id"`
	Status contracts.Status `json:"status"`
	Verb   string           `json:"verb"`
	Written
}

// coderStep writes a step the assignee of a CLAIMED task takes on it.
func (s *Service) coderStep(ctx context.Context, call Call, k *kind, in any, id, verb string) (*TaskResult, error) {
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	res, err := s.write(ctx, call, k, in, nil)
	if err != nil {
		return nil, err
	}
	return &TaskResult{ID: id, Status: contracts.Claimed, Verb: verb, Written: written(res)}, nil
}

// coderStep is the effect of such a step: step changes the task, which must
// be CLAIMED by the actor.
func coderStep(tx *cas.Tx, op contracts.Op, id string, step func(t *contracts.Task) error) (any, error) {
	t, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	if err := checkSubmitter(t, tx.Actor); err != nil {
		return nil, err
	}
	if err := step(t); err != nil {
		return nil, err
	}
	tx.PutTask(t)
	tx.Describe(fmt.Sprintf("%s %s (%s)", op, id, tx.Actor), id)
	return nil, nil
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

// RenewRequest renews the lease of the coder of a task that just received
// a commit in its worktree (the post-commit hook).
type RenewRequest struct {
	Call
	Task string
}

// Renew extends the actor's lease on a CLAIMED task it holds, as a
// heartbeat would (only past half its term): a coder that commits is
// alive. Nothing is written when the lease is fresh or the task is not the
// actor's.
func (s *Service) Renew(ctx context.Context, r RenewRequest) (Written, error) {
	if err := contracts.ValidTaskID(r.Task); err != nil {
		return Written{}, err
	}
	res, err := s.write(ctx, r.Call, kindRenew, taskInput{Task: r.Task}, nil)
	if err != nil {
		return Written{}, err
	}
	return written(res), nil
}

var kindRenew = def("renew", contracts.OpHeartbeat, func(tx *cas.Tx, in *taskInput) (any, error) {
	id, agent := in.Task, tx.Actor
	term, lease, err := tx.Lease()
	if err != nil {
		return nil, err
	}
	t, err := tx.Task(id)
	if err != nil || t == nil || t.Status != contracts.Claimed || t.AssignedTo != agent {
		return nil, err
	}
	if !cas.LeaseDue(t.LeaseExpires, tx.Now, term) {
		return nil, nil
	}
	t.LeaseExpires = lease
	tx.PutTask(t)
	if a, err := tx.Agent(agent); err != nil {
		return nil, err
	} else if a != nil && tx.Rules < contracts.RulesWhole {
		a.Heartbeat, a.LeaseExpires = tx.NowString(), lease
		tx.PutAgent(agent, a)
	} else if a != nil {
		// An idle agent's entry keeps no lease; one an older git-liza
		// left is put right.
		if _, err := settleAgent(tx, agent, a); err != nil {
			return nil, err
		}
		a.Heartbeat = tx.NowString()
		if a.Status != "IDLE" {
			a.LeaseExpires = lease
		}
		tx.PutAgent(agent, a)
	}
	tx.Describe(fmt.Sprintf("heartbeat %s (%s) on commit", id, agent), id)
	return nil, nil
})

// settleAgent puts right what an older git-liza left in agent id's entry a
// (contracts.AgentLeftover): an IDLE agent's lease goes, and an agent that
// says it works on or reviews a task it no longer holds is IDLE. It
// reports whether a changed; the caller writes it.
func settleAgent(tx *cas.Tx, id string, a *contracts.Agent) (bool, error) {
	var t *contracts.Task
	if a.CurrentTask != "" {
		var err error
		if t, err = tx.Task(a.CurrentTask); err != nil {
			return false, err
		}
	}
	switch {
	case contracts.HolderProblem(id, a, t) != "":
		a.Status, a.CurrentTask, a.LeaseExpires = "IDLE", "", ""
	case a.Status == "IDLE" && a.LeaseExpires != "":
		a.LeaseExpires = ""
	default:
		return false, nil
	}
	return true, nil
}
