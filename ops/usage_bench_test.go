package ops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// spendBoard imports a board of n tasks, every other one MERGED with one
// session's usage on it, and returns the operations on it.
func spendBoard(tb testing.TB, n int) *ops.Service {
	tb.Helper()
	root := testrepo.New(tb, nil)
	repo, err := refstore.Open(root)
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := ops.New(repo, ops.Options{Clock: func() time.Time { return testNow }, Budget: 5 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := svc.Import(context.Background(), ops.ImportRequest{Data: []byte(spendSeed(n)), Name: "spend.yaml"}); err != nil {
		tb.Fatal(err)
	}
	return svc
}

// spendSeed is a seed-format state of n tasks, every other one MERGED
// after a session that spent 6,500 tokens and $0.25.
func spendSeed(n int) string {
	var b strings.Builder
	b.WriteString(`version: 1
goal: {id: goal-1, description: "Retry every API call", spec_ref: specs/vision.md, status: IN_PROGRESS, created: "2026-01-16T09:00:00Z"}
config: {max_coder_iterations: 10, max_review_cycles: 5, lease_duration: 1800, heartbeat_interval: 60, integration_branch: integration}
sprint: {id: sprint-1, goal_ref: goal-1, status: IN_PROGRESS, scope: {planned: []}, timeline: {started: "2026-01-16T10:00:00Z"}}
agents: {}
tasks:
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {id: task-%d, description: \"Task %d, described at about the length of a real one\", priority: 2, created: \"2026-01-16T09:00:00Z\", spec_ref: specs/vision.md, done_when: tests pass, scope: \"IN: src/%d\", ", i, i, i)
		if i%2 == 1 {
			b.WriteString("status: UNCLAIMED, iteration: 0, history: []}\n")
			continue
		}
		b.WriteString(`status: MERGED, iteration: 1, assigned_to: coder-1, merge_commit: 0123456789abcdef0123456789abcdef01234567, history: [` +
			`{time: "2026-01-17T10:10:00Z", event: claimed, agent: coder-1}, ` +
			`{time: "2026-01-17T10:20:00Z", event: session_ended, agent: coder-1, outcome: done, usage: {model: claude-sonnet-4-5, input_tokens: 1000, output_tokens: 200, cache_read_tokens: 5000, cache_write_tokens: 300, cost_usd: 0.25, cost_source: reported}}, ` +
			`{time: "2026-01-17T11:30:00Z", event: merged, agent: coder-1}]}` + "\n")
	}
	return b.String()
}

// BenchmarkUsage10000 is git liza usage's work on a board of 10,000 tasks
// of which 5,000 ran a session.
func BenchmarkUsage10000(b *testing.B) {
	svc := spendBoard(b, 10000)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		rep, err := svc.Usage(ctx, ops.UsageRequest{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Total.Sessions != 5000 {
			b.Fatalf("%d sessions, want 5000", rep.Total.Sessions)
		}
	}
}

// BenchmarkUsage10000Cold is BenchmarkUsage10000 with no spend cache: the
// first report on a board, which reads every task file.
func BenchmarkUsage10000Cold(b *testing.B) {
	svc := spendBoard(b, 10000)
	ctx := context.Background()
	cache := filepath.Join(svc.Repo.CommonDir, "liza", "cache", "spend")
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := os.Remove(cache); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := svc.Usage(ctx, ops.UsageRequest{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Total.Sessions != 5000 {
			b.Fatalf("%d sessions, want 5000", rep.Total.Sessions)
		}
	}
}
