package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// verifyTip is the store's Verify hook: before anything builds on a tip
// this clone did not write (fetched from a remote that runs no guard,
// moved by hand), every commit from the newest one known good up to it is
// verified, once: each one verified is remembered. A commit that fails
// stops the operation (exit 4), naming it and what it changed.
func (s *Service) verifyTip(ctx context.Context, tip refstore.Hash) error {
	v := s.Verifier()
	v.Integration = s.localIntegration(tip)
	_, err := v.Chain(ctx, tip, s.Store.KnownGood, s.Store.MarkGood, nil)
	return err
}

// localIntegration is where the integration branch the state at tip names
// is here: the remote's, as last fetched, in remote mode.
func (s *Service) localIntegration(tip refstore.Hash) refstore.Hash {
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil || !snap.Exists() {
		return refstore.Hash{}
	}
	var m cas.Meta
	b, ok, err := snap.ReadFile(cas.MetaFile)
	if err != nil || !ok || contracts.DecodeYAML(b, &m) != nil {
		return refstore.Hash{}
	}
	if h, ok := s.recordedIntegration(&m); ok {
		return h
	}
	ref := "refs/heads/" + m.Config.IntegrationBranch
	if m.Config.IntegrationBranch == "" {
		ref = "refs/heads/" + contracts.DefaultConfig().IntegrationBranch
	}
	if r := s.Store.Remote; r != "" {
		if h, ok, _ := s.Repo.ReadRef(refstore.TrackingRef(r, ref)); ok {
			return h
		}
	}
	h, _, _ := s.Repo.ReadRef(ref)
	return h
}

// Chain verifies the commits of a state history up to tip, oldest first:
// those after the newest one known reports good, or all of them. good, when
// set, is told of each commit verified. With report set, a failure is
// reported there and the walk goes on (validate --history); else the first
// failure is returned as an error of class CodeInconsistent. It returns the
// number of commits checked. A shallow clone's history stops at its
// shallow boundary, whose state is checked whole instead.
//
// Commits made before git-liza recorded operations (no Liza-Kind) are
// checked the old way, by the validity of their state and of its
// transitions, but only as long as no commit before them recorded one: a
// board that has moved to recorded operations takes no more unrecorded
// ones.
func (v *Verifier) Chain(ctx context.Context, tip refstore.Hash, known func(refstore.Hash) bool, good func(refstore.Hash), report func(c *refstore.Commit, err error)) (int, error) {
	var todo []*refstore.Commit
	var base refstore.Hash
	shallow := v.shallow()
	for id := tip; !id.IsZero(); {
		if known != nil && known(id) {
			base = id
			break
		}
		c, err := cas.ReadStateCommit(v.Repo, id)
		if errors.As(err, new(*contracts.Error)) {
			return 0, err // over its cap
		}
		if err != nil {
			return 0, contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: reading state commit %s: %v", short(id.String()), err)
		}
		todo = append(todo, c)
		if len(c.Parents) == 0 || shallow[c.ID] {
			break
		}
		id = c.Parents[0]
	}
	legacy := v.legacyAllowed(base)
	for i := len(todo) - 1; i >= 0; i-- {
		c := todo[i]
		var err error
		switch recorded := cas.Trailers(c.Message)["Liza-Kind"] != ""; {
		case shallow[c.ID]:
			// The boundary of a shallow clone: its parent is not here, so
			// its state is checked whole, as the ground the commits after
			// it are verified on.
			err = v.boundary(c)
		case !recorded && legacy:
			err = v.legacyCommit(c)
		default:
			legacy = legacy && !recorded
			err = v.Commit(ctx, c)
		}
		if err != nil {
			if report != nil {
				report(c, err)
				continue
			}
			subject, _, _ := strings.Cut(c.Message, "\n")
			return len(todo) - i, contracts.Errorf(contracts.CodeInconsistent,
				"state is inconsistent: %s at %s (%q) does not do what it says: %v; nothing builds on it (git liza validate --history lists what is wrong, git liza import repairs it)",
				refstore.StateRef, short(c.ID.String()), subject, contracts.FirstLine(err.Error()))
		}
		if good != nil {
			good(c.ID)
		}
	}
	return len(todo), nil
}

// legacyAllowed reports whether unrecorded commits may follow base: none
// of the commits up to it recorded its operation.
func (v *Verifier) legacyAllowed(base refstore.Hash) bool {
	for id := base; !id.IsZero(); {
		c, err := v.Repo.ReadCommit(id)
		if err != nil {
			return false
		}
		if cas.Trailers(c.Message)["Liza-Kind"] != "" {
			return false
		}
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	return true
}

// legacyCommit checks a commit made before operations were recorded: its
// trailers and role, a valid state, and allowed transitions from its
// parent's.
func (v *Verifier) legacyCommit(c *refstore.Commit) error {
	if len(c.Parents) > 1 {
		return fmt.Errorf("it is a merge; state commits have one parent")
	}
	rec, err := ReadRecorded(c.Message)
	if err != nil {
		return err
	}
	role, _ := contracts.ParseAgentID(rec.Agent)
	if !contracts.Allowed(role, rec.Op) {
		return fmt.Errorf("%s (%s) may not %s", contracts.ActorName(rec.Agent), role, rec.Op)
	}
	snap, err := cas.ReadSnapshot(v.Repo, c.ID)
	if err != nil {
		return err
	}
	st, err := snap.Load()
	if err != nil {
		return err
	}
	if ps := contracts.ValidateUnder(st, contracts.RulesFirst); len(ps) > 0 {
		return fmt.Errorf("its state does not validate: %s", ps[0])
	}
	if len(c.Parents) == 0 || rec.Op == contracts.OpImport {
		return nil
	}
	ps, err := cas.ReadSnapshot(v.Repo, c.Parents[0])
	if err != nil {
		return err
	}
	prev, err := ps.Load()
	if err != nil {
		return nil // the parent was reported already
	}
	if probs := contracts.CheckStateTransition(prev, st); len(probs) > 0 {
		return fmt.Errorf("%s", probs[0])
	}
	return nil
}

// boundary checks the state at a shallow clone's boundary whole.
func (v *Verifier) boundary(c *refstore.Commit) error {
	snap, err := cas.ReadSnapshot(v.Repo, c.ID)
	if err != nil {
		return err
	}
	if err := cas.CheckState(snap, rulesOf(c.Message)); err != nil {
		return fmt.Errorf("its state, at the shallow boundary, %s", strings.TrimPrefix(contracts.FirstLine(err.Error()), "state is inconsistent: "))
	}
	return nil
}

// shallow is the set of shallow-boundary commits of a shallow clone.
func (v *Verifier) shallow() map[refstore.Hash]bool {
	out, _ := v.Repo.Shallow()
	return out
}
