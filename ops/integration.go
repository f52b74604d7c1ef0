package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// The integration branch is where the board says it is. A remote without
// hooks takes any push to it, so a clone cannot trust the branch the way
// it trusts a verified state: from rule set 3 the state records the
// commit the branch must be at (config.integration_tip: init's start, then
// each merge's merge_commit, or what the operator adopted), and every
// clone compares the branch with it before it merges onto it, builds a
// claim on it, follows it (sync) or calls the board valid. Knowing what
// the board records costs one field of liza.yaml, which every operation
// reads anyway: no walk of the history, no task decoded.

// IntegrationMismatch is an integration branch that is not where the
// board records it: unreviewed code pushed onto it, or a forced rewind.
// Its class is CodeInconsistent (exit 4); the supervisor's merge lane
// recognises it and waits for the operator instead of trying each task.
type IntegrationMismatch struct {
	Branch   string        // the branch's short name
	Remote   string        // whose branch it is; "" for this repository's
	At       refstore.Hash // where it is
	Recorded refstore.Hash // where the board records it
	err      error
}

func (e *IntegrationMismatch) Error() string {
	if e.err == nil {
		return fmt.Sprintf("integration branch %s is at %s, but the board records %s", e.Branch, short(e.At.String()), short(e.Recorded.String()))
	}
	return e.err.Error()
}
func (e *IntegrationMismatch) Unwrap() error { return e.err }

// mismatch is the refusal of an integration branch at at where the board
// records want, with the command that puts it back and, where the
// operator may rather accept it, the one that does.
func mismatch(remote, branch string, at, want refstore.Hash, follower bool) error {
	name := strings.TrimPrefix(branch, "refs/heads/")
	e := &IntegrationMismatch{Branch: name, Remote: remote, At: at, Recorded: want}
	var msg string
	switch {
	case remote != "" && !follower:
		msg = fmt.Sprintf("integration branch %s on %s is at %s, but the board records %s: put it back with `git push --force-with-lease=%s:%s %s %s:%s`, or accept it with `git liza integration adopt %s`",
			name, remote, short(at.String()), short(want.String()), branch, at, remote, want, branch, at)
	case follower:
		// This repository's copy of a remote's branch: behind is only
		// a merge not followed yet; anything else was put here by hand.
		msg = fmt.Sprintf("integration branch %s here is at %s, which is neither %s, where the board records it, nor behind it: put it back with `git update-ref %s %s %s`",
			name, short(at.String()), short(want.String()), branch, want, at)
	default:
		msg = fmt.Sprintf("integration branch %s is at %s, but the board records %s: put it back with `git update-ref %s %s %s`, or accept it with `git liza integration adopt %s`",
			name, short(at.String()), short(want.String()), branch, want, at, at)
	}
	e.err = contracts.Errorf(contracts.CodeInconsistent, "%s", msg)
	return e
}

// expectedTip is where the board at tx records the integration branch,
// and whether it knows (see expectedFrom).
func (s *Service) expectedTip(tx *cas.Tx) (refstore.Hash, bool, error) {
	m, err := tx.Meta()
	if err != nil {
		return refstore.Hash{}, false, err
	}
	return s.expectedFrom(tx.Snap.Commit, m)
}

// expectedFrom is where the board at state commit tip, whose liza.yaml is
// m, records the integration branch. A board made before rule set 3
// records nothing until its first merge or integration adopt under it;
// until then the expectation is derived from its history (derivedTip),
// and is unknown (no check) when the history says nothing.
func (s *Service) expectedFrom(tip refstore.Hash, m *cas.Meta) (refstore.Hash, bool, error) {
	if t := m.Config.IntegrationTip; t != "" {
		h, ok := refstore.ParseHash(t)
		if !ok {
			return refstore.Hash{}, false, contracts.Errorf(contracts.CodeInconsistent, "config.integration_tip %q is not a commit id", t)
		}
		return h, true, nil
	}
	return s.derivedTip(tip)
}

