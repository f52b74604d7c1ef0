package ops_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
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
	// A board that keeps what it decoded (git liza board, git liza
	// serve), read again after each operation, as it is when the ref
	// moves: a task added each time.
	added := 0
	b.Run("status-kept", func(b *testing.B) {
		kept, err := ops.New(svc.Repo, ops.Options{Clock: func() time.Time { return testNow }, KeepDecoded: true})
		if err != nil {
			b.Fatal(err)
		}
		planner, err := ops.New(svc.Repo, ops.Options{Agent: "planner-1", Clock: func() time.Time { return testNow }})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := kept.Status(ctx, ops.StatusRequest{}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			b.StopTimer()
			added++
			if _, err := planner.AddTask(ctx, ops.AddTaskRequest{Task: contracts.Task{ID: fmt.Sprintf("kept-%d", added), Description: "d", SpecRef: "specs/vision.md", DoneWhen: "t", Scope: "IN: src/k", Priority: 2}}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := kept.Status(ctx, ops.StatusRequest{}); err != nil {
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
