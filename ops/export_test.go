package ops

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// UnderRules is a copy of s whose writes follow an older rule set, as an
// older git-liza made them: what the tests of an upgrade build old boards
// with.
func (s *Service) UnderRules(rules int) *Service {
	c := *s
	c.rules = rules
	return &c
}

// SendBack records that task id, awaiting review, does not merge onto the
// integration tip, without checking: what a reviewer's forged write would
// say.
func (s *Service) SendBack(id, integ, reason string) error {
	var review string
	if err := s.view(context.Background(), func(tx *cas.Tx) error {
		t, err := tx.MustTask(id)
		if t != nil {
			review = t.ReviewCommit
		}
		return err
	}); err != nil {
		return err
	}
	_, err := s.write(context.Background(), Call{}, kindConflictReview, conflictInput{Task: id, ReviewCommit: review, Integration: integ,
		Reason: reason, Checked: contracts.CheckedReview}, nil)
	return err
}

// BisectPlan replays the merge queue's bisection of n tasks, 0 to n-1,
// where the test fails on any run that holds a task of breaks: the runs
// in order (each as the tasks it tested), the tasks that landed, in
// order, and those isolated as failing.
func BisectPlan(n int, breaks map[int]bool) (runs [][]int, landed, failed []int) {
	pending := make([]int, n)
	for i := range pending {
		pending[i] = i
	}
	b := &bisection{pending: n}
	for {
		step, ok := b.next()
		if !ok {
			return runs, landed, failed
		}
		if step.Isolate {
			failed = append(failed, pending[0])
			pending = pending[1:]
			b.isolated()
			continue
		}
		tested := append([]int(nil), pending[:step.Test]...)
		runs = append(runs, tested)
		fails := false
		for _, i := range tested {
			fails = fails || breaks[i]
		}
		if fails {
			b.failed(step.Test)
			continue
		}
		landed = append(landed, tested...)
		pending = pending[step.Test:]
		b.passed(step.Test)
	}
}

// QueueOrder is queueOrder for the tests: ids in the order they merge,
// and those left waiting, of tasks given as "id|priority|approved|deps"
// (deps comma-separated).
func QueueOrder(tasks []string, merged []string, cap int) (order, waiting []string) {
	var in []queueTask
	for _, s := range tasks {
		f := strings.SplitN(s, "|", 4)
		p, _ := strconv.Atoi(f[1])
		t := queueTask{ID: f[0], Priority: p, Approved: f[2]}
		if f[3] != "" {
			t.DependsOn = strings.Split(f[3], ",")
		}
		in = append(in, t)
	}
	o, w := queueOrder(in, func(id string) bool { return slices.Contains(merged, id) }, cap)
	for _, t := range o {
		order = append(order, t.ID)
	}
	for _, t := range w {
		waiting = append(waiting, t.ID)
	}
	return order, waiting
}

// WriteBatch writes a batch of merges as the service's agent, with no
// check of git's: what a forger who has write access to the state would
// record. merges are task, review commit, merge commit.
func (s *Service) WriteBatch(ctx context.Context, old string, merges [][3]string) error {
	in := batchInput{IntegrationOld: old}
	for _, m := range merges {
		in.Merges = append(in.Merges, batchMerge{Task: m[0], ReviewCommit: m[1], MergeCommit: m[2]})
	}
	_, err := s.write(ctx, Call{}, kindMergeBatch, in, nil)
	return err
}

// InFlightChanges is what a claim of the best task reads of the branches
// in flight now: the files each task's branch changes, by task.
func (s *Service) InFlightChanges(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	err := s.view(ctx, func(tx *cas.Tx) error {
		idx, err := tx.InFlight()
		if err != nil {
			return err
		}
		changes, err := s.inFlightChanges(ctx, tx, idx)
		for _, c := range changes {
			out[c.task] = c.files
		}
		return err
	})
	return out, err
}

// ChangesCachePath is where that is kept between claims.
func (s *Service) ChangesCachePath() string { return s.changesCachePath() }

// CheckTaskFacts is checkTaskFacts, for the tests.
func (s *Service) CheckTaskFacts(ctx context.Context, t *contracts.Task, integ, review refstore.Hash) error {
	return s.checkTaskFacts(ctx, t, contracts.Rules, integ, review)
}
