package ops

import (
	"context"
	"encoding/json"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/refstore"
)

// ClaimTrustingOwnClock commits a claim of task id by s's agent, without a
// worktree, from base, as a git-liza that judged leases at its own clock
// makes it (an older one, or one an agent patched): what a lease thief
// with a fast clock pushes.
func (s *Service) ClaimTrustingOwnClock(ctx context.Context, id string, base refstore.Hash) (refstore.Hash, error) {
	raw, err := json.Marshal(claimInput{Asked: claimAsked{Task: id, NoWorktree: true}, Task: id, Base: base.String(), Worktree: s.ownCheckout()})
	if err != nil {
		return refstore.Hash{}, err
	}
	op := s.recorded(kindClaim, raw, nil)
	apply := op.Apply
	op.Apply = func(tx *cas.Tx) (any, error) {
		tx.Takeover = tx.Now
		return apply(tx)
	}
	res, err := s.update(ctx, Call{}, op)
	if err != nil {
		return refstore.Hash{}, err
	}
	return res.Commit, nil
}
