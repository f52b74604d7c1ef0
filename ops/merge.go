package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// IntegrationTest is the project script a merge runs on its result, when
// the result has it.
const IntegrationTest = "scripts/integration-test.sh"

// MergeRequest merges an APPROVED task into the integration branch.
type MergeRequest struct {
	Call
	Task string
}

// MergeResult is what a merge did.
type MergeResult struct {
	ID                string
	MergeCommit       string
	IntegrationBranch string // the branch's short name
	// Cleanup says why the task's worktree was kept, when it was.
	Cleanup string
	Written
}

// errIntegrationMoved means the integration branch moved while a merge was
// being built; the merge is built again on the new tip.
var errIntegrationMoved = errors.New("integration branch moved")

// Merge builds the merge with git merge-tree (or fast-forwards), runs the
// integration test in a throwaway worktree, and only then moves the
// integration branch and the state in one ref transaction. A conflict or a
// failing test records INTEGRATION_FAILED and leaves the branch where it was.
func (s *Service) Merge(ctx context.Context, r MergeRequest) (*MergeResult, error) {
	ctx = cas.WithViews(ctx) // its views read the tip it just fetched or pushed
	id := r.Task
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	if err := s.mergeGate(ctx); err != nil {
		return nil, err
	}
	for {
		var t *contracts.Task
		var branch string
		var want refstore.Hash
		var known bool
		var rules int
		if err := s.view(ctx, func(tx *cas.Tx) error {
			var err error
			if t, err = tx.MustTask(id); err != nil {
				return err
			}
			rules = tx.Rules
			m, err := tx.Meta()
			if err != nil {
				return err
			}
			branch = "refs/heads/" + m.Config.IntegrationBranch
			if want, known, err = s.expectedTip(tx); err != nil {
				return err
			}
			return checkHalted(m.Control, "merges")
		}); err != nil {
			return nil, err
		}
		// One killed between moving the state and the branch left the
		// branch behind.
		if err := s.finishTornMerge(ctx, branch); err != nil {
			return nil, err
		}
		if t.Status != contracts.Approved {
			if t.Status == contracts.Merged {
				s.finishMerged(ctx, id, branch)
			}
			return nil, contracts.Invalidf("task %s is %s, not APPROVED", id, t.Status)
		}
		review, _ := refstore.ParseHash(t.ReviewCommit)
		if tip, ok, err := s.branchTip(ctx, worktree.BranchRef(id)); err != nil {
			return nil, err
		} else if !ok {
			return nil, contracts.Invalidf("there is no branch %s here to merge", worktree.Branch(id))
		} else if tip != review {
			return nil, contracts.Invalidf("%s is at %s, not at the approved commit %s", worktree.Branch(id), short(tip.String()), short(t.ReviewCommit))
		}
		if err := s.integrationNotCheckedOut(ctx, branch); err != nil {
			return nil, err
		}
		integ, ok, err := s.branchTip(ctx, branch)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, contracts.Invalidf("integration branch %s does not exist", strings.TrimPrefix(branch, "refs/heads/"))
		}
		// Nothing merges onto a branch the board does not record: it
		// would carry whatever put it there into the merge.
		if known {
			if err := s.checkIntegration(ctx, s.remote(), branch, want, integ); err != nil {
				return nil, err
			}
		}
		// What merges is what was reviewed: an object of the task's whose
		// file was rewritten since is refused before git builds on it.
		if err := s.Repo.CheckObjects(ctx, integ, review); err != nil {
			return nil, objectsErr(id, err)
		}
		if err := s.checkTaskFacts(ctx, t, rules, integ, review); err != nil {
			return nil, err
		}
		result, conflicts, err := s.buildMerge(ctx, t, integ, review)
		if err != nil {
			return nil, err
		}
		if len(conflicts) > 0 {
			reason := "merge conflict in " + strings.Join(conflicts, ", ")
			if err := s.integrationFailed(ctx, r.Call, id, reason); err != nil {
				return nil, err
			}
			return nil, contracts.Errorf(contracts.CodeGit, "task %s does not merge into %s: %s; it is INTEGRATION_FAILED", id, strings.TrimPrefix(branch, "refs/heads/"), reason)
		}
		if logPath, err := s.integrationTest(ctx, id, integ, result); err != nil {
			var fail *testFailure
			if !errors.As(err, &fail) {
				return nil, err
			}
			if err := s.integrationFailed(ctx, r.Call, id, fail.Error()); err != nil {
				return nil, err
			}
			return nil, &TestFailed{err: contracts.Invalidf("task %s: %s; it is INTEGRATION_FAILED (log: %s)", id, fail.Error(), logPath),
				Log: logPath, Tail: tail(logPath, testTail)}
		}
		in := mergeInput{Task: id, ReviewCommit: t.ReviewCommit, MergeCommit: result.String(), IntegrationOld: integ.String()}
		res, err := s.write(ctx, r.Call, kindMerge, in, func(tx *cas.Tx) error {
			if now, _, err := s.branchTip(ctx, branch); err != nil {
				return err
			} else if now != integ || s.branchLocked(branch) {
				// A locked branch may be a merge torn by a kill: see
				// finishTornMerge, which the next round runs first.
				return errIntegrationMoved
			}
			return nil
		})
		if errors.Is(err, errIntegrationMoved) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out := &MergeResult{ID: id, MergeCommit: result.String(), IntegrationBranch: strings.TrimPrefix(branch, "refs/heads/"), Written: written(res)}
		proc.CrashPoint("merge:committed")
		// A task branch still at the commit just merged has nothing the
		// integration branch lacks: no git merge-base need say so.
		check := branch
		if now, ok, err := s.Repo.ReadRef(worktree.BranchRef(id)); err == nil && ok && now == review {
			check = ""
		}
		if err := worktree.Remove(ctx, s.Repo, id, check, false); err != nil {
			out.Cleanup = fmt.Sprintf("worktree kept: %v", err)
		}
		if r := s.remote(); r != "" {
			// The task branch has served its purpose on the remote too.
			_ = s.Repo.Push(ctx, r, refstore.RefUpdate{Name: worktree.BranchRef(id), Old: review})
		}
		return out, nil
	}
}

