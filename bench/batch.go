package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The merge queue (-only batch): teams of 1, 2, 4 and 8 scripted coders
// on boards whose integration test takes a fixed second, merged by the
// reviewer's lane one task at a time (merge_batch 1, the seeds' way) and
// in batches (the default merge_batch); then batches of eight approved
// tasks where one breaks the test, merged with git liza merge --queue,
// counting the test's runs.

// batchTest is the integration test of the team runs: one second.
const batchTest = "#!/bin/sh\nsleep 1\nexit 0\n"

// batchResult is the section's figures.
type batchResult struct {
	Serial  []teamResult `json:"serial"`  // merge_batch 1, by coders
	Batched []teamResult `json:"batched"` // the default merge_batch, by coders
	// Caps are 8-coder teams at the caps -batch-caps names, beside the
	// default's.
	Caps []capRun `json:"caps,omitempty"`
	// Breaking is, for each place of the breaking task in a batch of
	// eight, how many test runs merge --queue made until the other seven
	// landed.
	Breaking []breakingRun `json:"breaking"`
}

// capRun is an 8-coder team at one merge_batch.
type capRun struct {
	MergeBatch int        `json:"merge_batch"`
	Team       teamResult `json:"team"`
}

// breakingRun is one batch of eight with one breaking task.
type breakingRun struct {
	Breaks int `json:"breaks"` // the breaking task's place, 1-8
	Runs   int `json:"test_runs"`
	Merged int `json:"merged"`
	Failed int `json:"integration_failed"`
}

// measureBatch runs the section.
func (b *bench) measureBatch() (batchResult, error) {
	var out batchResult
	for i, coders := range []int{1, 2, 4, 8} {
		for _, batch := range []int{1, 0} {
			dir := filepath.Join(b.tmp, fmt.Sprintf("batch-%d-%d", i, batch))
			r, err := b.measureTeamWith(dir, coders, b.opt.batchTasks, 0, teamSetup{test: batchTest, mergeBatch: batch})
			if err != nil {
				return out, fmt.Errorf("%d coders, merge_batch %d: %v", coders, batch, err)
			}
			if batch == 1 {
				out.Serial = append(out.Serial, r)
			} else {
				out.Batched = append(out.Batched, r)
			}
		}
	}
	for _, c := range b.opt.batchCaps {
		r, err := b.measureTeamWith(filepath.Join(b.tmp, fmt.Sprintf("batch-cap-%d", c)), 8, b.opt.batchTasks, 0, teamSetup{test: batchTest, mergeBatch: c})
		if err != nil {
			return out, fmt.Errorf("8 coders, merge_batch %d: %v", c, err)
		}
		out.Caps = append(out.Caps, capRun{MergeBatch: c, Team: r})
	}
	for k := 1; k <= 8; k++ {
		r, err := b.measureBreaking(filepath.Join(b.tmp, fmt.Sprintf("breaking-%d", k)), k)
		if err != nil {
			return out, fmt.Errorf("breaking task %d of 8: %v", k, err)
		}
		out.Breaking = append(out.Breaking, r)
	}
	return out, nil
}

// breakingTest fails when a done-*.txt file says "breaks".
const breakingTest = "#!/bin/sh\nif grep -l breaks done-*.txt 2>/dev/null; then exit 1; fi\nexit 0\n"

// measureBreaking approves eight tasks, the k-th of which breaks the
// test, and merges them with merge --queue.
func (b *bench) measureBreaking(dir string, k int) (breakingRun, error) {
	r := breakingRun{Breaks: k}
	progress(fmt.Sprintf("batch: eight approved tasks, task %d breaks the test", k))
	repo := filepath.Join(dir, "repo")
	if err := b.initRepo(repo); err != nil {
		return r, err
	}
	p := filepath.Join(repo, "scripts", "integration-test.sh")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return r, err
	}
	if err := os.WriteFile(p, []byte(breakingTest), 0o755); err != nil {
		return r, err
	}
	steps := [][]string{{"git", "add", "."}, {"git", "commit", "-q", "-m", "integration test"}, {"git", "liza", "init", "bench"}}
	for i := 1; i <= 8; i++ {
		id, coder := fmt.Sprintf("t-%d", i), fmt.Sprintf("coder-%d", i)
		text := id
		if i == k {
			text = "breaks"
		}
		wt := filepath.Join(repo, ".worktrees", id)
		steps = append(steps,
			[]string{"git", "liza", "task", "add", "--id", id, "--desc", "task " + id, "--spec", "specs/vision.md", "--done", "d", "--scope", "s"},
			[]string{"git", "liza", "--agent", coder, "claim", id},
			[]string{"sh", "-c", fmt.Sprintf("echo %s > %s/done-%s.txt && git -C %s add . && git -C %s commit -q -m %s", text, wt, id, wt, wt, id)},
			[]string{"git", "liza", "--agent", coder, "checkpoint", id, "--intent", "i", "--validation", "v", "--files", "done-" + id + ".txt"},
			[]string{"git", "liza", "--agent", coder, "submit", id},
			[]string{"git", "liza", "--agent", "code-reviewer-1", "review", id},
			[]string{"git", "liza", "--agent", "code-reviewer-1", "verdict", id, "approve"})
	}
	for _, s := range steps {
		if out, err := command(repo, b.env, s[0], s[1:]...).CombinedOutput(); err != nil {
			return r, fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	out, _ := command(repo, b.env, "git", "liza", "--agent", "code-reviewer-1", "merge", "--queue", "--json").Output()
	var q struct {
		Runs  int `json:"test_runs"`
		Tasks []struct {
			Status string `json:"status"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(out, &q); err != nil {
		return r, fmt.Errorf("merge --queue --json: %v\n%s", err, out)
	}
	r.Runs = q.Runs
	for _, t := range q.Tasks {
		switch t.Status {
		case "MERGED":
			r.Merged++
		case "INTEGRATION_FAILED":
			r.Failed++
		}
	}
	return r, nil
}

func printBatch(r *batchResult) {
	if r == nil {
		return
	}
	fmt.Printf("\nThe merge queue: teams with a 1 s integration test, the lane one task at a time (merge_batch 1) against batches (merge_batch %s)\n", "default")
	fmt.Printf("  %-7s %8s %14s %14s %8s\n", "coders", "tasks", "serial/min", "batched/min", "ratio")
	for i := range r.Serial {
		s, bt := r.Serial[i], r.Batched[i]
		fmt.Printf("  %-7d %8d %14.1f %14.1f %8.2f\n", s.Coders, s.Live, s.PerMin, bt.PerMin, bt.PerMin/s.PerMin)
	}
	for _, c := range r.Caps {
		fmt.Printf("  8 coders at merge_batch %d: %.1f merged/min\n", c.MergeBatch, c.Team.PerMin)
	}
	var line []string
	worst := 0
	for _, k := range r.Breaking {
		line = append(line, fmt.Sprintf("%d: %d runs, %d merged, %d failed", k.Breaks, k.Runs, k.Merged, k.Failed))
		worst = max(worst, k.Runs)
	}
	fmt.Printf("  one breaking task in a batch of eight (merge --queue), by its place: %s; at most %d runs\n", strings.Join(line, "; "), worst)
}
