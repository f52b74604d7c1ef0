package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// prepareNew readies the worktree just made for task (worktree.Prepare):
// of kind worktree.KindTask, at the task's place; of KindReview, at dir.
// source is the integration tip whose .worktreeinclude counts; agent is
// who works in it. What was copied and refused goes to log.
func (s *Service) prepareNew(ctx context.Context, kind, task string, source refstore.Hash, agent string, log func(string)) (*worktree.Prepared, error) {
	var dir string
	switch kind {
	case worktree.KindTask:
		p, err := worktree.Path(s.Repo, task)
		if err != nil {
			return nil, err
		}
		dir = p
	case worktree.KindReview:
		dir = worktree.ReviewPath(s.Repo, agent, task)
	default:
		return nil, fmt.Errorf("prepare a worktree of kind %q", kind)
	}
	role, _ := contracts.ParseAgentID(agent)
	bounds, err := s.timeouts(ctx)
	if err != nil {
		return nil, err
	}
	return worktree.Prepare(ctx, s.Repo, worktree.Prep{Dir: dir, Kind: kind, Task: task, Role: role, Source: source, Log: log, SetupTimeout: bounds.setup})
}

// SetupEventTag is the history event of a claim's setup step.
const SetupEventTag = "worktree_setup"

// timeouts are the config's bounds on a new worktree's setup step and on
// a run of the integration test.
type timeouts struct{ setup, test time.Duration }

func (s *Service) timeouts(ctx context.Context) (timeouts, error) {
	var t timeouts
	err := s.view(context.WithoutCancel(ctx), func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		t = timeouts{m.Config.SetupTimeout(), m.Config.TestTimeout()}
		return nil
	})
	return t, err
}

// includeSource is the integration branch's tip: the commit whose
// .worktreeinclude a new review checkout follows. The board's record of
// it is taken when its commit is here (no fetch in remote mode), else the
// branch itself.
func (s *Service) includeSource(ctx context.Context) (refstore.Hash, error) {
	var branch string
	var want refstore.Hash
	var known bool
	if err := s.view(ctx, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		branch = m.Config.IntegrationBranch
		want, known, err = s.expectedTip(tx)
		return err
	}); err != nil {
		return refstore.Hash{}, err
	}
	if known && s.Repo.HasObject(want) {
		return want, nil
	}
	return s.integrationTip(ctx, branch)
}