// branchLocked reports whether git's lock of a branch exists here (not in

// mergeGate is what every merge, single or queued, checks first: the
// agent may merge and no kill switch file stops merges; then what a
// merge killed earlier left (its test's worktree, a half-removed task
// worktree, a lock of git's) is recovered.
func (s *Service) mergeGate(ctx context.Context) error {
	if err := contracts.Permit(s.Agent, contracts.OpMerge); err != nil {
		return err
	}
	if err := s.checkSwitchFiles("merges"); err != nil {
		return err
	}
	return s.recoverWhenFree(ctx)
}

// remote mode, where the remote's git holds its own).
func (s *Service) branchLocked(ref string) bool {
	if s.remote() != "" {
		return false
	}
	_, err := os.Stat(filepath.Join(s.Repo.CommonDir, filepath.FromSlash(ref)+".lock"))
	return err == nil
}

// finishMerged does what a merge of id that was killed after it landed
// did not: removes the task's worktree and branch when they hold nothing
// the integration branch lacks, and says so.
func (s *Service) finishMerged(ctx context.Context, id, branch string) {
	info, err := worktree.Inspect(ctx, s.Repo, id)
	if err != nil || info.Locked != "" {
		return
	}
	_, hasBranch, err := s.Repo.ReadRef(worktree.BranchRef(id))
	if err != nil || !info.Exists && !info.Prunable && !hasBranch {
		return
	}
	if worktree.Remove(ctx, s.Repo, id, branch, false) == nil {
		s.notice(fmt.Sprintf("removed the worktree and branch of %s, which a merge of it killed after it landed had left", id))
	}
}

// mergeInput is what a merge records: the approved commit, the commit the
// integration branch moved to, and where it moved from.
type mergeInput struct {
	Task           string `json:"task"`
	ReviewCommit   string `json:"review_commit"`
	MergeCommit    string `json:"merge_commit"`
	IntegrationOld string `json:"integration_old"`
}

