package ops

import (
	"context"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
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
	return s.checkMergeBase(ctx, t.ID, base, integ, review)
}

// checkMergeBase refuses a commit under review whose merge base with the
// integration tip integ is not the task's base. What a merge lands is the
// change from that merge base to the commit; what the reviewer reads, and
// what the paths and the scope limit are checked on, is the change from the
// base. They differ once the task's branch holds work the integration
// branch has and the base lacks (a merge of a later integration tip, or of
// another task's commits that landed since): a branch that merges landed
// work and then takes it out again shows nothing of it from its base, and
// its merge would revert that work unseen, outside the task's paths.
func (s *Service) checkMergeBase(ctx context.Context, id string, base, integ, review refstore.Hash) error {
	if integ.IsZero() || integ == base {
		return nil
	}
	out, err := s.Repo.Git(ctx, "merge-base", "--all", integ.String(), review.String())
	if err != nil {
		return err
	}
	bases := strings.Fields(string(out))
	if len(bases) == 1 && bases[0] == base.String() {
		return nil
	}
	at := base.String()
	for _, b := range bases {
		if b != base.String() {
			at = b
			break
		}
	}
	if at == review.String() {
		return contracts.Invalidf("%s at %s is on the integration branch already, without being merged (another branch took it in): its merge would land nothing of it; ask the planner to look at what the integration branch holds of it",
			worktree.Branch(id), short(review.String()))
	}
	return contracts.Invalidf("%s at %s holds integration work that its base %s lacks (%s, now on the integration branch): its merge would land its change since %s, which its diff from the base does not show; make %s from %s again without it",
		worktree.Branch(id), short(review.String()), short(base.String()), short(at), short(at), worktree.Branch(id), short(base.String()))
}

// reviewFacts is checkTaskFacts for the review just claimed at commit:
// the task as the board holds it (its paths and limits are those of the
// claim), against the integration tip the board records at commit.
func (s *Service) reviewFacts(ctx context.Context, commit refstore.Hash, id string, review refstore.Hash) error {
	var t *contracts.Task
	var rules int
	if err := s.view(ctx, func(tx *cas.Tx) error {
		var err error
		t, err = tx.MustTask(id)
		rules = tx.Rules
		return err
	}); err != nil {
		return err
	}
	return s.checkTaskFacts(ctx, t, rules, s.localIntegration(commit), review)
}
