package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// claimsResult is, on a board of Tasks UNCLAIMED tasks, the floor (git's
// dispatch to an empty Go program plus one git update-ref) against a
// claim by id, a claim of the best task and a task add, interleaved.
type claimsResult struct {
	Tasks     int     `json:"tasks"`
	Dispatch  stats   `json:"dispatch"`
	UpdateRef stats   `json:"update_ref"`
	Floor     float64 `json:"floor_ms"`
	// Linked is git's dispatch to git-liza-linked (a program linking
	// git-liza's packages that runs no command) plus the update-ref: the
	// floor of any command of a program made of those packages.
	LinkedDispatch stats   `json:"linked_dispatch"`
	Linked         float64 `json:"linked_ms"`
	ClaimID        stats   `json:"claim_id"`
	ClaimBest      stats   `json:"claim_best"`
	Add            stats   `json:"add"`
	// With -compare: the claims run directly (not through git) by this
	// build and by REV's, each in a repository it made.
	Direct  *claimPair `json:"direct,omitempty"`
	Compare *claimPair `json:"compare,omitempty"`
}

type claimPair struct {
	ClaimID   stats `json:"claim_id"`
	ClaimBest stats `json:"claim_best"`
}

// measureClaims times the claims and the add against the floor on a board
// of n tasks made by import.
func (b *bench) measureClaims(n int) (claimsResult, error) {
	r := claimsResult{Tasks: n}
	if runs := warmups + b.opt.runs; 5*runs > n {
		return r, fmt.Errorf("%d runs claim %d tasks by id among the %d of the lowest priority, and the board of %d tasks has %d", b.opt.runs, runs, n/5, n, n/5)
	}
	progress(fmt.Sprintf("claims, %d tasks: setting up", n))
	dir := filepath.Join(b.tmp, fmt.Sprintf("claims-%d", n))
	seed, err := b.seedFile(dir, n)
	if err != nil {
		return r, err
	}
	repo := filepath.Join(dir, "repo")
	if err := b.newRepo(repo, seed); err != nil {
		return r, err
	}
	// The import's commit is trusted where it was made; the first
	// operation after it is untimed, as on a board in use.
	if _, err := output(repo, b.env, "git", append([]string{"liza"}, addArgs("warm-up")...)...); err != nil {
		return r, err
	}
	compared, own := filepath.Join(dir, "repo-compare"), filepath.Join(dir, "repo-this")
	// A build whose best-task claim reads the board costs minutes a claim
	// above 10,000 tasks: it is compared up to there.
	compare := b.compare != "" && n <= 10000
	if compare {
		for _, c := range []struct{ repo, bin string }{{compared, b.compare}, {own, b.gitLiza}} {
			if err := b.newCompareRepo(c.repo, c.bin, seed); err != nil {
				return r, err
			}
			if _, err := output(c.repo, b.env, c.bin, addArgs("warm-up")...); err != nil {
				return r, err
			}
		}
	}
	// The import wrote tens of megabytes at 50,000 tasks: written back
	// now, not while the runs are timed.
	syncDisks()
	progress(fmt.Sprintf("claims, %d tasks: timing %d+%d runs of each", n, warmups, b.opt.runs))
	runs := warmups + b.opt.runs
	direct := func(repo, bin string) []func(it int) *exec.Cmd {
		return []func(it int) *exec.Cmd{
			func(it int) *exec.Cmd {
				return command(repo, b.env, bin, "--agent", coderID(it), "claim", lastClaimed(n, it), "--no-worktree")
			},
			func(it int) *exec.Cmd {
				return command(repo, b.env, bin, "--agent", coderID(runs+it), "claim", "--no-worktree")
			},
		}
	}
	var more []func(it int) *exec.Cmd
	if compare {
		more = append(direct(own, b.gitLiza), direct(compared, b.compare)...)
	}
	samples, err := b.interleaveRuns(append([]func(it int) *exec.Cmd{
		func(it int) *exec.Cmd { return command(repo, b.env, "git", "liza-floor") },
		func(it int) *exec.Cmd {
			return command(repo, b.env, "git", "update-ref", fmt.Sprintf("refs/bench/c%d", it), "HEAD")
		},
		func(it int) *exec.Cmd { return command(repo, b.env, "git", "liza-linked") },
		// Tasks of the lowest priority by id (lastClaimed), each for a coder of its own.
		func(it int) *exec.Cmd {
			return command(repo, b.env, "git", "liza", "--agent", coderID(it), "claim", lastClaimed(n, it), "--no-worktree")
		},
		func(it int) *exec.Cmd {
			return command(repo, b.env, "git", "liza", "--agent", coderID(runs+it), "claim", "--no-worktree")
		},
		func(it int) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(fmt.Sprintf("add-%d", it))...)...)
		},
	}, more...))
	if err != nil {
		return r, err
	}
	r.Dispatch, r.UpdateRef = summarize(samples[0]), summarize(samples[1])
	r.Floor = r.Dispatch.Median + r.UpdateRef.Median
	r.LinkedDispatch = summarize(samples[2])
	r.Linked = r.LinkedDispatch.Median + r.UpdateRef.Median
	r.ClaimID, r.ClaimBest, r.Add = summarize(samples[3]), summarize(samples[4]), summarize(samples[5])
	if compare {
		r.Direct = &claimPair{summarize(samples[6]), summarize(samples[7])}
		r.Compare = &claimPair{summarize(samples[8]), summarize(samples[9])}
	}
	return r, nil
}

// lastClaimed is the task the it-th claim by id takes on a board of n
// tasks made by gen-state.py (priority 1 + i%5, n a multiple of 5): the
// tasks of the lowest priority, from the last, which a claim of the best
// task reaches only after every other one, so that the two kinds of claim
// never meet.
func lastClaimed(n, it int) string { return fmt.Sprintf("task-%d", n-1-5*it) }

func printClaims(rs []claimsResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Printf("\nClaims and adds against the floor (git liza-floor + git update-ref), medians, ms; linked is\ngit liza-linked + git update-ref, a program of git-liza's packages that runs no command:\n")
	fmt.Printf("  %8s %7s %16s %16s %16s %16s\n", "tasks", "floor", "linked", "claim ID", "claim (best)", "task add")
	for _, r := range rs {
		fmt.Printf("  %8d %7.1f %9.1f (%4.2f) %9.1f (%4.2f) %9.1f (%4.2f) %9.1f (%4.2f)\n", r.Tasks, r.Floor, r.Linked, r.Linked/r.Floor,
			r.ClaimID.Median, r.ClaimID.Median/r.Floor, r.ClaimBest.Median, r.ClaimBest.Median/r.Floor, r.Add.Median, r.Add.Median/r.Floor)
		if r.Compare != nil {
			fmt.Printf("  %8s run directly: claim ID %.1f, best %.1f; -compare build: claim ID %.1f, best %.1f\n", "",
				r.Direct.ClaimID.Median, r.Direct.ClaimBest.Median, r.Compare.ClaimID.Median, r.Compare.ClaimBest.Median)
		}
	}
}
