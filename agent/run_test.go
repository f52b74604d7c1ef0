package agent_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// claimer is a Board that answers every claim with claim() and does the
// rest on the real blackboard.
type claimer struct {
	*ops.Service
	claim func() error
}

func (c claimer) Claim(context.Context, ops.ClaimRequest) (*ops.ClaimResult, error) {
	return nil, c.claim()
}

// TestStaleFromTheBoard: whether a refused operation means the supervisor
// was replaced is read from the board, not from the refusal's wording.
func TestStaleFromTheBoard(t *testing.T) {
	svc := agent.NewBoard(t)
	ctx := context.Background()
	if _, err := svc.AddTask(ctx, ops.AddTaskRequest{Task: contracts.Task{ID: "a", Description: "A", SpecRef: "specs/vision.md",
		DoneWhen: "d", Scope: "s", Priority: 3, Status: contracts.Unclaimed}}); err != nil {
		t.Fatal(err)
	}
	coder := svc.As("coder-1", 0)
	reg, err := coder.Register(ctx, ops.RegisterRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(claim func() error) agent.Config {
		return agent.Config{ID: "coder-1", Role: contracts.RoleCoder, Generation: reg.Generation, Repo: svc.Repo, Root: svc.Repo.MainWorkTree(),
			Launch: agent.Launch{Command: []string{"true"}}, Board: claimer{svc.As("coder-1", reg.Generation), claim}, Log: io.Discard, AgentOut: io.Discard, Poll: 10 * time.Millisecond}
	}

	// A refusal that only sounds stale: the board still registers this
	// generation, so the supervisor carries on.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var claims int
	err = agent.Run(ctx, cfg(func() error {
		mu.Lock()
		defer mu.Unlock()
		if claims++; claims == 2 {
			cancel()
		}
		return contracts.Errorf(contracts.CodeGit, "stale supervisor: a message that proves nothing")
	}))
	if err != nil || claims != 2 {
		t.Fatalf("Run = %v after %d claims; want it to carry on and try again", err, claims)
	}

	// A refusal however worded, once a newer registration holds the id:
	// the supervisor stops as stale.
	err = agent.Run(context.Background(), cfg(func() error {
		if _, err := coder.Register(context.Background(), ops.RegisterRequest{Replace: true}); err != nil {
			t.Error(err)
		}
		return contracts.Invalidf("refused")
	}))
	if !errors.Is(err, agent.ErrStale) {
		t.Fatalf("Run = %v, want ErrStale", err)
	}
}
