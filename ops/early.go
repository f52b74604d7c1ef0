package ops

// Conflicts caught early (issue 28): a commit submitted for review is
// merged, with git merge-tree and without any checkout, onto the
// integration tip and the tasks APPROVED ahead of it, when it is submitted
// and again before a reviewer's session starts. One that does not merge
// goes back to its coder at once as an integration fix, with the
// conflicting files named, and no review session is spent on it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// queued is an APPROVED task merged ahead of the one checked.
type queued struct {
	id     string
	commit refstore.Hash
}

// mergeCheck is what a merge check found.
type mergeCheck struct {
	integration refstore.Hash
	ahead       []string // the approved tasks merged first, in queue order
	with        string   // the task ahead it conflicts with; "" for the integration tip
	conflicts   []string // as git spelled them
	more        int
}

func (c *mergeCheck) conflicted() bool { return len(c.conflicts) > 0 || c.more > 0 }

// reason is what the coder reads: the files, escaped for a terminal (a
// file name is the agent's to choose), and what they conflict with.
func (c *mergeCheck) reason(branch string) string {
	names := make([]string, len(c.conflicts))
	for i, n := range c.conflicts {
		names[i] = contracts.Printable(n)
	}
	files := strings.Join(names, ", ")
	switch {
	case c.more > 0 && files == "":
		files = fmt.Sprintf("%d files", c.more)
	case c.more > 0:
		files += fmt.Sprintf(" and %d more files", c.more)
	}
	with := contracts.Printable(branch)
	if c.with != "" {
		with = withTask + c.with + aheadOfIt
	}
	return "merge conflict in " + files + " with " + with
}

// How a reason names the task ahead a commit conflicts with.
const (
	withTask  = "task "
	aheadOfIt = ", approved ahead of it"
)

// ConflictAhead is the task approved ahead of t that t was sent back for
// conflicting with, when that is why t is INTEGRATION_FAILED (its last
// move); "" otherwise. Until that task is merged, the integration tip an
// integration fix starts from lacks it, and the fix has nothing to merge.
func ConflictAhead(t *contracts.Task) string {
	e := sendBackEvent(t)
	if e == nil {
		return ""
	}
	rest, ok := strings.CutSuffix(e.Reason, aheadOfIt)
	if !ok {
		return ""
	}
	// Task ids hold no spaces; file names, escaped, come before.
	if j := strings.LastIndex(rest, " with "+withTask); j >= 0 {
		return rest[j+len(" with "+withTask):]
	}
	return ""
}

// checkMerges merges review onto integ, then onto integ with the commits
// ahead merged in order. A task ahead that does not merge onto what comes
// before it is left out: its own merge will fail, not this one's. The
// merges ahead are written as commits (merge-tree merges commits), which
// nothing refers to and git's gc removes.
func (s *Service) checkMerges(ctx context.Context, integ, review refstore.Hash, ahead []queued) (*mergeCheck, error) {
	c := &mergeCheck{integration: integ}
	m, err := s.Repo.MergeCheck(ctx, integ, review)
	if err != nil {
		return nil, err
	}
	if m.Conflicted() {
		c.conflicts, c.more = m.Conflicts, m.More
		return c, nil
	}
	type stacked struct {
		id  string
		tip refstore.Hash
	}
	var stack []stacked
	cur := integ
	for _, q := range ahead {
		if !s.Repo.HasObject(q.commit) {
			continue
		}
		m, err := s.Repo.MergeCheck(ctx, cur, q.commit)
		if err != nil {
			return nil, err
		}
		if m.Conflicted() {
			continue
		}
		// The same commits make the same ids: checks of the same queue
		// write nothing new.
		sig := refstore.Signature{Name: "git-liza", Email: "git-liza@liza.invalid", When: time.Unix(0, 0).UTC()}
		tip, err := s.Repo.WriteCommit(m.Tree, []refstore.Hash{cur, q.commit}, sig, "liza: merge check of "+q.id+"\n")
		if err != nil {
			return nil, err
		}
		cur = tip
		stack = append(stack, stacked{q.id, tip})
		c.ahead = append(c.ahead, q.id)
	}
	if len(stack) == 0 {
		return c, nil
	}
	if m, err = s.Repo.MergeCheck(ctx, cur, review); err != nil || !m.Conflicted() {
		return c, err
	}
	// Which task ahead it conflicts with: the first whose merge makes it
	// conflict (the last one does, at worst).
	for _, st := range stack {
		m, err := s.Repo.MergeCheck(ctx, st.tip, review)
		if err != nil {
			return nil, err
		}
		if m.Conflicted() {
			c.with, c.conflicts, c.more = st.id, m.Conflicts, m.More
			break
		}
	}
	return c, nil
}

