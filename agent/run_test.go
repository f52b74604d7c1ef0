package agent_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/commands"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// board makes a repository with a blackboard in a temporary directory and
// returns it and a function that runs git liza commands in it.
func board(t *testing.T) (*refstore.Repo, func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	for k, v := range map[string]string{
		"HOME": filepath.Join(dir, "home"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "Ada Operator", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Ada Operator", "GIT_COMMITTER_EMAIL": "ada@example.com",
		"LIZA_NOW": "2026-01-17T10:00:00Z", "LIZA_AGENT_ID": "", "LIZA_AGENT_GENERATION": "",
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
	liza := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		e := &commands.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Dir: root, Getenv: os.Getenv}
		if code := e.Run(context.Background(), append([]string{"git-liza"}, args...)); code != 0 {
			t.Fatalf("git liza %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	liza("init", "goal")
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return repo, liza
}

// TestStaleFromTheBoard: whether a refused command means the supervisor was
// replaced is read from the board, not from the refusal's wording.
func TestStaleFromTheBoard(t *testing.T) {
	repo, liza := board(t)
	liza("task", "add", "--id", "a", "--desc", "A", "--spec", "specs/vision.md", "--done", "d", "--scope", "s")
	liza("--agent", "coder-1", "supervise", "register")
	cfg := func(l agent.Liza) agent.Config {
		return agent.Config{ID: "coder-1", Role: contracts.RoleCoder, Generation: 1, Repo: repo, Root: repo.MainWorkTree(),
			Command: []string{"true"}, Liza: l, Log: io.Discard, AgentOut: io.Discard, Poll: 10 * time.Millisecond}
	}

	// A refusal that only sounds stale: the board still registers this
	// generation, so the supervisor carries on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var claims int
	err := agent.Run(ctx, cfg(func(_ context.Context, args ...string) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if slices.Contains(args, "claim") {
			if claims++; claims == 2 {
				cancel()
			}
			return nil, contracts.Errorf(contracts.CodeGit, "stale supervisor: a message that proves nothing")
		}
		return nil, nil
	}))
	if err != nil || claims != 2 {
		t.Fatalf("Run = %v after %d claims; want it to carry on and try again", err, claims)
	}

	// A refusal however worded, once a newer registration holds the id:
	// the supervisor stops as stale.
	err = agent.Run(context.Background(), cfg(func(_ context.Context, args ...string) ([]byte, error) {
		if slices.Contains(args, "claim") {
			liza("--agent", "coder-1", "supervise", "register", "--replace")
			return nil, contracts.Invalidf("refused")
		}
		return nil, nil
	}))
	if !errors.Is(err, agent.ErrStale) {
		t.Fatalf("Run = %v, want ErrStale", err)
	}
}
