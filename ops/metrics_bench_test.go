package ops_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// BenchmarkSprintMetrics is git liza sprint metrics on boards of 1,000 and
// 10,000 tasks (half of them MERGED): the whole read and recomputation
// that a merge under rule set 4 adds to what it costs (metricsAtMerge).
func BenchmarkSprintMetrics(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tasks-%d", n), func(b *testing.B) {
			svc := spendBoard(b, n)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				if _, err := svc.SprintMetrics(ctx, ops.Call{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMerge10000 is one merge on a board of 10,000 tasks under rule
// set 3 (the merge added its task to the stored metrics) and under the
// current rules (it recomputes them from the whole board). Each merge's
// task is claimed, checkpointed, submitted and approved outside the timer.
func BenchmarkMerge10000(b *testing.B) {
	for _, c := range []struct {
		name  string
		rules int
	}{{"rules-3", contracts.RulesContained}, {"current", contracts.Rules}} {
		b.Run(c.name, func(b *testing.B) {
			human := spendBoard(b, 10000).UnderRules(c.rules)
			root := human.Repo.MainWorkTree()
			ctx := context.Background()
			as := func(agent string) *ops.Service { return human.As(agent, 0) }
			for i := range b.N {
				b.StopTimer()
				id := fmt.Sprintf("m%d", i)
				steps := []func() error{
					func() error { _, err := as("planner-1").AddTask(ctx, ops.AddTaskRequest{Task: task(id)}); return err },
					func() error { _, err := as("coder-1").Claim(ctx, ops.ClaimRequest{Task: id}); return err },
					func() error {
						_, err := as("coder-1").Checkpoint(ctx, ops.CheckpointRequest{Task: id, Checkpoint: contracts.Checkpoint{
							Intent: "write it", Validation: "read it", FilesToModify: contracts.StringList{id + ".txt"}}})
						return err
					},
					func() error { commitIn(b, root, id, id+".txt", id); return nil },
					func() error { _, err := as("coder-1").Submit(ctx, ops.SubmitRequest{Task: id}); return err },
					func() error { _, err := as("code-reviewer-1").Review(ctx, ops.ReviewRequest{Task: id}); return err },
					func() error {
						_, err := as("code-reviewer-1").Verdict(ctx, ops.VerdictRequest{Task: id, Approve: true})
						return err
					},
				}
				for _, step := range steps {
					if err := step(); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if _, err := as("code-reviewer-1").Merge(ctx, ops.MergeRequest{Task: id}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
