package ops_test

import (
	"context"
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

// BenchmarkBoardLoad10000 is what git liza board reads each time
// refs/liza/state moves, on a board of 10,000 tasks (half of them
// MERGED): the board, the latest operations and what a coder could claim
// now. It runs on the board's own goroutine, never on a key press.
func BenchmarkBoardLoad10000(b *testing.B) {
	svc := spendBoard(b, 10000)
	ctx := context.Background()
	b.Run("status", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Status(ctx, ops.StatusRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status-limit-100", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Status(ctx, ops.StatusRequest{Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("log-8", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Log(ctx, ops.LogRequest{Max: 8}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ready", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.ReadyIDs(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
