package ops_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// TestStatusFromIndexes: a board read from its indexes (a state known
// good, only the listed tasks and those that may raise an alarm read whole)
// says what the board read whole says: the same tasks in the same order
// with the same counts and alarms, and for the tasks it lists, the same
// descriptions and reasons.
func TestStatusFromIndexes(t *testing.T) {
	svc, root := newRepo(t) // the import is the board's first commit: it may bring finished tasks
	ctx := context.Background()
	var seed strings.Builder
	seed.WriteString("version: 1\ngoal: {id: goal-1, description: g, status: IN_PROGRESS, created: \"2026-01-17T09:00:00Z\"}\n")
	seed.WriteString("config: {integration_branch: integration, max_review_cycles: 3}\nsprint: {id: sprint-1, goal_ref: goal-1, status: IN_PROGRESS, timeline: {started: \"2026-01-17T09:00:00Z\"}}\nagents: {}\ntasks:\n")
	for i := 1; i <= 60; i++ {
		extra := ""
		switch i % 6 {
		case 0:
			extra = `, status: MERGED, merge_commit: 0000000000000000000000000000000000000001`
		case 1:
			extra = `, status: DRAFT`
		case 2:
			extra = `, status: UNCLAIMED, review_cycles_current: 2, review_cycles_total: 2`
		default:
			extra = `, status: UNCLAIMED`
		}
		fmt.Fprintf(&seed, "  - {id: t%d, description: 'task %d', priority: %d, spec_ref: specs/vision.md, done_when: d, scope: s, created: \"2026-01-17T09:%02d:00Z\", depends_on: [], iteration: 0, history: []%s}\n",
			i, i, i%5+1, i%60, extra)
	}
	if _, err := svc.Import(ctx, ops.ImportRequest{Data: []byte(seed.String()), Name: "seed.yaml"}); err != nil {
		t.Fatal(err)
	}
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	as := func(agent string) *ops.Service {
		s, err := ops.New(repo, ops.Options{Agent: agent, Clock: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i, id := range []string{"t3", "t4", "t5"} {
		if _, err := as(fmt.Sprintf("coder-%d", i+1)).Claim(ctx, ops.ClaimRequest{Task: id, NoWorktree: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := as("coder-2").Block(ctx, ops.BlockRequest{Task: "t4", Reason: "stuck on the spec", Questions: []string{"which?"}}); err != nil {
		t.Fatal(err)
	}
	// Half an hour on, the claims' leases are over: alarms.
	later, err := ops.New(repo, ops.Options{Clock: func() time.Time { return testNow.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := later.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !later.Store.KnownGood(snap.Commit) {
		t.Fatal("the tip this repository wrote is not known good")
	}
	for _, r := range []ops.StatusRequest{
		{Limit: 2}, {Limit: 1, BoardFilter: ops.BoardFilter{Statuses: []contracts.Status{contracts.Merged, contracts.Draft}}},
		{Limit: 10, BoardFilter: ops.BoardFilter{Agent: "coder-1"}}, {},
	} {
		lean, err := later.Status(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		full := ops.NewBoard(st, testNow.Add(time.Hour), r.BoardFilter)
		full.Archived, full.Anomalies = len(st.Archive), len(st.Anomalies)
		full.Alarms = contracts.Alarms(st, contracts.AlarmInput{Now: testNow.Add(time.Hour), LastChange: lastChange(t, later, snap.Commit)})
		if !reflect.DeepEqual(lean.Counts, full.Counts) || lean.Total != full.Total || lean.Archived != full.Archived || lean.Anomalies != full.Anomalies {
			t.Fatalf("%+v: counts %v %d %d %d, read whole %v %d %d %d", r, lean.Counts, lean.Total, lean.Archived, lean.Anomalies, full.Counts, full.Total, full.Archived, full.Anomalies)
		}
		if !reflect.DeepEqual(lean.Alarms, full.Alarms) {
			t.Fatalf("%+v: alarms\n%v\nread whole\n%v", r, lean.Alarms, full.Alarms)
		}
		if len(lean.Alarms) < 3 {
			t.Fatalf("only %d alarms: the board raises too few to test", len(lean.Alarms))
		}
		if len(lean.Tasks) != len(full.Tasks) {
			t.Fatalf("%+v: %d tasks, read whole %d", r, len(lean.Tasks), len(full.Tasks))
		}
		listed := 0
		for _, sec := range lean.Sections() {
			for i, got := range sec.Tasks {
				want := full.Tasks[listed+i]
				if i >= r.Limit && r.Limit > 0 || sec.Status.Terminal() && len(r.Statuses) == 0 && r.Limit > 0 {
					got.Description, got.Reason = want.Description, want.Reason
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%+v: task %d\n%+v\nread whole\n%+v", r, listed+i, got, want)
				}
			}
			listed += len(sec.Tasks)
		}
	}
}

func lastChange(t *testing.T, s *ops.Service, commit refstore.Hash) time.Time {
	t.Helper()
	c, err := s.Repo.ReadCommit(commit)
	if err != nil {
		t.Fatal(err)
	}
	return c.Committer.When
}
