package ops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// ClaimRequest asks for a coder's claim.
type ClaimRequest struct {
	Call
	// Task is the task to claim; empty for the best claimable one.
	Task string
	// NoWorktree records the claim only: the agent works in its own
	// checkout.
	NoWorktree bool
}

// ClaimKind says how a claim takes its task.
type ClaimKind string

// The kinds of claim.
const (
	ClaimFresh    ClaimKind = "claimed"    // UNCLAIMED
	ClaimOwn      ClaimKind = "resumed"    // the same coder takes back its REJECTED or INTEGRATION_FAILED task
	ClaimTakeover ClaimKind = "taken_over" // another coder takes a REJECTED or INTEGRATION_FAILED task whose lease ended
	ClaimExpired  ClaimKind = "reclaimed"  // a CLAIMED task whose lease ran out
	// ClaimExhausted is a takeover that would give a task a third coder:
	// the claim blocks the task for the planner instead (hypothesis
	// exhaustion) and takes nothing.
	ClaimExhausted ClaimKind = "exhausted"
)

// ClaimResult is what a claim did.
type ClaimResult struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	AssignedTo   string `json:"assigned_to"`
	Kind         string `json:"kind"`
	Worktree     string `json:"worktree"`
	Branch       string `json:"branch,omitempty"`
	BaseCommit   string `json:"base_commit"`
	LeaseExpires string `json:"lease_expires"`
	Iteration    int    `json:"iteration"`
	// Reason says why a claim of kind exhausted took nothing.
	Reason   string `json:"reason,omitempty"`
	Pick     string `json:"pick,omitempty"` // why not the first in claim order (claim_paths.go)
	Commit   string `json:"commit,omitempty"`
	Replayed bool   `json:"replayed,omitempty"`
}

// errPickAgain means the task chosen for a claim without ID stopped being
// claimable before the claim committed; the next best one is tried.
var errPickAgain = errors.New("pick again")

// claimInput is what a claim records: what it was asked, the task it took,
// the commit the task's branch starts from and where the coder works.
type claimInput struct {
	Asked    claimAsked `json:"asked"`
	Task     string     `json:"task"`
	Base     string     `json:"base"`
	Worktree string     `json:"worktree"`
	Branch   string     `json:"branch,omitempty"`
	// Setup is what the setup step of the claim's new worktree did, when
	// one ran: it rides in the claim's commit, which follows it, as a
	// worktree_setup event before the claim's own.
	Setup *setupRecord `json:"setup,omitempty"`
}

// setupRecord is a setup step's time and outcome, as a claim records it.
type setupRecord struct {
	Seconds float64 `json:"seconds"`
	Outcome string  `json:"outcome"`
}

type claimAsked struct {
	Task       string `json:"task,omitempty"`
	NoWorktree bool   `json:"no_worktree,omitempty"`
}

var kindClaim = def("claim", contracts.OpClaim, applyClaim)

func init() { withFacts(kindClaim, claimFacts) }