// derivedTip is where a board that records no integration tip last put
// the integration branch: the merge_commit of its last merge, else the
// commit its init created the branch at, looked for in its last
// tornMergeDepth state commits. It is read only for boards made before
// rule set 3 (and an import that dropped the field), until their next
// merge records the tip.
func (s *Service) derivedTip(tip refstore.Hash) (refstore.Hash, bool, error) {
	memo, remembered := s.readDerived()
	found := func(at refstore.Hash, depth int) (refstore.Hash, bool, error) {
		s.rememberDerived(derived{tip, true, depth, at}, memo, remembered)
		return at, !at.IsZero(), nil
	}
	for c, n := tip, 0; !c.IsZero() && n < tornMergeDepth; n++ {
		if remembered && c == memo.commit {
			// Found from here before: the same answer, unless it was
			// further back than the walk from tip may go. A walk of a
			// few commits costs less than writing the answer again,
			// which the next operation would then read back to.
			if memo.found && n+memo.depth < tornMergeDepth {
				if n < derivedRewrite {
					return memo.at, !memo.at.IsZero(), nil
				}
				return found(memo.at, n+memo.depth)
			}
			if !memo.found && n < derivedRewrite {
				// Nothing back from there, nor in the commits since.
				return refstore.Hash{}, false, nil
			}
			break
		}
		commit, err := s.Repo.ReadCommit(c)
		if err != nil {
			return refstore.Hash{}, false, err
		}
		if rec, err := ReadRecorded(commit.Message); err == nil {
			var start string
			switch rec.Kind {
			case kindMerge.name:
				var in mergeInput
				if json.Unmarshal(rec.Input, &in) == nil {
					start = in.MergeCommit
				}
			case kindMergeBatch.name:
				var in batchInput
				if json.Unmarshal(rec.Input, &in) == nil && len(in.Merges) > 0 {
					start = in.Merges[len(in.Merges)-1].MergeCommit
				}
			case kindInit.name:
				var in initInput
				if json.Unmarshal(rec.Input, &in) == nil {
					start = in.Head + in.Tip // at most one is set
				}
			}
			if h, ok := refstore.ParseHash(start); ok {
				return found(h, n)
			}
			if rec.Kind == kindMerge.name || rec.Kind == kindMergeBatch.name || rec.Kind == kindInit.name {
				return found(refstore.Hash{}, n)
			}
		}
		if len(commit.Parents) == 0 {
			break
		}
		c = commit.Parents[0]
	}
	s.rememberDerived(derived{commit: tip}, memo, remembered)
	return refstore.Hash{}, false, nil
}

// checkIntegration refuses an integration branch that is not where the
// board records it (want). With remote set, theirs is the remote's branch
// as just fetched (zero when it has none) and must be want, and this
// repository's copy is only named in a notice unless it is want or
// behind it (sync follows it then); without, this repository's branch
// must be want.
func (s *Service) checkIntegration(ctx context.Context, remote, branch string, want, theirs refstore.Hash) error {
	if remote != "" && !theirs.IsZero() && theirs != want {
		moved, err := s.boardRecords(ctx, remote, theirs)
		if err != nil {
			return err
		}
		if !moved {
			return mismatch(remote, branch, theirs, want, false)
		}
		want = theirs
	}
	local, ok, err := s.Repo.ReadRef(branch)
	if err != nil || !ok || local == want {
		return err
	}
	if remote == "" {
		return mismatch("", branch, local, want, false)
	}
	if behind, err := s.Repo.IsAncestor(ctx, local.String(), want.String()); err == nil && behind {
		return nil
	}
	// Nothing here builds on this repository's copy of a remote's branch
	// (merges and claims take the remote's), and sync does not follow a
	// copy that is not behind: say so, and go on.
	s.notice(mismatch(remote, branch, local, want, true).Error())
	return nil
}

