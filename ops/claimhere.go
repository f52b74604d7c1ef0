package ops

import (
	"context"

	"github.com/liza-dev/git-liza/cas"
)

// claimHere is a claim without a worktree in a repository that keeps the
// board itself: the coder works in a checkout it has, so nothing is made
// outside the compare-and-swap, and the task and the commit its work starts
// from are chosen inside it, on the state the claim applies to
// (writeChosen). The board is read once, not once to plan and again to
// write; and a claim of the best task cannot find its choice taken
// meanwhile. A claim of the best task reads what the branches in flight
// change in its turn, from the cache, and with git for a branch that moved
// since (a few milliseconds, which the preference needs right). In remote
// mode the choice reads the hub's integration branch, a fetch, which is not
// made while the claim holds its turn on the hub: such a claim plans first,
// as one with a worktree does.
func (s *Service) claimHere(ctx context.Context, r ClaimRequest, asked claimAsked) (*ClaimResult, error) {
	skip := map[string]bool{}
	for {
		var plan *claimPlan
		res, err := s.writeChosen(ctx, r.Call, kindClaim, claimInput{Asked: asked}, func(tx *cas.Tx) (any, error) {
			p, err := s.plan(ctx, tx, r.Task, skip)
			if err != nil {
				return nil, err
			}
			plan = p
			return claimInput{Asked: asked, Task: p.id, Base: p.base.String(), Worktree: s.ownCheckout()}, nil
		})
		if err != nil {
			return nil, err
		}
		// A claim that found the best task's hypothesis exhausted
		// recorded that; the next best is taken.
		if out, again, err := claimReport(res, r, plan, skip); !again {
			return out, err
		}
	}
}