var kindMerge = def("merge", contracts.OpMerge, func(tx *cas.Tx, in *mergeInput) (any, error) {
	id := in.Task
	old, ok1 := refstore.ParseHash(in.IntegrationOld)
	result, ok2 := refstore.ParseHash(in.MergeCommit)
	if !ok1 || !ok2 {
		return nil, contracts.Invalidf("a merge needs the full ids of the integration branch before and after it")
	}
	cur, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	if cur.Status != contracts.Approved || cur.ReviewCommit != in.ReviewCommit {
		return nil, contracts.Invalidf("task %s changed while merging (now %s); nothing merged", id, cur.Status)
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	whole := tx.Rules >= contracts.RulesWhole
	if whole {
		if err := checkHalted(m.Control, "merges"); err != nil {
			return nil, err
		}
	}
	// From rule set 3 a merge starts from the tip the board records and
	// records the one it makes (an older board records none until then).
	recordTip := tx.Rules >= contracts.RulesIntegration
	if recordTip && m.Config.IntegrationTip != "" && m.Config.IntegrationTip != in.IntegrationOld {
		return nil, contracts.Errorf(contracts.CodeInconsistent, "the merge of %s starts from %s, but the board records the integration branch at %s; nothing merged",
			id, short(in.IntegrationOld), short(m.Config.IntegrationTip))
	}
	if err := landMerged(tx, cur, in.MergeCommit, whole); err != nil {
		return nil, err
	}
	// wt-merge.sh recomputes the sprint's metrics after every merge from
	// the whole board, and so does a merge from rule set 4
	// (metricsAtMerge). Under rule sets 2 and 3 a merge added its own task
	// to the metrics git liza sprint metrics last computed, which went
	// wrong as soon as anything else had moved since; their commits replay
	// as they were made.
	switch {
	case tx.Rules >= contracts.RulesMetered:
		if err := metricsAtMerge(tx, m, cur); err != nil {
			return nil, err
		}
	case whole:
		if metrics, ok := contracts.MetricsAfterMerge(m.Sprint.Metrics, cur, m.Sprint.Timeline.Started); ok {
			m.Sprint.Metrics = metrics
			tx.PutMeta(m)
		}
	}
	if recordTip {
		m.Config.IntegrationTip = in.MergeCommit
		tx.PutMeta(m)
	}
	tx.MoveRef(refstore.RefUpdate{Name: "refs/heads/" + m.Config.IntegrationBranch, Old: old, New: result})
	tx.Describe(fmt.Sprintf("merge %s (%s)", id, tx.Actor), id)
	return map[string]string{"id": id, "merge_commit": cur.MergeCommit}, nil
})

// landMerged marks cur MERGED at mergeCommit in tx and frees its coder
// (whole: under rule set 2 and later, an idle agent holds no lease).
func landMerged(tx *cas.Tx, cur *contracts.Task, mergeCommit string, whole bool) error {
	id := cur.ID
	cur.Status = contracts.Merged
	cur.MergeCommit = mergeCommit
	cur.Worktree = ""
	cur.LeaseExpires, cur.ReviewingBy, cur.ReviewLeaseExpires = "", "", ""
	cur.History = append(cur.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "merged", Agent: tx.Actor,
		From: string(contracts.Approved), To: string(contracts.Merged), Commit: cur.MergeCommit})
	tx.PutTask(cur)
	if cur.AssignedTo != "" {
		if a, err := tx.Agent(cur.AssignedTo); err != nil {
			return err
		} else if a != nil && a.CurrentTask == id {
			a.Status, a.CurrentTask = "IDLE", ""
			if whole {
				a.LeaseExpires = "" // an idle agent holds no lease
			}
			tx.PutAgent(cur.AssignedTo, a)
		}
	}
	return nil
}

// metricsAtMerge records in m the sprint's metrics recomputed from the
// whole board as the merge of the merged tasks leaves it, as git liza
// sprint metrics computes them: the parent state with each, now MERGED,
// in place of its old self (a merge changes no other task, and of the
// agents only the status of its coder, which no metric reads).
func metricsAtMerge(tx *cas.Tx, m *cas.Meta, merged ...*contracts.Task) error {
	st, err := tx.Snap.Load()
	if err != nil {
		return err
	}
	for i, t := range st.Tasks {
		for _, cur := range merged {
			if t != nil && t.ID == cur.ID {
				st.Tasks[i] = cur
			}
		}
	}
	fresh, err := contracts.SprintMetrics(st, tx.Now).Extra()
	if err != nil {
		return err
	}
	if merged, changed := contracts.MergeMetrics(m.Sprint.Metrics, fresh); changed {
		m.Sprint.Metrics = merged
		tx.PutMeta(m)
	}
	return nil
}

func init() { withFacts(kindMerge, mergeFacts) }

// mergeFacts checks the commit a merge moved the integration branch to: the
// approved commit itself when it descends from the old integration tip (a
// fast-forward), else a merge commit of exactly the old tip and the
// approved commit whose tree is what git merge-tree makes of them, so that
// nothing unreviewed rides along. Where the verifier sees the integration
// branch move (a push, a fetch), the move must be this one.
func mergeFacts(ctx context.Context, v *Verifier, parent *cas.Tx, in *mergeInput) error {
	old, _ := refstore.ParseHash(in.IntegrationOld)
	result, _ := refstore.ParseHash(in.MergeCommit)
	m, err := parent.Meta()
	if err != nil {
		return err
	}
	if err := v.mergeMove("refs/heads/"+m.Config.IntegrationBranch, old, result); err != nil {
		return err
	}
	return v.mergeStep(ctx, old, result, in.ReviewCommit, in.MergeCommit)
}

