package ops_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

// An operation that changes thousands of entities (an import of a large
// board) made a log entry of megabytes with its changes: the web board's
// log page showed 34 MB and took 4.4 s on a board of 50,000 tasks. A log
// read with MaxChanges diffs that many entities an entry and counts the
// rest.
func TestLogBoundsAnEntrysChanges(t *testing.T) {
	svc, _ := newRepo(t)
	ctx := context.Background()
	var seed strings.Builder
	seed.WriteString("version: 1\ngoal: {id: goal-1, description: g, status: IN_PROGRESS, created: \"2026-01-17T09:00:00Z\"}\n")
	seed.WriteString("config: {integration_branch: integration, max_review_cycles: 3}\nsprint: {id: sprint-1, goal_ref: goal-1, status: IN_PROGRESS, timeline: {started: \"2026-01-17T09:00:00Z\"}}\nagents: {}\ntasks:\n")
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&seed, "  - {id: t%d, description: 'task %d', priority: 3, spec_ref: specs/vision.md, done_when: d, scope: s, created: \"2026-01-17T09:00:00Z\", depends_on: [], iteration: 0, history: [], status: UNCLAIMED}\n", i, i)
	}
	if _, err := svc.Import(ctx, ops.ImportRequest{Data: []byte(seed.String()), Name: "seed.yaml"}); err != nil {
		t.Fatal(err)
	}
	whole, err := svc.Log(ctx, ops.LogRequest{Max: 1, Patch: true})
	if err != nil || len(whole) != 1 {
		t.Fatalf("log: %v %d", err, len(whole))
	}
	all := len(whole[0].Changes)
	if all <= 150 || whole[0].MoreChanges != 0 {
		t.Fatalf("the import's entry has %d changes and %d more; want every task's", all, whole[0].MoreChanges)
	}
	bounded, err := svc.Log(ctx, ops.LogRequest{Max: 1, Patch: true, MaxChanges: 100})
	if err != nil || len(bounded) != 1 {
		t.Fatalf("log: %v %d", err, len(bounded))
	}
	if got := bounded[0]; len(got.Changes) != 100 || got.MoreChanges != all-100 {
		t.Errorf("bounded to 100: %d changes and %d more, want 100 and %d", len(got.Changes), got.MoreChanges, all-100)
	}
	for i, c := range bounded[0].Changes {
		if w := whole[0].Changes[i]; c.Kind != w.Kind || c.ID != w.ID || c.Change != w.Change {
			t.Fatalf("change %d: %s %s %s, want the whole log's %s %s %s", i, c.Kind, c.ID, c.Change, w.Kind, w.ID, w.Change)
		}
	}
}