// Claim runs the seed's three-phase claim: check against the current state,
// make the worktree outside the compare-and-swap, then commit the claim
// after checking again. A claim that does not commit removes the worktree
// it made, so no task is CLAIMED without its worktree and no worktree is
// left behind by a failed claim; one whose push was stopped before the
// remote answered, and so may have landed, leaves it locked for the next
// claim's recovery to keep or remove by what the board says (marked
// stopped, worktree.Abandon, so that a process that lives on does not hold
// it).
func (s *Service) Claim(ctx context.Context, r ClaimRequest) (*ClaimResult, error) {
	ctx = cas.WithViews(ctx) // its views read the tip it just fetched or pushed
	if r.Task != "" {
		if err := contracts.ValidTaskID(r.Task); err != nil {
			return nil, err
		}
	}
	if err := contracts.Permit(s.Agent, contracts.OpClaim); err != nil {
		return nil, err
	}
	if !r.NoWorktree {
		// A claim killed before here left its worktree locked, or half
		// made; a committed claim's is unlocked, the others go.
		if err := s.recoverWhenFree(ctx); err != nil {
			return nil, err
		}
	}
	asked := claimAsked{Task: r.Task, NoWorktree: r.NoWorktree}
	if res, done, err := s.requested(ctx, r.Call, kindClaim, claimInput{Asked: asked}); err != nil || done {
		if err != nil {
			return nil, err
		}
		return claimed(res, r.Task, r.RequestID)
	}
	if err := s.checkSwitchFiles("claims"); err != nil {
		return nil, err
	}
	if r.NoWorktree && s.remote() == "" {
		return s.claimHere(ctx, r, asked)
	}
	skip := map[string]bool{}
	for {
		plan, err := s.planClaim(ctx, r.Task, skip)
		if err != nil {
			return nil, err
		}
		// An exhausted task gets no worktree: the claim only records the
		// exhaustion.
		var created *madeWorktree
		if !r.NoWorktree && plan.kind != ClaimExhausted {
			created, err = s.prepareWorktree(ctx, plan)
			if errors.Is(err, worktree.ErrBusy) {
				if r.Task != "" {
					return nil, contracts.Errorf(contracts.CodeContention, "task %s is being claimed by another process here; try again", plan.id)
				}
				skip[plan.id] = true
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		proc.CrashPoint("claim:worktree")
		in := claimInput{Asked: asked, Task: plan.id, Base: plan.base.String(), Worktree: worktree.Rel(plan.id), Branch: worktree.Branch(plan.id)}
		if created != nil && created.setup != nil {
			in.Setup = &setupRecord{Seconds: created.setup.Seconds(), Outcome: created.setup.Outcome}
		}
		if r.NoWorktree {
			in.Worktree, in.Branch = s.ownCheckout(), ""
		}
		res, err := s.write(ctx, r.Call, kindClaim, in, func(tx *cas.Tx) error {
			t, err := tx.MustTask(plan.id)
			if err != nil {
				return err
			}
			if r.Task != "" && r.NoWorktree {
				// Neither case below can hold: the claim's own check,
				// which follows, decides alone.
				return nil
			}
			kind, err := checkClaim(tx, t.Summary(), tx.Actor)
			switch {
			case err != nil && r.Task == "":
				// A claim of the best task takes another one when this
				// one stopped being claimable meanwhile.
				return errPickAgain
			case err == nil && !r.NoWorktree && (kind == ClaimExhausted) != (plan.kind == ClaimExhausted):
				// The board changed between planning and committing in a
				// way that changes whether a worktree is needed.
				return contracts.Errorf(contracts.CodeContention, "task %s changed while it was being claimed; try again", t.ID)
			}
			return nil
		})
		if created != nil {
			if refstore.MayHaveLanded(err) {
				// The claim may count on the remote: its worktree stays,
				// locked, as a claim killed after its push leaves it, and
				// the next claim's recovery keeps it or removes it by
				// what the board says, even where this process lives on
				// (a supervisor): the lock says it stopped.
				_ = worktree.Abandon(context.WithoutCancel(ctx), s.Repo, plan.id)
				return nil, err
			}
			if err != nil {
				_ = worktree.Undo(ctx, s.Repo, plan.id, created.branch)
			} else {
				proc.CrashPoint("claim:committed")
				if uerr := worktree.Unlock(ctx, s.Repo, plan.id); uerr != nil {
					return nil, uerr
				}
			}
		}
		if errors.Is(err, errPickAgain) {
			skip[plan.id] = true
			continue
		}
		if err != nil {
			return nil, err
		}
		if out, again, err := claimReport(res, r, plan, skip); !again {
			return out, err
		}
	}
}

// claimReport reads the result of a committed claim: again when it found
// its task's hypothesis exhausted and the next best is to be taken (the
// task is then in skip), else the result, with why plan picked the task.
func claimReport(res *cas.Result, r ClaimRequest, plan *claimPlan, skip map[string]bool) (*ClaimResult, bool, error) {
	out, err := claimed(res, r.Task, r.RequestID)
	if errors.Is(err, errPickAgain) {
		skip[out.ID] = true
		return nil, true, nil
	}
	if out != nil && plan != nil && out.ID == plan.id {
		out.Pick = plan.pick
	}
	return out, false, err
}

// claimed reads a claim's result. A claim that found its task's hypothesis
// exhausted recorded that and took nothing: a claim of that task by id is
// refused (exit 1), one without id goes on to the next task
// (errPickAgain), unless it has a request id, which the exhaustion used:
// it is refused too, and claiming again with a new id takes the next task.
func claimed(res *cas.Result, asked, request string) (*ClaimResult, error) {
	out, err := decode[ClaimResult](res)
	if err != nil {
		return nil, err
	}
	out.Commit, out.Replayed = res.Commit.String(), res.Replayed
	if out.Kind == string(ClaimExhausted) {
		if asked == "" && request == "" {
			return &out, errPickAgain
		}
		return &out, contracts.Invalidf("task %s: hypothesis exhausted (%s); it is BLOCKED for the planner to rescope or reassign", out.ID, out.Reason)
	}
	return &out, nil
}

type claimPlan struct {
	id   string
	kind ClaimKind
	base refstore.Hash // where a new task branch starts
	// integ is the integration tip when the claim was planned: the commit
	// whose .worktreeinclude a new worktree follows.
	integ refstore.Hash
	pick  string // why a claim of the best task preferred this one
}

// planClaim is phase one: choose and check the task against the tip
// without writing anything.
func (s *Service) planClaim(ctx context.Context, id string, skip map[string]bool) (*claimPlan, error) {
	var plan *claimPlan
	err := s.view(ctx, func(tx *cas.Tx) error {
		var err error
		plan, err = s.plan(ctx, tx, id, skip)
		return err
	})
	return plan, err
}

// plan chooses the task (id, or the best one not in skip), checks that the
// agent may claim it, and says from which commit its branch starts.
func (s *Service) plan(ctx context.Context, tx *cas.Tx, id string, skip map[string]bool) (*claimPlan, error) {
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	if err := checkHalted(m.Control, "claims"); err != nil {
		return nil, err
	}
	if err := checkGoalOpen(tx, "claims"); err != nil {
		return nil, err
	}
	integ, err := s.integrationTip(ctx, m.Config.IntegrationBranch)
	if err != nil {
		return nil, err
	}
	if err := s.checkClaimBase(tx, integ); err != nil {
		return nil, err
	}
	var pick string
	if id == "" {
		best, why, err := bestClaim(tx, s.Agent, skip)
		if err != nil {
			return nil, err
		}
		if best == "" && why != nil {
			return nil, contracts.Invalidf("no claimable task for %s: %v", s.Agent, why)
		}
		if best == "" {
			return nil, contracts.Invalidf("no claimable task for %s", s.Agent)
		}
		if id, pick, err = s.preferClear(ctx, tx, best, skip); err != nil {
			return nil, err
		}
	}
	t, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	kind, err := checkClaim(tx, t.Summary(), s.Agent)
	if err != nil {
		return nil, err
	}
	plan := &claimPlan{id: id, kind: kind, base: integ, integ: integ, pick: pick}
	if kind == ClaimExhausted {
		return plan, nil
	}
	// Work already on the task's branch keeps the base it started from;
	// an integration fix starts over from the integration tip, into
	// which the coder merges its branch (brought from the remote, on a
	// machine without it).
	if t.BaseCommit != "" {
		tip, hasBranch, err := s.taskBranch(ctx, t)
		if err != nil {
			return nil, err
		}
		if t.Status == contracts.IntegrationFailed {
			return plan, nil
		}
		if kind != ClaimFresh || hasBranch {
			plan.base, _ = refstore.ParseHash(t.BaseCommit)
		}
		if hasBranch {
			if plan.base, err = s.branchBase(ctx, plan.base, tip, integ); err != nil {
				return nil, err
			}
		}
	}
	return plan, nil
}

// applyClaim is phase three, run inside the compare-and-swap (and where a
// claim is verified): check again and record the claim.
func applyClaim(tx *cas.Tx, in *claimInput) (any, error) {
	agent := tx.Actor
	if _, ok := refstore.ParseHash(in.Base); !ok {
		return nil, contracts.Invalidf("a claim needs the commit its branch starts from")
	}
	_, lease, err := tx.Lease()
	if err != nil {
		return nil, err
	}
	t, err := tx.MustTask(in.Task)
	if err != nil {
		return nil, err
	}
	if tx.Rules >= contracts.RulesWhole {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		if err := checkHalted(m.Control, "claims"); err != nil {
			return nil, err
		}
	}
	if err := checkGoalOpen(tx, "claims"); err != nil {
		return nil, err
	}
	kind, err := checkClaim(tx, t.Summary(), agent)
	if err != nil {
		return nil, err
	}
	now := tx.NowString()
	from := t.Status
	prev := t.AssignedTo
	switch kind {
	case ClaimExhausted:
		return exhaust(tx, t, prev)
	case ClaimTakeover, ClaimExpired:
		t.PreviousAssignee = prev
		if !t.FailedBy.Contains(prev) && prev != "" && !parkedBy(tx, t, prev) {
			t.FailedBy = append(t.FailedBy, prev)
		}
		if kind == ClaimTakeover {
			t.ReviewCyclesCurrent = 0
		}
		// The coder displaced no longer works on the task.
		if tx.Rules >= contracts.RulesWhole {
			if err := idleAgent(tx, prev, t.ID); err != nil {
				return nil, err
			}
		}
	}
	if from == contracts.IntegrationFailed {
		t.IntegrationFix = true
	}
	t.Status = contracts.Claimed
	t.AssignedTo = agent
	t.LeaseExpires = lease
	t.Iteration++
	t.BaseCommit = in.Base
	t.Worktree = in.Worktree
	if in.Setup != nil {
		// Only a setup that worked is ever recorded (a failed one stops
		// the claim), and it took a day at most (the config's bound).
		if in.Setup.Outcome != worktree.SetupOK || in.Setup.Seconds < 0 || in.Setup.Seconds > contracts.MaxSetupTimeout+60 {
			return nil, contracts.Invalidf("a claim records a setup step that worked, in at most %d seconds", contracts.MaxSetupTimeout)
		}
		t.History = append(t.History, &contracts.HistoryEvent{Time: now, Event: SetupEventTag, Agent: agent,
			Extra: contracts.Extra{"outcome": in.Setup.Outcome, "seconds": in.Setup.Seconds}})
	}
	ev := &contracts.HistoryEvent{Time: now, Event: string(kind), Agent: agent, From: string(from), To: string(contracts.Claimed)}
	if prev != "" && prev != agent {
		ev.Reason = "previous assignee " + prev
	}
	t.History = append(t.History, ev)
	tx.PutTask(t)
	// Seed 000 turns the coder WORKING once the task is claimed and the
	// checkpoint written: until its checkpoint, a coder that holds a task
	// is STARTING on it (seed 004: "STARTING | Initializing").
	status := "WORKING"
	if tx.Rules >= contracts.RulesCheckpointed {
		status = "STARTING"
	}
	if err := setAgent(tx, agent, contracts.RoleCoder, status, t.ID, lease); err != nil {
		return nil, err
	}
	// Under the first rules a takeover by a third coder went ahead with
	// the exhaustion logged; under the whole contract it blocks instead
	// (exhaust).
	if tx.Rules < contracts.RulesWhole && len(t.FailedBy) >= 2 && kind != ClaimFresh && kind != ClaimOwn {
		if err := logSystemAnomaly(tx, "hypothesis_exhaustion", t.ID, contracts.Extra{"failed_by": strings.Join(t.FailedBy, ",")}); err != nil {
			return nil, err
		}
	}
	tx.Describe(fmt.Sprintf("claim %s (%s)", t.ID, agent), t.ID)
	return ClaimResult{ID: t.ID, Status: string(t.Status), AssignedTo: agent, Kind: string(kind), Worktree: t.Worktree,
		Branch: in.Branch, BaseCommit: t.BaseCommit, LeaseExpires: lease, Iteration: t.Iteration}, nil
}

// exhaustionQuestions are what the planner answers for an exhausted task.
var exhaustionQuestions = contracts.StringList{
	"Should the task be rescoped (git liza task supersede, or task edit once unblocked)?",
	"Should it be reassigned to another coder (git liza task unblock)?",
}

// exhaust records the hypothesis exhaustion a takeover found (seed 004:
// "Hypothesis exhaustion | failed_by has >=2 coders | Reassign or
// rescope"): the displaced coder joins failed_by, and instead of going to
// a third coder the task is BLOCKED for the planner, whose unblock
// (reassign), edit or supersede (rescope) decides what comes next. The
// anomaly is the planner's (seed 004: "Two coders failed same task | Log
// as hypothesis_exhaustion").
func exhaust(tx *cas.Tx, t *contracts.Task, prev string) (any, error) {
	from := t.Status
	if prev != "" && !t.FailedBy.Contains(prev) {
		t.FailedBy = append(t.FailedBy, prev)
	}
	if err := idleAgent(tx, prev, t.ID); err != nil {
		return nil, err
	}
	failed := strings.Join(t.FailedBy, ", ")
	reason := fmt.Sprintf("Hypothesis exhaustion: %s failed this task; the planner rescopes or reassigns it", failed)
	if err := contracts.CheckTransition(t.ID, from, contracts.Blocked); err != nil {
		return nil, err
	}
	t.PreviousAssignee, t.AssignedTo = prev, ""
	t.Status, t.BlockedReason, t.BlockedQuestions = contracts.Blocked, reason, exhaustionQuestions
	t.LeaseExpires, t.ReviewingBy, t.ReviewLeaseExpires = "", "", ""
	t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "blocked", Agent: contracts.ActorName(tx.Actor),
		From: string(from), To: string(contracts.Blocked), Reason: reason})
	tx.PutTask(t)
	if err := logSystemAnomaly(tx, "hypothesis_exhaustion", t.ID, contracts.Extra{"failed_by": strings.Join(t.FailedBy, ",")}); err != nil {
		return nil, err
	}
	tx.Describe(fmt.Sprintf("hypothesis exhaustion on %s%s", t.ID, by(tx.Actor)), t.ID)
	return ClaimResult{ID: t.ID, Status: string(t.Status), Kind: string(ClaimExhausted), Reason: failed + " failed it"}, nil
}

