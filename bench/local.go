package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

const (
	historyTasks   = 100  // tasks in both history repositories
	historyCommits = 1000 // commits on refs/liza/state in the long-history repository
	lifecycleTasks = 100  // tasks in the repositories of the worktree claim and merge timings
)

const historyGoal = 1.3 // long history may cost at most this times the short one

// measureHistory times `git liza task add` on two repositories holding the same
// state, one whose refs/liza/state has 2 commits and one with historyCommits.
func (b *bench) measureHistory() (historyResult, error) {
	progress(fmt.Sprintf("history: setting up %d and %d commits", 2, historyCommits))
	dir := filepath.Join(b.tmp, "history")
	seed, err := b.seedFile(dir, historyTasks)
	if err != nil {
		return historyResult{}, err
	}
	short, long := filepath.Join(dir, "short"), filepath.Join(dir, "long")
	for _, repo := range []string{short, long} {
		if err := b.newRepo(repo, seed); err != nil {
			return historyResult{}, err
		}
	}
	// The import is commit 1 and the warm-up add below is the last, so the long
	// history needs historyCommits-2 more commits (notes) between them.
	if err := b.padHistory(long, historyCommits-2); err != nil {
		return historyResult{}, err
	}
	r := historyResult{Tasks: historyTasks, Goal: historyGoal}
	for _, c := range []struct {
		repo    string
		commits *int
	}{{short, &r.ShortCommits}, {long, &r.LongCommits}} {
		// The first add after a tip git-liza did not write validates the whole
		// state once; that one-off cost is not what is measured here.
		if err := timeErr(command(c.repo, b.env, "git", append([]string{"liza"}, addArgs("warm-up")...)...)); err != nil {
			return r, err
		}
		out, err := output(c.repo, b.env, "git", "rev-list", "--count", "refs/liza/state")
		if err != nil {
			return r, err
		}
		*c.commits, _ = strconv.Atoi(out)
	}

	progress(fmt.Sprintf("history: timing %d+%d runs of each", warmups, b.opt.runs))
	samples, err := b.interleave([]func(id string) *exec.Cmd{
		func(id string) *exec.Cmd {
			return command(short, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		},
		func(id string) *exec.Cmd {
			return command(long, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		},
	})
	if err != nil {
		return r, err
	}
	r.Short, r.Long = summarize(samples[0]), summarize(samples[1])
	r.Ratio = r.Long.Median / r.Short.Median
	return r, nil
}

// measureClaimWorktree times `git liza claim ID` making .worktrees/ID on
// branch task/ID, in a state of lifecycleTasks tasks. The worktrees of the
// earlier runs stay, as a team's do.
func (b *bench) measureClaimWorktree() (soloResult, error) {
	progress("claim with worktree: setting up")
	repo := filepath.Join(b.tmp, "claim-worktree", "repo")
	if err := b.lifecycleRepo(repo); err != nil {
		return soloResult{}, err
	}
	progress(fmt.Sprintf("claim with worktree: timing %d+%d runs", warmups, b.opt.runs))
	samples, err := b.interleaveRuns([]func(it int) *exec.Cmd{
		func(it int) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, claimArgs(it, false)...)...)
		},
	})
	if err != nil {
		return soloResult{}, err
	}
	return soloResult{Tasks: lifecycleTasks, Command: "git liza --agent coder-N claim ID", Stats: summarize(samples[0])}, nil
}

// measureMerge times `git liza merge ID` of approved tasks. Every task is
// first claimed from the same integration tip, given one commit adding a file
// of its own in its worktree, submitted, reviewed and approved (untimed); then
// the tasks merge one after another, so after the first (a fast-forward, and a
// warm-up) each merge builds a merge commit with git merge-tree. Each merge
// also removes the task's worktree and branch.
func (b *bench) measureMerge() (soloResult, error) {
	total := warmups + b.opt.runs
	progress(fmt.Sprintf("merge: setting up %d approved tasks", total))
	repo := filepath.Join(b.tmp, "merge", "repo")
	if err := b.lifecycleRepo(repo); err != nil {
		return soloResult{}, err
	}
	for it := 0; it < total; it++ {
		id, coder := taskID(it), coderID(it)
		wt := filepath.Join(repo, ".worktrees", id)
		if _, err := output(repo, b.env, "git", append([]string{"liza"}, claimArgs(it, false)...)...); err != nil {
			return soloResult{}, err
		}
		if err := os.WriteFile(filepath.Join(wt, id+".txt"), []byte(id+"\n"), 0o644); err != nil {
			return soloResult{}, err
		}
		for _, args := range [][]string{
			{"-C", wt, "add", id + ".txt"},
			{"-C", wt, "commit", "-q", "-m", "work on " + id},
			{"liza", "--agent", coder, "submit", id},
			{"liza", "--agent", "code-reviewer-1", "review", id},
			{"liza", "--agent", "code-reviewer-1", "verdict", id, "approve"},
		} {
			if _, err := output(repo, b.env, "git", args...); err != nil {
				return soloResult{}, err
			}
		}
	}
	progress(fmt.Sprintf("merge: timing %d+%d runs", warmups, b.opt.runs))
	samples, err := b.interleaveRuns([]func(it int) *exec.Cmd{
		func(it int) *exec.Cmd {
			return command(repo, b.env, "git", "liza", "--agent", "code-reviewer-1", "merge", taskID(it))
		},
	})
	if err != nil {
		return soloResult{}, err
	}
	return soloResult{Tasks: lifecycleTasks, Command: "git liza --agent code-reviewer-1 merge ID", Stats: summarize(samples[0])}, nil
}

// padHistory adds n commits to refs/liza/state of repo: n notes, each a
// real git liza operation, since every commit must be one a clone can
// verify by doing its recorded operation again. Notes live in their own
// list, which the timed add does not read.
func (b *bench) padHistory(repo string, n int) error {
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1)); git liza note "pad $i" >/dev/null || exit 1; done`, n)
	if out, err := command(repo, b.env, "sh", "-c", script).CombinedOutput(); err != nil {
		return fmt.Errorf("padding the history: %v\n%s", err, out)
	}
	return nil
}