// boardRecords reports whether remote's board, fetched now, records its
// integration branch at theirs: a merge landed there between the read of
// the state a check compared with and the fetch of the branch. The board
// fetched is verified before it is believed.
func (s *Service) boardRecords(ctx context.Context, remote string, theirs refstore.Hash) (bool, error) {
	tip, _, err := s.Store.FetchState(ctx, remote)
	if err != nil || tip.IsZero() {
		return false, err
	}
	if !s.Store.KnownGood(tip) {
		if err := s.verifyTip(ctx, tip); err != nil {
			return false, err
		}
	}
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil || !snap.Exists() {
		return false, err
	}
	m, err := cas.ReadTx(snap, s.Now(), s.Agent).Meta()
	if err != nil {
		return false, err
	}
	want, known, err := s.expectedFrom(tip, m)
	return known && want == theirs, err
}

// recordedIntegration is the integration tip the board whose liza.yaml
// is m records, when it records one and the commit is here: what a
// verifier checks claims' base commits against before the branch itself,
// which a remote without hooks lets anyone move (and a copy fetched during
// a rewind keeps moved).
func (s *Service) recordedIntegration(m *cas.Meta) (refstore.Hash, bool) {
	h, ok := refstore.ParseHash(m.Config.IntegrationTip)
	if !ok || !s.Repo.HasObject(h) {
		return refstore.Hash{}, false
	}
	return h, true
}

// checkClaimBase refuses to start a claim's branch from an integration
// tip the board does not record (base, on the remote's branch in remote
// mode): the coder would build on code nobody reviewed.
func (s *Service) checkClaimBase(tx *cas.Tx, base refstore.Hash) error {
	want, known, err := s.expectedTip(tx)
	if err != nil || !known || base == want {
		return err
	}
	m, err := tx.Meta()
	if err != nil {
		return err
	}
	branch := "refs/heads/" + m.Config.IntegrationBranch
	if r := s.remote(); r != "" {
		if moved, err := s.boardRecords(context.Background(), r, base); err != nil || moved {
			return err
		}
		return mismatch(r, branch, base, want, false)
	}
	return mismatch("", branch, base, want, false)
}

// validateIntegration adds to v what validate says of the integration
// branch at the tip, snap: an error (exit 4) when it is not where the
// board records it, a warning when the board records nothing.
func (s *Service) validateIntegration(ctx context.Context, snap *cas.Snapshot, v *Validation) error {
	if len(v.Problems) > 0 {
		// A state that is wrong says nothing reliable of the branch.
		return nil
	}
	m, err := cas.ReadTx(snap, s.Now(), s.Agent).Meta()
	if err != nil {
		return err
	}
	branch := "refs/heads/" + m.Config.IntegrationBranch
	want, known, err := s.expectedFrom(snap.Commit, m)
	if err != nil {
		return err
	}
	if !known {
		// A board made before rule set 3 whose recent history does not
		// say either (derivedTip): nothing to compare with until the
		// operator adopts the branch's tip or a merge records one.
		v.Warnings = append(v.Warnings, contracts.Problem{Where: "config.integration_tip", Msg: fmt.Sprintf("the board records no tip of %s (it was made before rule set %d) and its last operations do not say where it should be: run git liza integration adopt to record where it is",
			m.Config.IntegrationBranch, contracts.RulesIntegration)})
		return nil
	}
	var theirs refstore.Hash
	remote := s.remote()
	if remote != "" {
		if theirs, _, err = s.branchTip(ctx, branch); err != nil {
			return err
		}
	}
	return s.checkIntegration(ctx, remote, branch, want, theirs)
}

// AdoptRequest records where the integration branch is, after the
// operator moved it by hand.
type AdoptRequest struct {
	Call
	// Commit, when set, is the commit the operator means to adopt: the
	// branch must be there (a confirmation that nobody moved it since).
	Commit string
}

// AdoptResult is what integration adopt recorded.
type AdoptResult struct {
	Branch  string // the branch's short name
	Remote  string // whose branch it is, in remote mode
	Commit  string // the tip recorded
	Was     string // the tip the board expected before, if it knew one
	Already bool   // the board recorded it already: nothing written
	Written
}

