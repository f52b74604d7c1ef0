package ops_test

import (
	"context"
	"fmt"
	"testing"

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
