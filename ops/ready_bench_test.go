package ops_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// BenchmarkReadyExpired is status --ready on a board of 10,000 UNCLAIMED
// tasks an hour after 150 coders claimed one each and went away: every
// one of those claims is listed last, as a claim takes them once nothing
// else is left. Asked once per such claim, the claim's pick used to walk
// the whole queue each time (3.4 s whole-process on such a board).
func BenchmarkReadyExpired(b *testing.B) {
	ctx := context.Background()
	root := testrepo.New(b, nil)
	repo, err := refstore.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	at := func(t time.Time) ops.Options {
		return ops.Options{Clock: func() time.Time { return t }, Budget: 5 * time.Second}
	}
	svc, err := ops.New(repo, at(testNow))
	if err != nil {
		b.Fatal(err)
	}
	seed := strings.Replace(spendSeed(0), "lease_duration: 1800,", "lease_duration: 1800, max_in_flight: 1000,", 1)
	var tasks strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&tasks, "  - {id: task-%d, description: \"Task %d\", priority: %d, created: \"2026-01-16T09:00:00Z\", spec_ref: specs/vision.md, done_when: tests pass, scope: \"IN: src/%d\", status: UNCLAIMED, iteration: 0, history: []}\n", i, i, 1+i%5, i)
	}
	if _, err := svc.Import(ctx, ops.ImportRequest{Data: []byte(seed + tasks.String()), Name: "ready.yaml"}); err != nil {
		b.Fatal(err)
	}
	for i := range 150 {
		if _, err := svc.As(fmt.Sprintf("coder-%d", i+1), 0).Claim(ctx, ops.ClaimRequest{NoWorktree: true}); err != nil {
			b.Fatal(err)
		}
	}
	late, err := ops.New(repo, at(testNow.Add(time.Hour)))
	if err != nil {
		b.Fatal(err)
	}
	late = late.As("coder-999", 0)
	ids, err := late.ReadyIDs(ctx)
	if err != nil || len(ids) != 10000 {
		b.Fatalf("%d tasks ready (%v), want all 10,000", len(ids), err)
	}
	for b.Loop() {
		if _, _, err := late.Ready(ctx, 20); err != nil {
			b.Fatal(err)
		}
	}
}
