package ops

import (
	"context"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// StateRev resolves rev, which must name a commit of refs/liza/state's
// history (here, or as last fetched from the remote in remote mode). A
// revision of anything else, a branch of the code for one, is the
// caller's mistake (exit 1), not a broken state.
func (s *Service) StateRev(ctx context.Context, rev string) (refstore.Hash, error) {
	c, err := s.Repo.ResolveCommit(ctx, rev)
	if err != nil {
		return refstore.Hash{}, err
	}
	refs := []string{refstore.StateRef}
	if r := s.Store.Remote; r != "" {
		refs = append(refs, refstore.TrackingRef(r, refstore.StateRef))
	}
	for _, ref := range refs {
		tip, ok, err := s.Repo.ReadRef(ref)
		if err != nil {
			return refstore.Hash{}, err
		}
		if !ok {
			continue
		}
		if in, err := s.Repo.IsAncestor(ctx, c.String(), tip.String()); err != nil {
			return refstore.Hash{}, err
		} else if in {
			return c, nil
		}
	}
	return refstore.Hash{}, contracts.Invalidf("%s is not a state commit of %s", rev, refstore.StateRef)
}
