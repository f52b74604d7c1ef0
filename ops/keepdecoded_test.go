package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// A board that keeps what it decoded (git liza board, git liza serve)
// shows, after every operation, what a fresh read of the same board
// shows: the tasks whole and in order, the counts, the alarms and the
// spend. A kept task that a reader changed, or one kept past its file's
// change, would show here as a difference.
func TestKeptBoardFollowsOperations(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	kept, err := ops.New(human.Repo, ops.Options{Clock: human.Now, KeepDecoded: true})
	if err != nil {
		t.Fatal(err)
	}
	// The same board, read as a fresh process reads it.
	fresh := func() *ops.Service {
		s, err := ops.New(human.Repo, ops.Options{Clock: human.Now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	coder1, coder2 := human.As("coder-1", 0), human.As("coder-2", 0)
	usage := contracts.Usage{Model: "gpt-5-codex", InputTokens: 20_000, OutputTokens: 1_000}
	desc := "reworded"
	prio := 1
	steps := []struct {
		what string
		do   func() error
	}{
		{"the first reads", func() error { return nil }},
		{"three tasks added", func() error {
			for _, id := range []string{"a", "b", "c"} {
				if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task(id)}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"a claimed", func() error {
			_, err := coder1.Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true})
			return err
		}},
		{"a session on a ended", func() error {
			_, err := coder1.SessionEnded(ctx, ops.SessionRequest{Task: "a", Outcome: ops.SessionIdle, Usage: &usage})
			return err
		}},
		{"b claimed and blocked", func() error {
			if _, err := coder2.Claim(ctx, ops.ClaimRequest{Task: "b", NoWorktree: true}); err != nil {
				return err
			}
			_, err := coder2.Block(ctx, ops.BlockRequest{Task: "b", Reason: "the spec says nothing", Questions: []string{"which API?"}})
			return err
		}},
		{"c edited", func() error {
			_, err := human.EditTask(ctx, ops.EditTaskRequest{Task: "c", Description: &desc, Priority: &prio})
			return err
		}},
		{"b unblocked", func() error {
			_, err := human.Unblock(ctx, ops.UnblockRequest{Task: "b"})
			return err
		}},
		{"c abandoned", func() error {
			_, err := human.Abandon(ctx, ops.AbandonRequest{Task: "c", Reason: "not needed"})
			return err
		}},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		for _, r := range []ops.StatusRequest{{}, {Limit: 1}} {
			got, err := kept.Status(ctx, r)
			if err != nil {
				t.Fatalf("%s: kept: %v", step.what, err)
			}
			want, err := fresh().Status(ctx, r)
			if err != nil {
				t.Fatalf("%s: fresh: %v", step.what, err)
			}
			if g, w := boardJSON(t, got), boardJSON(t, want); g != w {
				t.Fatalf("%s, limit %d: the kept board shows\n%s\na fresh read\n%s", step.what, r.Limit, g, w)
			}
		}
	}
	final, err := kept.Status(ctx, ops.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if final.Spend == nil || final.Spend.Sprint.Tokens == 0 || final.Counts[contracts.Abandoned] != 1 || final.Counts[contracts.Unclaimed] != 1 {
		t.Fatalf("the board does not show what the steps did: spend %+v, counts %v", final.Spend, final.Counts)
	}
}

// Readers of one kept board at once (the web board's pages) each get the
// board whole.
func TestKeptBoardReadersAtOnce(t *testing.T) {
	human, _ := newBoard(t)
	ctx := context.Background()
	for i := range 70 { // past the count from which tasks decode side by side
		if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task(fmt.Sprintf("t%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := ops.New(human.Repo, ops.Options{Clock: human.Now, KeepDecoded: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := human.Status(ctx, ops.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			b, err := kept.Status(ctx, ops.StatusRequest{})
			if err == nil && boardJSON(t, b) != boardJSON(t, want) {
				err = fmt.Errorf("a reader's board differs from a fresh read's")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func boardJSON(t *testing.T, b *ops.Board) string {
	t.Helper()
	out, err := json.MarshalIndent(b, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