// claimFacts checks the commit a claim's branch starts from: it must be on
// the integration branch, or a coder could start from unreviewed work that
// a review of base..commit would never show and a merge would bring in.
func claimFacts(ctx context.Context, v *Verifier, parent *cas.Tx, in *claimInput) error {
	base, _ := refstore.ParseHash(in.Base)
	// On the integration branch as the claim's own parent state records
	// it, not as it is now: a later merge of the claimed branch puts any
	// base on it, and would make a forged claim verify after the fact.
	if m, err := parent.Meta(); err == nil {
		if tip, ok := refstore.ParseHash(m.Config.IntegrationTip); ok {
			if !v.has(base, tip) {
				return v.missing("the claim's base commit " + short(in.Base))
			}
			if on, err := v.Repo.IsAncestor(ctx, base.String(), tip.String()); err != nil {
				return err
			} else if !on {
				return fmt.Errorf("the claim's base commit %s is not on the integration branch", short(in.Base))
			}
			return nil
		}
	}
	return v.onIntegration(ctx, parent, base, "the claim's base commit")
}

// setAgent records an agent's status and current task, creating its entry
// when the agent runs without a supervisor.
func setAgent(tx *cas.Tx, id string, role contracts.Role, status, task, lease string) error {
	a, err := tx.Agent(id)
	if err != nil {
		return err
	}
	if a == nil {
		a = &contracts.Agent{Role: string(role), Started: tx.NowString()}
	}
	a.Status, a.CurrentTask, a.LeaseExpires, a.Heartbeat = status, task, lease, tx.NowString()
	tx.PutAgent(id, a)
	return nil
}

