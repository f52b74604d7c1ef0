package ops_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

// BenchmarkBestClaimWindowFull is a coder asking for work on a board of
// 10,000 tasks (5,000 UNCLAIMED) while the in-flight window is full, as
// every idle coder of a busy team does at each poll: the answer is no
// task, and why, without reading the queue.
func BenchmarkBestClaimWindowFull(b *testing.B) {
	svc := spendBoard(b, 10000)
	ctx := context.Background()
	for i := range 12 {
		if _, err := svc.As(fmt.Sprintf("coder-%d", i+1), 0).Claim(ctx, ops.ClaimRequest{NoWorktree: true}); err != nil {
			b.Fatal(err)
		}
	}
	idle := svc.As("coder-13", 0)
	for b.Loop() {
		_, err := idle.Claim(ctx, ops.ClaimRequest{NoWorktree: true})
		if err == nil || !strings.Contains(err.Error(), "max_in_flight is 12") {
			b.Fatalf("a claim with the window full: %v", err)
		}
	}
}