// approvedAhead lists the APPROVED tasks other than id in the order the
// merge queue takes them (approvedInOrder), with the commits they were
// approved at.
func approvedAhead(tx *cas.Tx, id string) ([]queued, error) {
	order, tasks, err := approvedInOrder(tx, 0, func(t *contracts.Task) bool { return t.ID != id })
	if err != nil {
		return nil, err
	}
	var out []queued
	for _, q := range order {
		if h, ok := refstore.ParseHash(tasks[q.ID].ReviewCommit); ok {
			out = append(out, queued{q.ID, h})
		}
	}
	return out, nil
}

// screen checks the task awaiting review id, as the board has it now,
// and sends it back to its coder when it does not merge. checked says
// where (contracts.CheckedSubmit or CheckedReview). It returns the reason
// when it sent the task back, "" when the task merges (or is no longer
// awaiting review at the commit checked).
func (s *Service) screen(ctx context.Context, id, checked string) (string, *cas.Result, error) {
	for try := 0; ; try++ {
		reason, res, err := s.screenOnce(ctx, id, checked)
		// A merge that landed meanwhile is merged onto in the next check;
		// a task that moved meanwhile is looked at again.
		if (errors.Is(err, errIntegrationMoved) || errors.Is(err, errTaskMoved)) && try < 3 {
			continue
		}
		if errors.Is(err, errUnderReview) {
			return "", nil, nil
		}
		if errors.Is(err, errTaskMoved) {
			err = contracts.Errorf(contracts.CodeContention, "task %s kept moving while its merge was checked; try again", id)
		}
		return reason, res, err
	}
}

// errTaskMoved means the task checked was sent back, or submitted anew,
// while its merge was checked.
var errTaskMoved = errors.New("task moved")

// errUnderReview means a reviewer took the task while its coder's check
// at submit ran (the submission is recorded first, then checked): the
// task is not pulled from under its review. A reviewer's supervisor
// checked it before taking it, and checks it again if it resumes the
// review.
var errUnderReview = errors.New("task under review")

// underReview reports whether a reviewer (by) holds a task's review, its
// lease (until expires) not over.
func underReview(tx *cas.Tx, by, expires string) bool {
	return by != "" && !tx.LeaseEnded(expires)
}

