package ops

import (
	"context"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// checkTaskFacts checks again, where a review or a merge has the task's
// commits, what a clone verifying its claim and its submission without
// them took on trust (Verifier.missing: whoever fetches the objects checks
// them): its base is on the integration branch at integ, and the commit
// under review descends from that base. A claim forged on a remote that
// runs no guard, naming a base of the coder's own that no clone had, would
// otherwise show the reviewer BASE..REVIEW, which hides what lies between,
// and the merge would bring that in unreviewed.
func (s *Service) checkTaskFacts(ctx context.Context, t *contracts.Task, integ, review refstore.Hash) error {
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
	return nil
}
