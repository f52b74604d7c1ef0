package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// checkSeparation refuses, where commits must be signed, a verdict signed
// by a key that also wrote what the verdict judges: a signed code commit of
// the task's branch under review (base_commit..review_commit), or one of
// the task's claim and submit state commits. The agent ids differ (the
// contract sees to that); the key is what says who someone is, and one
// person holding a coder's key and a reviewer's, or one key allowed for
// both, would otherwise approve their own code.
//
// parent is the state the verdict applies to, c the verdict's commit,
// whose signature checkSignature has found good for its agent.
func (v *Verifier) checkSeparation(ctx context.Context, c *refstore.Commit, parent *cas.Snapshot, task string) error {
	_, sig, err := v.Repo.CommitSignature(c.ID)
	if err != nil || sig == nil {
		return err
	}
	key, err := refstore.SignatureKey(sig)
	if err != nil {
		return fmt.Errorf("its signature does not read: %v", err)
	}
	t, err := cas.ReadTx(parent, c.Author.When, "").MustTask(task)
	if err != nil {
		return err
	}
	same := func(id refstore.Hash) (bool, error) {
		_, s, err := v.Repo.CommitSignature(id)
		if err != nil || s == nil {
			return false, err
		}
		k, err := refstore.SignatureKey(s)
		return err == nil && k == key, nil // a GPG signature is no SSH key's
	}
	// The code under review.
	base, _ := refstore.ParseHash(t.BaseCommit)
	review, _ := refstore.ParseHash(t.ReviewCommit)
	if !v.has(base, review) {
		if err := v.missing("the commit under review " + short(t.ReviewCommit)); err != nil {
			return err
		}
	} else {
		out, err := v.Repo.Git(ctx, "rev-list", base.String()+".."+review.String())
		if err != nil {
			return err
		}
		for _, line := range strings.Fields(string(out)) {
			id, ok := refstore.ParseHash(line)
			if !ok {
				continue
			}
			if s, err := same(id); err != nil {
				return err
			} else if s {
				return fmt.Errorf("the verdict on task %s is signed by the key that signed commit %s of the code under review: the writer of the code may not judge it, whatever agent id it signs as", task, short(line))
			}
		}
	}
	// The task's claims and submissions, back to the task's creation.
	for id := c.Parents[0]; !id.IsZero(); {
		pc, err := v.Repo.ReadCommit(id)
		if err != nil {
			return v.missing("state commit " + short(id.String()))
		}
		tr := cas.Trailers(pc.Message)
		if tr["Liza-Task"] == task {
			switch contracts.Op(tr["Liza-Op"]) {
			case contracts.OpClaim, contracts.OpSubmit:
				if s, err := same(pc.ID); err != nil {
					return err
				} else if s {
					return fmt.Errorf("the verdict on task %s is signed by the key that signed its %s by %s (state commit %s): the writer of the code may not judge it, whatever agent id it signs as", task, tr["Liza-Op"], tr["Liza-Agent"], short(pc.ID.String()))
				}
			case contracts.OpAdd:
				return nil
			}
		}
		if len(pc.Parents) == 0 {
			break
		}
		id = pc.Parents[0]
	}
	return nil
}
