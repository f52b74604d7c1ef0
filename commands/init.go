package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) initCmd() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create the blackboard for GOAL in refs/liza/state",
		ArgsUsage: "GOAL",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "`PATH` of the goal's vision document"},
			&cli.StringFlag{Name: "integration-branch", Usage: "branch approved work merges into (default: git config liza.integrationBranch, else integration)"},
		},
		Action: e.action(1, 1, "init [--spec PATH] [--integration-branch NAME] GOAL", func(ctx context.Context, s *session, a []string) error {
			return s.initState(ctx, strings.TrimSpace(a[0]), s.cmd.String("spec"), s.cmd.String("integration-branch"))
		}),
	}
}

func (s *session) initState(ctx context.Context, goal, spec, branch string) error {
	if goal == "" {
		return contracts.Invalidf("the goal is empty")
	}
	if branch == "" {
		branch, _ = s.repo.Config("liza.integrationBranch")
	}
	if branch == "" {
		branch = contracts.DefaultConfig().IntegrationBranch
	}
	if err := validBranch(ctx, s.repo, branch); err != nil {
		return err
	}
	_, head, err := s.repo.Head()
	if err != nil {
		return err
	}
	if head.IsZero() {
		return contracts.Invalidf("HEAD has no commit yet: commit something first, so that the integration branch has a start")
	}
	if spec != "" {
		if err := s.checkSpec(spec, head, refstore.Hash{}); err != nil {
			return err
		}
	}
	integ := "refs/heads/" + branch
	res, err := s.update(ctx, cas.Op{
		Name:         contracts.OpInit,
		AllowMissing: true,
		Apply: func(tx *cas.Tx) (any, error) {
			if tx.Snap.Exists() {
				m, err := tx.Meta()
				if err != nil {
					return nil, err
				}
				return nil, contracts.Invalidf("a blackboard already exists (%s: %s)", m.Goal.ID, m.Goal.Description)
			}
			now := tx.NowString()
			cfg := contracts.DefaultConfig()
			cfg.IntegrationBranch = branch
			tx.PutMeta(&cas.Meta{
				Version: 1,
				Goal:    contracts.Goal{ID: "goal-1", Description: goal, SpecRef: spec, Status: "IN_PROGRESS", Created: now},
				Config:  cfg,
				Sprint: contracts.Sprint{
					ID: "sprint-1", GoalRef: "goal-1", Status: "IN_PROGRESS",
					Scope:    contracts.SprintScope{Planned: contracts.StringList{}, Stretch: contracts.StringList{}},
					Timeline: contracts.SprintTimeline{Started: now},
				},
			})
			if _, ok, err := s.branchTip(ctx, integ); err != nil {
				return nil, err
			} else if !ok {
				tx.MoveRef(refstore.RefUpdate{Name: integ, Old: refstore.ZeroID, New: head})
			}
			tx.Describe("init: "+goal, "")
			return map[string]string{"goal": "goal-1", "integration_branch": branch}, nil
		},
	})
	if err != nil {
		return err
	}
	if r := s.remote(); r != "" {
		if err := s.ensureRefspec(ctx, r); err != nil {
			return err
		}
	}
	if s.json {
		return s.printJSON(map[string]any{"goal": "goal-1", "description": goal, "integration_branch": branch, "commit": res.Commit.String()})
	}
	fmt.Fprintf(s.Stdout, "Initialized blackboard in %s: goal-1 %q (integration branch %s)\n", refstore.StateRef, goal, branch)
	return nil
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

// checkSpec requires the file part of a spec reference (before any #anchor)
// to exist in HEAD or on the integration branch.
func (s *session) checkSpec(ref string, head, integration refstore.Hash) error {
	path, _, _ := strings.Cut(ref, "#")
	path = strings.TrimPrefix(path, "./")
	if path == "" || strings.HasPrefix(path, "/") || strings.Contains("/"+path+"/", "/../") {
		return contracts.Invalidf("spec reference %q must be a path inside the repository", ref)
	}
	for _, c := range []refstore.Hash{head, integration} {
		if c.IsZero() {
			continue
		}
		ok, err := s.repo.FileAt(c, path)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return contracts.Invalidf("spec %s is not in HEAD or on the integration branch: commit it first", path)
}
