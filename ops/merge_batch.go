package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// batchInput is what a batch of merges records: where the integration
// branch was, and each task's merge in order, each merge commit built on
// the one before it (the first on IntegrationOld). The branch moves to the
// last in the same ref transaction as the state.
type batchInput struct {
	IntegrationOld string       `json:"integration_old"`
	Merges         []batchMerge `json:"merges"`
}

// batchMerge is one task's merge in a batch.
type batchMerge struct {
	Task         string `json:"task"`
	ReviewCommit string `json:"review_commit"`
	MergeCommit  string `json:"merge_commit"`
}

// batchIDs are a batch's task ids, in order.
func (in *batchInput) ids() []string {
	ids := make([]string, len(in.Merges))
	for i, m := range in.Merges {
		ids[i] = m.Task
	}
	return ids
}

// kindMergeBatch lands several approved tasks at once: each becomes MERGED
// with its own merge_commit, the board records the last as the
// integration tip, and the branch moves there. A batch of one is a merge
// (kindMerge). It is an operation of rule set 4 (RulesLastMile) on.
var kindMergeBatch = since(contracts.RulesLastMile, def("merge_batch", contracts.OpMerge, func(tx *cas.Tx, in *batchInput) (any, error) {
	old, ok := refstore.ParseHash(in.IntegrationOld)
	if !ok {
		return nil, contracts.Invalidf("a batch of merges needs the full id of the integration branch before it")
	}
	if n := len(in.Merges); n < 2 || n > contracts.MaxMergeBatch {
		return nil, contracts.Invalidf("a batch of merges holds 2 to %d tasks, not %d", contracts.MaxMergeBatch, n)
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	if err := checkHalted(m.Control, "merges"); err != nil {
		return nil, err
	}
	if m.Config.IntegrationTip != "" && m.Config.IntegrationTip != in.IntegrationOld {
		return nil, contracts.Errorf(contracts.CodeInconsistent, "the batch %s starts from %s, but the board records the integration branch at %s; nothing merged",
			strings.Join(in.ids(), ", "), short(in.IntegrationOld), short(m.Config.IntegrationTip))
	}
	seen := map[string]bool{}
	merged := make([]*contracts.Task, 0, len(in.Merges))
	var last refstore.Hash
	for _, b := range in.Merges {
		if err := contracts.ValidTaskID(b.Task); err != nil {
			return nil, err
		}
		if seen[b.Task] {
			return nil, contracts.Invalidf("task %s is twice in the batch", b.Task)
		}
		if last, ok = refstore.ParseHash(b.MergeCommit); !ok {
			return nil, contracts.Invalidf("the merge of %s in the batch names no full commit id", b.Task)
		}
		cur, err := tx.MustTask(b.Task)
		if err != nil {
			return nil, err
		}
		if cur.Status != contracts.Approved || cur.ReviewCommit != b.ReviewCommit {
			return nil, contracts.Invalidf("task %s changed while merging (now %s); nothing merged", b.Task, cur.Status)
		}
		// A dependency lands before its dependant: merged already, or
		// earlier in the same batch.
		for _, d := range cur.DependsOn {
			if seen[d] {
				continue
			}
			if dep, err := tx.AnyTask(d); err != nil {
				return nil, err
			} else if dep == nil || dep.Status != contracts.Merged {
				return nil, contracts.Invalidf("task %s depends on %s, which is neither merged nor earlier in the batch; nothing merged", b.Task, d)
			}
		}
		seen[b.Task] = true
		if err := landMerged(tx, cur, b.MergeCommit, true); err != nil {
			return nil, err
		}
		merged = append(merged, cur)
	}
	if err := metricsAtMerge(tx, m, merged...); err != nil {
		return nil, err
	}
	m.Config.IntegrationTip = last.String()
	tx.PutMeta(m)
	tx.MoveRef(refstore.RefUpdate{Name: "refs/heads/" + m.Config.IntegrationBranch, Old: old, New: last})
	ids := in.ids()
	tx.Describe(fmt.Sprintf("merge batch %s (%s)", strings.Join(ids, ", "), tx.Actor), strings.Join(ids, " "))
	out := make([]map[string]string, len(in.Merges))
	for i, b := range in.Merges {
		out[i] = map[string]string{"id": b.Task, "merge_commit": b.MergeCommit}
	}
	return out, nil
}))

func init() { withFacts(kindMergeBatch, batchFacts) }

// batchFacts checks a batch as strictly as each of its merges alone: the
// integration branch moves from the old tip to the last merge commit (in
// the same push, where the verifier sees one), and each merge commit is
// the merge of the one before it (the old tip for the first) and its
// task's approved commit, with the tree git merge-tree makes of them. So
// every commit between the old tip and the new is one of the batch's
// tasks, merged as reviewed; the replay of the state (Verifier.Commit)
// has checked already that exactly the batch's tasks became MERGED, each
// at its own merge commit.
func batchFacts(ctx context.Context, v *Verifier, parent *cas.Tx, in *batchInput) error {
	old, _ := refstore.ParseHash(in.IntegrationOld)
	m, err := parent.Meta()
	if err != nil {
		return err
	}
	last, _ := refstore.ParseHash(in.Merges[len(in.Merges)-1].MergeCommit)
	if err := v.mergeMove("refs/heads/"+m.Config.IntegrationBranch, old, last); err != nil {
		return err
	}
	prev := old
	for _, b := range in.Merges {
		result, _ := refstore.ParseHash(b.MergeCommit)
		if err := v.mergeStep(ctx, prev, result, b.ReviewCommit, b.MergeCommit); err != nil {
			return fmt.Errorf("task %s in the batch: %v", b.Task, err)
		}
		prev = result
	}
	return nil
}