// logSystemAnomaly appends an anomaly git-liza logs on its own account
// (hypothesis exhaustion, review deadlock), once per type and task. It is
// logged by the agent whose operation found it (its id, "human" for the
// operator), as every other anomaly names the agent that logged it and as
// the commit that writes it does: seed 004 gives these types to the
// planner, who acts on them, but here the planner's wake trigger finds
// them already logged. Under rule sets 2 and 3 logged_by was the role
// seed 004 gives the type ("planner"), with details.detected_by naming
// the actor; their commits replay as they were made.
func logSystemAnomaly(tx *cas.Tx, typ, task string, details contracts.Extra) error {
	list, err := tx.Anomalies()
	if err != nil {
		return err
	}
	for _, a := range list {
		if a.Type == typ && a.TaskID == task {
			return nil
		}
	}
	logger := contracts.ActorName(tx.Actor)
	if tx.Rules >= contracts.RulesWhole && tx.Rules < contracts.RulesMetered {
		if roles := contracts.AnomalyTypes[typ].LoggedBy; len(roles) > 0 {
			logger = roles[0].IDPrefix()
		}
		details = maps.Clone(details)
		if details == nil {
			details = contracts.Extra{}
		}
		details["detected_by"] = contracts.ActorName(tx.Actor)
	}
	_, err = tx.Append(cas.ListAnomalies, &contracts.Anomaly{
		ID: fmt.Sprintf("anomaly-%d", len(list)+1), Type: typ, TaskID: task, LoggedBy: logger,
		Timestamp: tx.NowString(), Details: details,
	})
	return err
}

// integrationTip is the commit the integration branch points at (on the
// remote, in remote mode).
func (s *Service) integrationTip(ctx context.Context, branch string) (refstore.Hash, error) {
	tip, ok, err := s.branchTip(ctx, "refs/heads/"+branch)
	if err != nil {
		return refstore.Hash{}, err
	}
	if !ok {
		return refstore.Hash{}, contracts.Invalidf("integration branch %s does not exist", branch)
	}
	return tip, nil
}

// ownCheckout is where an agent that manages its own checkout works,
// relative to the main checkout when it lies inside it.
func (s *Service) ownCheckout() string {
	dir := s.Repo.WorkTree
	if dir == "" {
		return s.Repo.GitDir
	}
	if root := s.Repo.MainWorkTree(); root != "" {
		if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return dir
}
