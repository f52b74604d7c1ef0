package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// addArgs is one task add, with the same content the baseline script writes.
func addArgs(id string) []string {
	return []string{"--agent", "planner-1", "task", "add", "--id", id,
		"--desc", "Added task " + id, "--spec", "specs/vision.md",
		"--done", "tests pass", "--scope", "IN: src/" + id}
}

// taskID and coderID are the task run it claims and the coder claiming it
// (gen-state.py numbers its tasks from task-1).
func taskID(it int) string  { return fmt.Sprintf("task-%d", it+1) }
func coderID(it int) string { return fmt.Sprintf("coder-%d", it+1) }

// claimArgs is run it's claim, with or without a worktree.
func claimArgs(it int, noWorktree bool) []string {
	args := []string{"--agent", coderID(it), "claim", taskID(it)}
	if noWorktree {
		args = append(args, "--no-worktree")
	}
	return args
}

// seedFile writes dir/seed.yaml with n tasks, as gen-state.py prints it.
func (b *bench) seedFile(dir string, n int) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out, err := exec.Command("python3", filepath.Join(b.scripts, "gen-state.py"), strconv.Itoa(n)).Output()
	if err != nil {
		return "", fmt.Errorf("gen-state.py: %v", err)
	}
	// Every timed claim is one more task in flight: open the window (seed
	// 001's default is 12) so that the runs measure claims, not it.
	out = bytes.Replace(out, []byte("\nconfig:\n"), []byte("\nconfig:\n  max_in_flight: 100000\n"), 1)
	seed := filepath.Join(dir, "seed.yaml")
	return seed, os.WriteFile(seed, out, 0o644)
}

// newRepo makes a git repository at dir with specs/vision.md committed, and
// imports seed into refs/liza/state.
func (b *bench) newRepo(dir, seed string) error {
	if err := b.initRepo(dir); err != nil {
		return err
	}
	_, err := output(dir, b.env, "git", "liza", "import", seed)
	return err
}

// initRepo makes a git repository at dir with specs/vision.md committed;
// initArgs go to git init.
func (b *bench) initRepo(dir string, initArgs ...string) error {
	if err := os.MkdirAll(filepath.Join(dir, "specs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "specs", "vision.md"), []byte("# Vision\n\nRetry logic for all API calls.\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		append([]string{"init", "-q"}, initArgs...),
		{"config", "user.name", "Bench"},
		{"config", "user.email", "bench@liza.invalid"},
		{"config", "commit.gpgsign", "false"},
		{"add", "specs"},
		{"commit", "-q", "-m", "vision"},
	} {
		if _, err := output(dir, b.env, "git", args...); err != nil {
			return err
		}
	}
	return nil
}

// lifecycleRepo makes a repository holding a state of lifecycleTasks
// UNCLAIMED tasks.
func (b *bench) lifecycleRepo(repo string) error {
	seed, err := b.seedFile(filepath.Dir(repo), lifecycleTasks)
	if err != nil {
		return err
	}
	return b.newRepo(repo, seed)
}
