package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// queueResult is one task's claim (with its worktree), review and merge
// on a board where no other task awaits review, and on one where Queue
// tasks do, each in its worktree, interleaved in one run; and a task add,
// which touches no worktree, as the control: what the second repository
// costs the machine whatever the command (a filesystem holding a hundred
// more checkouts creates files more slowly).
type queueResult struct {
	Queue int `json:"queue"`
	// Empty and Full are by step (queueSteps).
	Empty map[string]stats `json:"empty"`
	Full  map[string]stats `json:"full"`
}

// queueSteps are the timed steps: the controls, then a task's way through
// review. "git worktree add" is git's own, with no checkout, as a claim and
// a review register theirs: git reads every registration when it adds one.
var queueSteps = []string{"add", "git worktree add", "claim", "review", "merge"}

// measureQueue times the claim, the review and the merge of one task after
// another on two boards, alternately in random order: one where the task
// is the only work in review, and one where b.opt.queue other tasks were
// claimed, worked and submitted first and stay in review, each with its
// worktree. What each step costs must not grow with the review queue.
func (b *bench) measureQueue() (queueResult, error) {
	total := warmups + b.opt.runs
	r := queueResult{Queue: b.opt.queue, Empty: map[string]stats{}, Full: map[string]stats{}}
	var repos [2]string
	for i, queued := range []int{0, b.opt.queue} {
		repos[i] = filepath.Join(b.tmp, fmt.Sprintf("queue-%d", queued), "repo")
		seed, err := b.seedFile(filepath.Dir(repos[i]), total+queued)
		if err != nil {
			return r, err
		}
		if err := b.newRepo(repos[i], seed); err != nil {
			return r, err
		}
		progress(fmt.Sprintf("queue: %d tasks into review", queued))
		for it := total; it < total+queued; it++ {
			if _, err := output(repos[i], b.env, "git", append([]string{"liza"}, claimArgs(it, false)...)...); err != nil {
				return r, err
			}
			if err := b.workOn(repos[i], it); err != nil {
				return r, err
			}
		}
	}
	progress(fmt.Sprintf("queue: timing %d+%d tasks through review on each board", warmups, b.opt.runs))
	samples := [2]map[string][]float64{{}, {}}
	order := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < total; it++ {
		for _, v := range order.Perm(2) {
			times, err := b.throughReview(repos[v], it)
			if err != nil {
				return r, err
			}
			if it < warmups {
				continue
			}
			for step, d := range times {
				samples[v][step] = append(samples[v][step], float64(d.Microseconds())/1000)
			}
		}
	}
	for _, step := range queueSteps {
		r.Empty[step], r.Full[step] = summarize(samples[0][step]), summarize(samples[1][step])
	}
	return r, nil
}

// workOn commits a file of its own in the worktree of run it's task, which
// its coder claimed, and submits it.
func (b *bench) workOn(repo string, it int) error {
	id, wt := taskID(it), filepath.Join(repo, ".worktrees", taskID(it))
	if err := os.WriteFile(filepath.Join(wt, id+".txt"), []byte(id+"\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"-C", wt, "add", id + ".txt"},
		{"-C", wt, "commit", "-q", "-m", "work on " + id},
		{"liza", "--agent", coderID(it), "submit", id},
	} {
		if _, err := output(repo, b.env, "git", args...); err != nil {
			return err
		}
	}
	return nil
}

// throughReview adds a task (the control), then takes run it's task from
// UNCLAIMED to MERGED, timing its claim, its review and its merge (the
// work, the submit and the verdict between them are not timed).
func (b *bench) throughReview(repo string, it int) (map[string]time.Duration, error) {
	times := map[string]time.Duration{}
	id := taskID(it)
	for _, step := range []struct {
		name string
		run  func() error
	}{
		{"add", func() error {
			d, err := timeRun(command(repo, b.env, "git", append([]string{"liza"}, addArgs(fmt.Sprintf("added-%d", it+1))...)...))
			times["add"] = d
			return err
		}},
		{"git worktree add", func() error {
			dir := filepath.Join(filepath.Dir(repo), "scratch")
			d, err := timeRun(command(repo, b.env, "git", "worktree", "add", "--quiet", "--no-checkout", "--detach", dir, "HEAD"))
			times["git worktree add"] = d
			if err != nil {
				return err
			}
			_, err = output(repo, b.env, "git", "worktree", "remove", "--force", dir)
			return err
		}},
		{"claim", func() error {
			d, err := timeRun(command(repo, b.env, "git", append([]string{"liza"}, claimArgs(it, false)...)...))
			times["claim"] = d
			return err
		}},
		{"work", func() error { return b.workOn(repo, it) }},
		{"review", func() error {
			d, err := timeRun(command(repo, b.env, "git", "liza", "--agent", "code-reviewer-1", "review", id))
			times["review"] = d
			return err
		}},
		{"verdict", func() error {
			_, err := output(repo, b.env, "git", "liza", "--agent", "code-reviewer-1", "verdict", id, "approve")
			return err
		}},
		{"merge", func() error {
			d, err := timeRun(command(repo, b.env, "git", "liza", "--agent", "code-reviewer-1", "merge", id))
			times["merge"] = d
			return err
		}},
	} {
		if err := step.run(); err != nil {
			return nil, fmt.Errorf("%s %s: %v", step.name, id, err)
		}
	}
	return times, nil
}

func printQueue(q *queueResult) {
	if q == nil {
		return
	}
	fmt.Printf("\nOne task through review, with no other task in review and with %d in review, each in its worktree (ms;\n", q.Queue)
	fmt.Printf("task add, which touches no worktree, and git's own worktree add are the controls):\n")
	fmt.Printf("  %-18s %14s %14s %8s\n", "step", "none waiting", fmt.Sprintf("%d waiting", q.Queue), "ratio")
	for _, step := range queueSteps {
		e, f := q.Empty[step].Median, q.Full[step].Median
		fmt.Printf("  %-18s %14.1f %14.1f %8.2f\n", step, e, f, f/e)
	}
}
