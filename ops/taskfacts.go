package ops

import (
	"context"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// checkTaskFacts checks again, where a review or a merge has the task's
// commits, what a clone verifying its claim and its submission without
// them took on trust (Verifier.missing: whoever fetches the objects checks
// them): its base is on the integration branch at integ, the commit under
// review descends from that base, and its change keeps to the task's paths
// and scope limit (judged by the board's rule set, rules, as submit judged
// it: a task's paths and limits are not edited once it is claimed). A claim
// forged on a remote that runs no guard, naming a base of the coder's own
// that no clone had, would otherwise show the reviewer BASE..REVIEW, which
// hides what lies between, and the merge would bring that in unreviewed;
// a submission forged there would land a change outside the task's paths.
func (s *Service) checkTaskFacts(ctx context.Context, t *contracts.Task, rules int, integ, review refstore.Hash) error {
	base, ok := refstore.ParseHash(t.BaseCommit)
	if !ok || integ.IsZero() {
		return nil
	}
	on, err := s.Repo.IsAncestor(ctx, base.String(), integ.String())
	if err != nil {
		return err
	}
	if !on {
		return contracts.Errorf(contracts.CodeInconsistent, "task %s starts from %s, which is not on the integration branch: its diff would hide what lies between (a claim forged where its base was not fetched); nothing builds on it", t.ID, short(t.BaseCommit))
	}
	if review.IsZero() {
		return nil
	}
	if on, err = s.Repo.IsAncestor(ctx, base.String(), review.String()); err != nil {
		return err
	}
	if !on {
		return contracts.Errorf(contracts.CodeInconsistent, "task %s's commit under review %s does not descend from its base %s (a submission forged where it was not fetched); nothing builds on it", t.ID, short(review.String()), short(t.BaseCommit))
	}
	changes, err := s.Repo.DiffFiles(ctx, base, review)
	if err != nil {
		return err
	}
	if err := checkScope(t, changes, rules); err != nil {
		return contracts.Errorf(contracts.CodeInconsistent, "task %s's commit under review %s is out of its scope: %v (a submission forged where it was not fetched); nothing builds on it", t.ID, short(review.String()), err)
	}
	return nil
}

// reviewFacts is checkTaskFacts for the review just claimed at commit:
// the task as the board holds it (its paths and limits are those of the
// claim), against the integration tip the board records at commit.
func (s *Service) reviewFacts(ctx context.Context, commit refstore.Hash, id string, review refstore.Hash) error {
	var t *contracts.Task
	var rules int
	if err := s.view(func(tx *cas.Tx) error {
		var err error
		t, err = tx.MustTask(id)
		rules = tx.Rules
		return err
	}); err != nil {
		return err
	}
	return s.checkTaskFacts(ctx, t, rules, s.localIntegration(commit), review)
}