// AdoptIntegration records the integration branch's current tip (the
// remote's, in remote mode) as the one the board expects: the operator's
// explicit way to accept a branch they moved by hand (a commit before
// init, a fast-forward to a release, a repair), which every clone then
// follows. It moves no branch: move it first, then adopt where it is.
func (s *Service) AdoptIntegration(ctx context.Context, r AdoptRequest) (*AdoptResult, error) {
	if err := contracts.Permit(s.Agent, contracts.OpAdopt); err != nil {
		return nil, err
	}
	var branch, recorded string
	var want refstore.Hash
	var known bool
	if err := s.view(ctx, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		branch, recorded = "refs/heads/"+m.Config.IntegrationBranch, m.Config.IntegrationTip
		want, known, err = s.expectedTip(tx)
		return err
	}); err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(branch, "refs/heads/")
	out := &AdoptResult{Branch: name, Remote: s.remote()}
	where := ""
	if out.Remote != "" {
		where = " on " + out.Remote
	}
	tip, ok, err := s.branchTip(ctx, branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, contracts.Invalidf("integration branch %s%s does not exist", name, where)
	}
	if r.Commit != "" {
		c, err := s.Repo.ResolveCommit(ctx, r.Commit)
		if err != nil {
			return nil, err
		}
		if c != tip {
			return nil, contracts.Invalidf("integration branch %s%s is at %s, not at %s: integration adopt records where the branch is; move it there first", name, where, short(tip.String()), short(c.String()))
		}
	}
	out.Commit = tip.String()
	if known {
		out.Was = want.String()
	}
	if known && want == tip && recorded != "" {
		out.Already = true
		return out, nil
	}
	res, err := s.write(ctx, r.Call, kindAdopt, adoptInput{Commit: tip.String(), Was: recorded}, func(tx *cas.Tx) error {
		if now, _, err := s.branchTip(ctx, branch); err != nil {
			return err
		} else if now != tip {
			return contracts.Errorf(contracts.CodeContention, "integration branch %s%s moved to %s while adopting %s: look at it, then run integration adopt again", name, where, short(now.String()), short(tip.String()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Written = written(res)
	return out, nil
}

// adoptInput is what integration adopt records: the commit the board now
// expects the integration branch at, and the one it recorded before ("" on
// a board made before rule set 3), so that an adopt raced by a merge is
// refused rather than undoing it.
type adoptInput struct {
	Commit string `json:"commit"`
	Was    string `json:"was,omitempty"`
}

var kindAdopt = since(contracts.RulesIntegration, def("integration_adopt", contracts.OpAdopt, func(tx *cas.Tx, in *adoptInput) (any, error) {
	if _, ok := refstore.ParseHash(in.Commit); !ok {
		return nil, contracts.Invalidf("integration adopt: %q is not a full commit id", in.Commit)
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	if m.Config.IntegrationTip != in.Was {
		return nil, contracts.Invalidf("the board's integration tip moved to %s (a merge?) while adopting: look at the branch, then run integration adopt again", short(m.Config.IntegrationTip))
	}
	m.Config.IntegrationTip = in.Commit
	tx.PutMeta(m)
	tx.Describe(fmt.Sprintf("integration adopt %s at %s", m.Config.IntegrationBranch, short(in.Commit)), "")
	return map[string]string{"integration_branch": m.Config.IntegrationBranch, "commit": in.Commit}, nil
}))

func init() { withFacts(kindAdopt, adoptFacts) }

// adoptFacts checks that the adopted commit is a commit, where the
// verifier has it (a server has every object a push depends on).
func adoptFacts(ctx context.Context, v *Verifier, parent *cas.Tx, in *adoptInput) error {
	c, _ := refstore.ParseHash(in.Commit)
	if !v.has(c) {
		return v.missing("the adopted commit " + short(in.Commit))
	}
	if _, err := v.Repo.ReadCommit(c); err != nil {
		return fmt.Errorf("the adopted %s is not a commit", short(in.Commit))
	}
	return nil
}