func (s *Service) screenOnce(ctx context.Context, id, checked string) (string, *cas.Result, error) {
	var t *contracts.Task
	var ahead []queued
	var branch, recorded string
	if err := s.view(ctx, func(tx *cas.Tx) error {
		var err error
		if t, err = tx.MustTask(id); err != nil {
			return err
		}
		if checked == contracts.CheckedSubmit && underReview(tx, t.ReviewingBy, t.ReviewLeaseExpires) {
			return errUnderReview
		}
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		branch, recorded = m.Config.IntegrationBranch, m.Config.IntegrationTip
		ahead, err = approvedAhead(tx, id)
		return err
	}); err != nil {
		return "", nil, err
	}
	review, ok := refstore.ParseHash(t.ReviewCommit)
	if t.Status != contracts.ReadyForReview || !ok {
		// The coder's check says so when the reviewer's sent its
		// submission back first.
		if checked == contracts.CheckedSubmit {
			return sentBack(t), nil, nil
		}
		return "", nil, nil
	}
	// In remote mode the commits of other machines' coders arrive with
	// their task branches, fetched together.
	var want []string
	if !s.Repo.HasObject(review) {
		want = append(want, worktree.BranchRef(id))
	}
	for _, q := range ahead {
		if !s.Repo.HasObject(q.commit) {
			want = append(want, worktree.BranchRef(q.id))
		}
	}
	if r := s.remote(); r != "" && len(want) > 0 {
		if _, err := s.Repo.Fetch(ctx, r, want...); err != nil {
			return "", nil, err
		}
	}
	if !s.Repo.HasObject(review) {
		return "", nil, nil
	}
	// The tip the board records is where the next merge starts (and what
	// a guarded remote checks the send-back against); a board that
	// records none, or whose commit is not here yet, has its branch read.
	integ, ok := refstore.ParseHash(recorded)
	if !ok || !s.Repo.HasObject(integ) {
		var err error
		if integ, err = s.integrationTip(ctx, branch); err != nil {
			return "", nil, err
		}
	}
	// Nothing landed since the task started and nothing waits ahead of
	// it: the commit, which descends from its base, merges as it is.
	if len(ahead) == 0 && t.BaseCommit == integ.String() {
		return "", nil, nil
	}
	c, err := s.checkMerges(ctx, integ, review, ahead)
	if err != nil || !c.conflicted() {
		return "", nil, err
	}
	in := conflictInput{Task: id, ReviewCommit: t.ReviewCommit, Integration: integ.String(), Ahead: c.ahead,
		Reason: c.reason(branch), Checked: checked}
	k := kindConflictReview
	if checked == contracts.CheckedSubmit {
		k = kindConflictSubmit
	}
	res, err := s.write(ctx, Call{}, k, in, func(tx *cas.Tx) error {
		// What was merged onto must still be what the board records: a
		// guarded remote checks the same (conflictFacts).
		m, err := tx.Meta()
		if err != nil {
			return err
		}
		if tip := m.Config.IntegrationTip; tip != "" && tip != in.Integration {
			return errIntegrationMoved
		}
		// The task sent back meanwhile (the coder's check and the
		// reviewer's race) is looked at again.
		now, err := tx.MustTask(id)
		if err != nil {
			return err
		}
		if now.Status != contracts.ReadyForReview || now.ReviewCommit != in.ReviewCommit {
			return errTaskMoved
		}
		if checked == contracts.CheckedSubmit && underReview(tx, now.ReviewingBy, now.ReviewLeaseExpires) {
			return errUnderReview
		}
		// And the tasks merged ahead are still APPROVED at their commits
		// (a merge of one may have failed meanwhile).
		queue, err := approvedAhead(tx, id)
		if err != nil {
			return err
		}
		commits := map[string]refstore.Hash{}
		for _, q := range queue {
			commits[q.id] = q.commit
		}
		for _, q := range ahead {
			if slices.Contains(in.Ahead, q.id) && commits[q.id] != q.commit {
				return errIntegrationMoved
			}
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return in.Reason, res, nil
}

// CheckMergesRequest asks whether a task awaiting review still merges.
type CheckMergesRequest struct {
	Task string
}

// CheckMergesResult is what a merge check did: Conflict is the reason the
// task went back to its coder, empty when it merges.
type CheckMergesResult struct {
	ID       string
	Author   string
	Conflict string
	Written
}

// CheckMerges is the check a reviewer runs before it spends a session on
// a task: one that no longer merges onto the integration tip and the
// tasks approved ahead of it goes back to its coder as an integration fix.
func (s *Service) CheckMerges(ctx context.Context, r CheckMergesRequest) (*CheckMergesResult, error) {
	if err := contracts.ValidTaskID(r.Task); err != nil {
		return nil, err
	}
	if err := contracts.Permit(s.Agent, contracts.OpReview); err != nil {
		return nil, err
	}
	reason, res, err := s.screen(ctx, r.Task, contracts.CheckedReview)
	if err != nil {
		return nil, err
	}
	out := &CheckMergesResult{ID: r.Task, Conflict: reason}
	if res != nil {
		out.Written = written(res)
		if v, err := decode[map[string]string](res); err == nil {
			out.Author = v["author"]
		}
	}
	return out, nil
}

// conflictInput is what sending a task back before review records: the
// commit that does not merge, the integration tip and the approved tasks
// (in queue order) it was merged onto, and the reason its coder reads.
type conflictInput struct {
	Task         string   `json:"task"`
	ReviewCommit string   `json:"review_commit"`
	Integration  string   `json:"integration"`
	Ahead        []string `json:"ahead,omitempty"`
	Reason       string   `json:"reason"`
	Checked      string   `json:"checked"`
}

// The coder's own submission is sent back under its submit permission,
// a task awaiting review under the reviewer's review permission.
var (
	kindConflictSubmit = def("conflict_at_submit", contracts.OpSubmit, applyConflict)
	kindConflictReview = def("conflict_before_review", contracts.OpReview, applyConflict)
)

func init() {
	withFacts(kindConflictSubmit, conflictFacts)
	withFacts(kindConflictReview, conflictFacts)
}

// maxConflictReason bounds the recorded reason: 20 names of 512 bytes,
// escaped, fit.
const maxConflictReason = 48 << 10

func applyConflict(tx *cas.Tx, in *conflictInput) (any, error) {
	actor := tx.Actor
	t, err := tx.MustTask(in.Task)
	if err != nil {
		return nil, err
	}
	if t.Status != contracts.ReadyForReview || t.ReviewCommit != in.ReviewCommit {
		return nil, contracts.Invalidf("task %s changed while its merge was checked (now %s); nothing sent back", t.ID, t.Status)
	}
	if _, ok := refstore.ParseHash(in.Integration); !ok {
		return nil, contracts.Invalidf("a merge check records the full id of the integration tip it merged onto")
	}
	if !strings.HasPrefix(in.Reason, "merge conflict in ") || len(in.Reason) > maxConflictReason || !contracts.IsPrintable(in.Reason, false) {
		return nil, contracts.Invalidf("a merge check records the conflicting files, on one printable line")
	}
	switch in.Checked {
	case contracts.CheckedSubmit:
		if t.AssignedTo != actor {
			return nil, contracts.Invalidf("only the coder who submitted task %s sends it back at submit", t.ID)
		}
	case contracts.CheckedReview:
		if t.AssignedTo == actor {
			return nil, contracts.Invalidf("%s wrote task %s and cannot check it for review", actor, t.ID)
		}
		if t.ReviewingBy != actor && underReview(tx, t.ReviewingBy, t.ReviewLeaseExpires) {
			return nil, contracts.Invalidf("task %s is under review by %s", t.ID, t.ReviewingBy)
		}
	default:
		return nil, contracts.Invalidf("a merge check is made at submit or before review, not %q", in.Checked)
	}
	if err := contracts.CheckTransition(t.ID, t.Status, contracts.IntegrationFailed); err != nil {
		return nil, err
	}
	reviewer := t.ReviewingBy
	t.Status = contracts.IntegrationFailed
	t.ApprovedBy, t.ReviewingBy, t.ReviewLeaseExpires = "", "", ""
	t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "integration_failed", Agent: actor,
		From: string(contracts.ReadyForReview), To: string(contracts.IntegrationFailed), Reason: in.Reason, Commit: t.ReviewCommit,
		Extra: contracts.Extra{contracts.ConflictChecked: in.Checked}})
	tx.PutTask(t)
	if reviewer != "" && tx.Rules >= contracts.RulesWhole {
		if err := idleAgent(tx, reviewer, t.ID); err != nil {
			return nil, err
		}
	}
	tx.Describe(fmt.Sprintf("integration failed for %s before review (%s)", t.ID, actor), t.ID)
	return map[string]string{"id": t.ID, "author": t.AssignedTo, "reason": in.Reason}, nil
}

// conflictFacts checks, where the write is verified, that the task does
// not merge: onto the integration tip the board records, after the tasks
// named ahead, each APPROVED at its commit. Nothing an agent wrote is
// taken on trust but the commits.
func conflictFacts(ctx context.Context, v *Verifier, parent *cas.Tx, in *conflictInput) error {
	integ, _ := refstore.ParseHash(in.Integration)
	review, _ := refstore.ParseHash(in.ReviewCommit)
	m, err := parent.Meta()
	if err != nil {
		return err
	}
	if tip := m.Config.IntegrationTip; tip != "" && tip != in.Integration {
		return fmt.Errorf("the merge check merged onto %s, but the board records the integration branch at %s", short(in.Integration), short(tip))
	}
	var ahead []queued
	for _, id := range in.Ahead {
		t, err := parent.Task(id)
		if err != nil {
			return err
		}
		if t == nil || t.Status != contracts.Approved {
			return fmt.Errorf("the merge check merged %s ahead, which is not APPROVED", id)
		}
		h, ok := refstore.ParseHash(t.ReviewCommit)
		if !ok {
			return fmt.Errorf("the merge check merged %s ahead, which has no approved commit", id)
		}
		ahead = append(ahead, queued{id, h})
	}
	ids := []refstore.Hash{integ, review}
	for _, q := range ahead {
		ids = append(ids, q.commit)
	}
	if !v.has(ids...) {
		return v.missing("the commits of the merge check of " + in.Task)
	}
	c, err := (&Service{Repo: v.Repo}).checkMerges(ctx, integ, review, ahead)
	if err != nil {
		return err
	}
	if !c.conflicted() {
		return fmt.Errorf("task %s merges onto %s: nothing to send back", in.Task, short(in.Integration))
	}
	return nil
}

// sentBack is the reason t's submission was sent back before review, at
// submit or by a reviewer's check, when that is why it is
// INTEGRATION_FAILED (its last move).
func sentBack(t *contracts.Task) string {
	if e := sendBackEvent(t); e != nil && e.Commit == t.ReviewCommit {
		return e.Reason
	}
	return ""
}

// sendBackEvent is the event that sent INTEGRATION_FAILED t back before
// review, when that was its last move (a session's end, a checkpoint,
// may follow it); nil otherwise.
func sendBackEvent(t *contracts.Task) *contracts.HistoryEvent {
	if t.Status != contracts.IntegrationFailed {
		return nil
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		e := t.History[i]
		if e == nil || e.To == "" {
			continue
		}
		if e.Event != "integration_failed" || e.From != string(contracts.ReadyForReview) {
			return nil
		}
		return e
	}
	return nil
}
