package agent_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// board makes a repository with a blackboard in a temporary directory and
// returns the operations on it, for the human operator.
func board(t *testing.T) *ops.Service {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	for k, v := range map[string]string{
		"HOME": filepath.Join(dir, "home"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "Ada Operator", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Ada Operator", "GIT_COMMITTER_EMAIL": "ada@example.com",
	} {
		t.Setenv(k, v)
	}
	root := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(root, "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "specs", "vision.md"), []byte("# Vision\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "specs"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	svc, err := ops.New(repo, ops.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Init(context.Background(), ops.InitRequest{Goal: "goal"}); err != nil {
		t.Fatal(err)
	}
	return svc
}

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
	svc := board(t)
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
