package ops

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// MergeQueueRequest merges the APPROVED tasks in tested batches.
type MergeQueueRequest struct {
	Call
	// Only, when set, says which approved tasks this call may merge (the
	// supervisor's lane leaves another live reviewer's approvals to it,
	// and tasks whose merge it is waiting to try again).
	Only func(t *contracts.Task) bool
	// Batches, when positive, stops after that many batches (each with
	// its bisection); otherwise the queue runs until no task is left.
	Batches int
}

// Queue outcomes of a task.
const (
	QueueMerged  = "MERGED"
	QueueFailed  = "INTEGRATION_FAILED"
	QueueSkipped = "SKIPPED" // not merged, the board unchanged (its branch moved, ...)
	QueueHeld    = "HELD"    // a dependency failed in the batch: it stays APPROVED
)

// QueueOutcome is what the queue did with one task.
type QueueOutcome struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	MergeCommit string   `json:"merge_commit,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	Log         string   `json:"log,omitempty"`
	Tail        []string `json:"tail,omitempty"`
}

// MergeQueueResult is what a run of the merge queue did.
type MergeQueueResult struct {
	IntegrationBranch string
	Outcomes          []QueueOutcome
	Batches           int // batches built
	Runs              int // integration test runs
	Landings          int // state commits that moved the integration branch
}

// candidate is a task of a batch, with the merge built for it.
type candidate struct {
	task   *contracts.Task
	review refstore.Hash
	merge  refstore.Hash // on the candidate before it; zero until built
}

// queuePlan is what a batch starts from.
type queuePlan struct {
	branch string // refs/heads/...
	want   refstore.Hash
	known  bool
	rules  int // the board's rule set, which judges a task's scope
	batch  []*contracts.Task
	order  []queueTask
}

// MergeQueue merges every APPROVED task (that r.Only allows) the way the
// supervisor's merge lane does: in batches of at most config.merge_batch,
// in the queue's order (queueOrder), each batch tested once on its last
// merge and bisected when the test fails (bisection). The state is the
// commit point of every step: a landing moves the integration branch and
// marks its tasks MERGED in one ref transaction, and an isolated task is
// recorded INTEGRATION_FAILED before anything else happens, so a run
// killed anywhere is taken up by the next, which starts from what the
// board says.
func (s *Service) MergeQueue(ctx context.Context, r MergeQueueRequest) (*MergeQueueResult, error) {
	ctx = cas.WithViews(ctx) // its views read the tip it just fetched or pushed
	if err := s.mergeGate(ctx); err != nil {
		return nil, err
	}
	s.finishLanded(ctx)
	out := &MergeQueueResult{}
	// Tasks this call gave up on without changing the board (their
	// branch is not at the approved commit): not tried again in it.
	skip := map[string]bool{}
	for r.Batches <= 0 || out.Batches < r.Batches {
		pl, err := s.queuePlan(skip, r.Only)
		if err != nil {
			return out, err
		}
		out.IntegrationBranch = strings.TrimPrefix(pl.branch, "refs/heads/")
		if len(pl.batch) == 0 {
			break
		}
		if err := s.finishTornMerge(ctx, pl.branch); err != nil {
			return out, err
		}
		out.Batches++
		err = s.runBatch(ctx, r.Call, pl, out, skip)
		if errors.Is(err, errIntegrationMoved) {
			continue
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// queuePlan reads the board: the next batch, in the queue's order.
func (s *Service) queuePlan(skip map[string]bool, only func(*contracts.Task) bool) (*queuePlan, error) {
	pl := &queuePlan{}
	err := s.view(context.Background(), func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		pl.branch, pl.rules = "refs/heads/"+m.Config.IntegrationBranch, tx.Rules
		if pl.want, pl.known, err = s.expectedTip(tx); err != nil {
			return err
		}
		if err := checkHalted(m.Control, "merges"); err != nil {
			return err
		}
		limit := m.Config.MergeBatchLimit()
		if tx.Rules < contracts.RulesLastMile {
			limit = 1 // batches are an operation of rule set 4
		}
		order, tasks, err := approvedInOrder(tx, limit, func(t *contracts.Task) bool {
			return !skip[t.ID] && (only == nil || only(t))
		})
		pl.order = order
		for _, q := range order {
			pl.batch = append(pl.batch, tasks[q.ID])
		}
		return err
	})
	return pl, err
}

// approvedInOrder is the queue at tx: the first limit approved tasks that
// take pass, in the order they merge, and those tasks by id.
func approvedInOrder(tx *cas.Tx, limit int, take func(*contracts.Task) bool) ([]queueTask, map[string]*contracts.Task, error) {
	// APPROVED is a status in flight: the claim index lists them, and
	// the board's whole index is not read.
	idx, err := tx.InFlight()
	if err != nil {
		return nil, nil, err
	}
	tasks := map[string]*contracts.Task{}
	var approved []queueTask
	for id, sum := range idx {
		if sum.Status != contracts.Approved {
			continue
		}
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, nil, err
		}
		if !take(t) {
			continue
		}
		tasks[id] = t
		approved = append(approved, queueTaskOf(t))
	}
	merged := func(id string) bool {
		if sum := idx[id]; sum != nil {
			return sum.Status == contracts.Merged
		}
		t, err := tx.AnyTask(id)
		return err == nil && t != nil && t.Status == contracts.Merged
	}
	order, _ := queueOrder(approved, merged, limit)
	return order, tasks, nil
}

// runBatch merges one batch: builds each merge on the one before it,
// tests, lands what passes and isolates what fails, until every task of
// the batch is MERGED, INTEGRATION_FAILED, or left out.
func (s *Service) runBatch(ctx context.Context, call Call, pl *queuePlan, out *MergeQueueResult, skip map[string]bool) error {
	branch := pl.branch
	if err := s.integrationNotCheckedOut(ctx, branch); err != nil {
		return err
	}
	base, ok, err := s.branchTip(ctx, branch)
	if err != nil {
		return err
	}
	if !ok {
		return contracts.Invalidf("integration branch %s does not exist", strings.TrimPrefix(branch, "refs/heads/"))
	}
	if pl.known {
		if err := s.checkIntegration(ctx, s.remote(), branch, pl.want, base); err != nil {
			return err
		}
	}
	var cands []*candidate
	left := map[string]bool{}
	for _, t := range pl.batch {
		review, _ := refstore.ParseHash(t.ReviewCommit)
		reason := ""
		if tip, ok, err := s.branchTip(ctx, worktree.BranchRef(t.ID)); err != nil {
			return err
		} else if !ok {
			reason = fmt.Sprintf("there is no branch %s here to merge", worktree.Branch(t.ID))
		} else if tip != review {
			reason = fmt.Sprintf("%s is at %s, not at the approved commit %s", worktree.Branch(t.ID), short(tip.String()), short(t.ReviewCommit))
		} else if err := s.Repo.CheckObjects(ctx, base, review); err != nil {
			if !errors.Is(err, refstore.ErrCorrupt) {
				return err
			}
			reason = objectsErr(t.ID, err).Error()
		} else if err := s.checkTaskFacts(ctx, t, pl.rules, base, review); err != nil {
			reason = err.Error()
		}
		if reason == "" && dependsOnAny(t, left) {
			reason = "a task it depends on is left out of the batch"
		}
		if reason != "" {
			skip[t.ID], left[t.ID] = true, true
			out.Outcomes = append(out.Outcomes, QueueOutcome{ID: t.ID, Status: QueueSkipped, Reason: reason})
			continue
		}
		cands = append(cands, &candidate{task: t, review: review})
	}
	s.seeQueue(cands, 0)
	defer s.seeQueue(nil, 0)
	bis := &bisection{pending: len(cands)}
	built := false
	var lastFail *batchFailure
	for {
		// A kill switch set while a test ran stops the batch before its
		// next step (a test, a landing, an isolation): what is left stays
		// APPROVED for the merge after the resume.
		if err := s.mergesHalted(); err != nil {
			return err
		}
		if !built {
			if cands, err = s.buildChain(ctx, call, base, cands, bis, out); err != nil {
				return err
			}
			built = true
		}
		step, ok := bis.next()
		if !ok {
			return nil
		}
		if step.Isolate {
			c := cands[0]
			reason := lastFail.reason()
			if err := s.integrationFailed(ctx, queueStep(call, "failed", c.task.ID), c.task.ID, reason); err != nil {
				return err
			}
			out.Outcomes = append(out.Outcomes, QueueOutcome{ID: c.task.ID, Status: QueueFailed, Reason: reason, Log: lastFail.log, Tail: lastFail.tail})
			proc.CrashPoint("queue:isolated")
			cands = cands[1:]
			bis.isolated()
			cands = s.holdDependants(cands, map[string]bool{c.task.ID: true}, bis, 0, out)
			built = false // the merges after it were built on its
			continue
		}
		n := step.Test
		tested := cands[:n]
		s.seeQueue(cands, n)
		logPath, err := s.integrationTest(ctx, tested[0].task.ID, base, tested[n-1].merge)
		if logPath != "" {
			out.Runs++
		}
		var fail *testFailure
		if errors.As(err, &fail) {
			lastFail = &batchFailure{msg: fail.Error(), log: logPath, tail: tail(logPath, testTail), ids: candIDs(tested)}
			bis.failed(n)
			continue
		}
		if err != nil {
			return err
		}
		if err := s.land(ctx, call, branch, base, tested); err != nil {
			return err
		}
		out.Landings++
		for _, c := range tested {
			out.Outcomes = append(out.Outcomes, QueueOutcome{ID: c.task.ID, Status: QueueMerged, MergeCommit: c.merge.String()})
		}
		proc.CrashPoint("queue:landed")
		for _, c := range tested {
			s.afterMerge(ctx, c.task.ID, c.review, branch)
		}
		base = tested[n-1].merge
		cands = cands[n:]
		bis.passed(n)
	}
}

// mergesHalted refuses the next step of a merge while a kill switch is
// on: a switch file here, or the state's control mode as the board is now.
func (s *Service) mergesHalted() error {
	if err := s.checkSwitchFiles("merges"); err != nil {
		return err
	}
	return s.view(context.Background(), func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		return checkHalted(m.Control, "merges")
	})
}

// buildChain builds each candidate's merge onto the one before it (the
// first onto base). A candidate that does not merge cleanly is recorded
// INTEGRATION_FAILED, as a single merge records it, and leaves the batch
// with the candidates that depend on it.
func (s *Service) buildChain(ctx context.Context, call Call, base refstore.Hash, cands []*candidate, bis *bisection, out *MergeQueueResult) ([]*candidate, error) {
	prev := base
	for i := 0; i < len(cands); {
		c := cands[i]
		result, conflicts, err := s.buildMerge(ctx, c.task, prev, c.review)
		if err != nil {
			return cands, err
		}
		if len(conflicts) == 0 {
			c.merge, prev = result, result
			i++
			continue
		}
		reason := "merge conflict in " + strings.Join(conflicts, ", ")
		if err := s.integrationFailed(ctx, queueStep(call, "failed", c.task.ID), c.task.ID, reason); err != nil {
			return cands, err
		}
		out.Outcomes = append(out.Outcomes, QueueOutcome{ID: c.task.ID, Status: QueueFailed, Reason: reason})
		cands = append(cands[:i:i], cands[i+1:]...)
		bis.dropped(i)
		cands = append(cands[:i:i], s.holdDependants(cands[i:], map[string]bool{c.task.ID: true}, bis, i, out)...)
	}
	return cands, nil
}

// holdDependants removes from cands the tasks that depend on a task in
// gone (directly or through one another): they stay APPROVED and wait for
// the next batch, and bis forgets them (cands are its pending tasks from
// index offset on).
func (s *Service) holdDependants(cands []*candidate, gone map[string]bool, bis *bisection, offset int, out *MergeQueueResult) []*candidate {
	pending := make([]queueTask, len(cands))
	for i, c := range cands {
		pending[i] = queueTask{ID: c.task.ID, DependsOn: c.task.DependsOn}
	}
	held := dependants(pending, gone)
	if len(held) == 0 {
		return cands
	}
	var kept []*candidate
	for _, c := range cands {
		if !held[c.task.ID] {
			kept = append(kept, c)
			continue
		}
		bis.dropped(offset + len(kept))
		out.Outcomes = append(out.Outcomes, QueueOutcome{ID: c.task.ID, Status: QueueHeld, Reason: "a task it depends on did not land"})
	}
	return kept
}

// land writes the merges of cands, built in a chain on base: one merge,
// or one batch, in the ref transaction that moves the integration branch.
func (s *Service) land(ctx context.Context, call Call, branch string, base refstore.Hash, cands []*candidate) error {
	call = queueStep(call, "landed", candIDs(cands)...)
	live := func(tx *cas.Tx) error {
		if now, _, err := s.branchTip(ctx, branch); err != nil {
			return err
		} else if now != base || s.branchLocked(branch) {
			return errIntegrationMoved
		}
		return nil
	}
	if len(cands) == 1 {
		c := cands[0]
		_, err := s.write(ctx, call, kindMerge, mergeInput{Task: c.task.ID, ReviewCommit: c.task.ReviewCommit, MergeCommit: c.merge.String(), IntegrationOld: base.String()}, live)
		return err
	}
	in := batchInput{IntegrationOld: base.String()}
	for _, c := range cands {
		in.Merges = append(in.Merges, batchMerge{Task: c.task.ID, ReviewCommit: c.task.ReviewCommit, MergeCommit: c.merge.String()})
	}
	_, err := s.write(ctx, call, kindMergeBatch, in, live)
	return err
}

// afterMerge removes a landed task's worktree and branch, as a merge does
// once it landed, and says why it kept them when it did.
func (s *Service) afterMerge(ctx context.Context, id string, review refstore.Hash, branch string) string {
	// A task branch still at the commit just merged has nothing the
	// integration branch lacks: no git merge-base need say so.
	check := branch
	if now, ok, err := s.Repo.ReadRef(worktree.BranchRef(id)); err == nil && ok && now == review {
		check = ""
	}
	cleanup := ""
	if err := worktree.Remove(ctx, s.Repo, id, check, false); err != nil {
		cleanup = fmt.Sprintf("worktree kept: %v", err)
	}
	if r := s.remote(); r != "" {
		// The task branch has served its purpose on the remote too.
		_ = s.Repo.Push(ctx, r, refstore.RefUpdate{Name: worktree.BranchRef(id), Old: review})
	}
	return cleanup
}

// batchFailure is the last failed test of a batch: what the task it
// isolates is recorded with.
type batchFailure struct {
	msg  string
	log  string
	tail []string
	ids  []string // the tasks the test ran on, in order
}

// reason is what the isolated task (the last of f.ids) is recorded
// INTEGRATION_FAILED with: the test's failure, the batch it was isolated
// from, and the last line of the test's output.
func (f *batchFailure) reason() string {
	r := f.msg
	if len(f.ids) > 1 {
		r += fmt.Sprintf(" with %s merged onto %s (bisected out of the batch)", f.ids[len(f.ids)-1], strings.Join(f.ids[:len(f.ids)-1], ", "))
	}
	if n := len(f.tail); n > 0 {
		last := contracts.Printable(strings.TrimSpace(f.tail[n-1]))
		if len(last) > 200 {
			last = last[:200] + "..."
		}
		if last != "" {
			r += ": " + last
		}
	}
	return r
}

func candIDs(cs []*candidate) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.task.ID
	}
	return ids
}

// dependsOnAny reports whether t depends on a task in ids.
func dependsOnAny(t *contracts.Task, ids map[string]bool) bool {
	for _, d := range t.DependsOn {
		if ids[d] {
			return true
		}
	}
	return false
}

// finishLanded does what a merge queue killed after a landing did not:
// removes the landed tasks' worktrees and branches (finishMerged), for
// the last landing (a batch, or a merge) among the board's last few
// operations.
func (s *Service) finishLanded(ctx context.Context) {
	var tip refstore.Hash
	var branch string
	if s.view(ctx, func(tx *cas.Tx) error {
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		tip, branch = tx.Snap.Commit, "refs/heads/"+m.Config.IntegrationBranch
		return nil
	}) != nil {
		return
	}
	for c, n := tip, 0; !c.IsZero() && n < 8; n++ {
		commit, err := s.Repo.ReadCommit(c)
		if err != nil {
			return
		}
		rec, err := ReadRecorded(commit.Message)
		var ids []string
		switch {
		case err != nil:
		case rec.Kind == kindMergeBatch.name:
			var in batchInput
			if json.Unmarshal(rec.Input, &in) == nil {
				ids = in.ids()
			}
		case rec.Kind == kindMerge.name:
			var in mergeInput
			if json.Unmarshal(rec.Input, &in) == nil {
				ids = []string{in.Task}
			}
		}
		if len(ids) > 0 {
			for _, id := range ids {
				if contracts.ValidTaskID(id) == nil {
					s.finishMerged(ctx, id, branch)
				}
			}
			return
		}
		if len(commit.Parents) == 0 {
			return
		}
		c = commit.Parents[0]
	}
}

// queueStep is the call of one write of a merge queue run by call: the
// run writes several state commits (landings, failures), each of which
// must be idempotent on its own, so each gets a request id of its own made
// of the run's and of what it records. A run killed and asked again with
// the same request id starts from the board, and a step it repeats with
// the same inputs changes nothing.
func queueStep(call Call, what string, ids ...string) Call {
	if call.RequestID == "" {
		return call
	}
	sum := sha1.Sum([]byte(what + " " + strings.Join(ids, " ")))
	id := call.RequestID
	if len(id) > 100 {
		whole := sha1.Sum([]byte(id))
		id = hex.EncodeToString(whole[:])
	}
	return Call{RequestID: id + ":" + what + ":" + hex.EncodeToString(sum[:])[:16]}
}