// mergeStep checks one merge of the approved commit review onto old:
// result is review itself when review descends from old, else a merge
// commit of exactly old and review whose tree is what git merge-tree
// makes of them.
func (v *Verifier) mergeStep(ctx context.Context, old, result refstore.Hash, reviewCommit, mergeCommit string) error {
	review, ok := refstore.ParseHash(reviewCommit)
	if !ok {
		return fmt.Errorf("the merge names no approved commit")
	}
	if !v.has(old, result, review) {
		return v.missing("the merge commit " + short(mergeCommit))
	}
	if result == review {
		if ok, err := v.Repo.IsAncestor(ctx, old.String(), review.String()); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("the merge moves the integration branch to the approved commit %s, which does not descend from %s", short(reviewCommit), short(old.String()))
		}
		return nil
	}
	c, err := v.Repo.ReadCommit(result)
	if err != nil {
		return err
	}
	if len(c.Parents) != 2 || c.Parents[0] != old || c.Parents[1] != review {
		return fmt.Errorf("the merge commit %s is not a merge of %s and the approved commit %s", short(mergeCommit), short(old.String()), short(reviewCommit))
	}
	tree, conflicts, err := v.Repo.MergeTree(ctx, old, review)
	if err != nil {
		return err
	}
	if len(conflicts) > 0 || tree != c.Tree {
		return fmt.Errorf("the merge commit %s holds other changes than the merge of %s and %s", short(mergeCommit), short(old.String()), short(reviewCommit))
	}
	return nil
}

// buildMerge returns the commit the integration branch moves to: the
// reviewed commit itself when it descends from the integration tip, else a
// merge commit of the tree git merge-tree writes. Conflicting paths come
// back instead of a commit.
func (s *Service) buildMerge(ctx context.Context, t *contracts.Task, integ, review refstore.Hash) (refstore.Hash, []string, error) {
	ff, err := s.Repo.IsAncestor(ctx, integ.String(), review.String())
	if err != nil || ff {
		return review, nil, err
	}
	tree, conflicts, err := s.Repo.MergeTree(ctx, integ, review)
	if err != nil || len(conflicts) > 0 {
		return refstore.Hash{}, conflicts, err
	}
	msg := fmt.Sprintf("Merge %s: %s\n\nApproved-by: %s\nLiza-Task: %s\n", worktree.Branch(t.ID), contracts.FirstLine(t.Description), t.ApprovedBy, t.ID)
	sig := s.Store.Author
	if s.Agent != "" {
		sig = refstore.Signature{Name: s.Agent, Email: s.Agent + "@liza.invalid"}
	}
	if sig.Name == "" {
		sig = refstore.Signature{Name: "git-liza", Email: "git-liza@liza.invalid"}
	}
	sig.When = s.Now()
	c, err := s.Repo.WriteCommit(tree, []refstore.Hash{integ, review}, sig, msg)
	return c, nil, err
}

// integrationFailed records a merge that could not land.
func (s *Service) integrationFailed(ctx context.Context, call Call, id, reason string) error {
	_, err := s.write(ctx, call, kindIntegrationFailed, integrationFailedInput{Task: id, Reason: reason}, nil)
	return err
}

type integrationFailedInput struct {
	Task   string `json:"task"`
	Reason string `json:"reason"`
}

var kindIntegrationFailed = def("integration_failed", contracts.OpMerge, func(tx *cas.Tx, in *integrationFailedInput) (any, error) {
	id := in.Task
	t, err := tx.MustTask(id)
	if err != nil {
		return nil, err
	}
	if err := contracts.CheckTransition(id, t.Status, contracts.IntegrationFailed); err != nil {
		return nil, err
	}
	t.Status = contracts.IntegrationFailed
	t.ApprovedBy = ""
	t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "integration_failed", Agent: tx.Actor,
		From: string(contracts.Approved), To: string(contracts.IntegrationFailed), Reason: in.Reason, Commit: t.ReviewCommit})
	tx.PutTask(t)
	tx.Describe(fmt.Sprintf("integration failed for %s (%s)", id, tx.Actor), id)
	return nil, nil
})

// integrationNotCheckedOut refuses to move a branch someone has checked
// out: their checkout would silently fall behind its own HEAD.
func (s *Service) integrationNotCheckedOut(ctx context.Context, branch string) error {
	path, err := worktree.CheckedOut(ctx, s.Repo, branch)
	if err != nil || path == "" {
		return err
	}
	return contracts.Invalidf("%s is checked out in %s: switch that checkout to another branch so the merge does not move it underneath", strings.TrimPrefix(branch, "refs/heads/"), path)
}

// objectsErr says that a task's objects do not hold what their ids name.
func objectsErr(id string, err error) error {
	if errors.Is(err, refstore.ErrCorrupt) {
		return contracts.Errorf(contracts.CodeInconsistent, "task %s: %v", id, err)
	}
	return err
}
