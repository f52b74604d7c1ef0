package ops

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// InitRequest creates the blackboard.
type InitRequest struct {
	Call
	Goal string
	// Spec is the path of the goal's vision document, if any.
	Spec string
	// IntegrationBranch is where approved work merges; empty for git config
	// liza.integrationBranch, else "integration".
	IntegrationBranch string
}

// InitResult is what init made.
type InitResult struct {
	Goal              string // the goal's id
	Description       string
	IntegrationBranch string
	Written
}

// Init creates the blackboard in refs/liza/state, and the integration
// branch at HEAD when it does not exist.
func (s *Service) Init(ctx context.Context, r InitRequest) (*InitResult, error) {
	goal, spec, branch := strings.TrimSpace(r.Goal), r.Spec, r.IntegrationBranch
	if goal == "" {
		return nil, contracts.Invalidf("the goal is empty")
	}
	if branch == "" {
		branch, _ = s.Repo.Config("liza.integrationBranch")
	}
	if branch == "" {
		branch = contracts.DefaultConfig().IntegrationBranch
	}
	if err := validBranch(ctx, s.Repo, branch); err != nil {
		return nil, err
	}
	_, head, err := s.Repo.Head()
	if err != nil {
		return nil, err
	}
	if head.IsZero() {
		return nil, contracts.Invalidf("HEAD has no commit yet: commit something first, so that the integration branch has a start")
	}
	if spec != "" {
		if err := s.checkSpec(spec, head, refstore.Hash{}); err != nil {
			return nil, err
		}
	}
	if s.remote() == "" {
		if err := s.checkNoRemoteBoard(ctx); err != nil {
			return nil, err
		}
	}
	in := initInput{Goal: goal, Spec: spec, Branch: branch}
	if tip, ok, err := s.branchTip(ctx, "refs/heads/"+branch); err != nil {
		return nil, err
	} else if !ok {
		in.Head = head.String()
	} else if s.rules == 0 || s.rules >= contracts.RulesIntegration {
		in.Tip = tip.String()
	}
	res, err := s.update(ctx, r.Call, cas.Op{Name: contracts.OpInit, AllowMissing: true, Kind: kindInit.name, Input: mustJSON(in),
		Apply: func(tx *cas.Tx) (any, error) { return applyInit(tx, &in) }})
	if err != nil {
		return nil, err
	}
	if r := s.remote(); r != "" {
		if err := s.EnsureRefspec(ctx, r); err != nil {
			return nil, err
		}
	}
	return &InitResult{Goal: "goal-1", Description: goal, IntegrationBranch: branch, Written: written(res)}, nil
}

// initInput is what init records: the goal, and the commit the
// integration branch is created at when it does not exist yet (Head), or
// where it was when it did (Tip, from rule set 3): the board's first
// recorded integration tip.
type initInput struct {
	Goal   string `json:"goal"`
	Spec   string `json:"spec,omitempty"`
	Branch string `json:"integration_branch"`
	Head   string `json:"head,omitempty"`
	Tip    string `json:"tip,omitempty"`
}

var kindInit = def("init", contracts.OpInit, applyInit)

func applyInit(tx *cas.Tx, in *initInput) (any, error) {
	if tx.Snap.Exists() {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		return nil, contracts.Invalidf("a blackboard already exists (%s: %s)", m.Goal.ID, m.Goal.Description)
	}
	now := tx.NowString()
	cfg := contracts.DefaultConfig()
	cfg.IntegrationBranch = in.Branch
	if tx.Rules >= contracts.RulesIntegration {
		start := in.Tip
		if in.Head != "" {
			start = in.Head
		}
		if _, ok := refstore.ParseHash(start); !ok {
			return nil, contracts.Invalidf("init: the integration branch's starting commit %q is not a commit id", start)
		}
		cfg.IntegrationTip = start
	}
	tx.PutMeta(&cas.Meta{
		Version: 1,
		Goal:    contracts.Goal{ID: "goal-1", Description: in.Goal, SpecRef: in.Spec, Status: "IN_PROGRESS", Created: now},
		Config:  cfg,
		Sprint: contracts.Sprint{
			ID: "sprint-1", GoalRef: "goal-1", Status: "IN_PROGRESS",
			Scope:    contracts.SprintScope{Planned: contracts.StringList{}, Stretch: contracts.StringList{}},
			Timeline: contracts.SprintTimeline{Started: now},
		},
	})
	if in.Head != "" {
		head, ok := refstore.ParseHash(in.Head)
		if !ok {
			return nil, contracts.Invalidf("init: %q is not a commit id", in.Head)
		}
		tx.MoveRef(refstore.RefUpdate{Name: "refs/heads/" + in.Branch, Old: refstore.ZeroID, New: head})
	}
	tx.Describe("init: "+in.Goal, "")
	return map[string]string{"goal": "goal-1", "integration_branch": in.Branch}, nil
}

// mustJSON is v as JSON; v is a plain input struct, which always encodes.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// validBranch checks a branch name the way git does.
func validBranch(ctx context.Context, repo *refstore.Repo, name string) error {
	if name == "" || strings.HasPrefix(name, "-") {
		return contracts.Invalidf("invalid branch name %q", name)
	}
	if _, err := repo.Git(ctx, "check-ref-format", "refs/heads/"+name); err != nil {
		return contracts.Invalidf("invalid branch name %q", name)
	}
	return nil
}
