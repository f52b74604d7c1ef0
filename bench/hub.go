package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// hubClones are the numbers of clones the hub section's fairness runs
// have add in a loop over git daemon.
var hubClones = []int{1, 2, 4, 8, 16}

// hubResult is one remote operation over git daemon on 127.0.0.1 against
// a plain git push of one small commit to the same hub, and local mode,
// interleaved; then clones adding in a loop on one hub over git daemon.
type hubResult struct {
	Tasks     int          `json:"tasks"`
	Push      stats        `json:"plain_push"` // git push of one commit of one small file
	Add       stats        `json:"remote_add"` // git liza task add in remote mode
	Local     stats        `json:"local_add"`  // git liza task add in local mode
	RatioPush float64      `json:"ratio_to_push"`
	Fairness  []fairResult `json:"fairness,omitempty"`
}

// measureHub times, interleaved, a plain push of one small commit to a
// hub served by git daemon, a git liza task add in a remote-mode clone of
// the same hub, and a local add; then, with -fair-time, hubClones clones
// adding in a loop over git daemon, one hub each.
func (b *bench) measureHub() (hubResult, error) {
	r := hubResult{Tasks: remoteTasks}
	progress("hub: setting up a hub served by git daemon")
	dir := filepath.Join(b.tmp, "hub")
	seed, err := b.seedFile(dir, remoteTasks)
	if err != nil {
		return r, err
	}
	local := filepath.Join(dir, "local")
	if err := b.newRepo(local, seed); err != nil {
		return r, err
	}
	if _, err := b.newHub(dir, seed); err != nil {
		return r, err
	}
	url, stop, err := b.startDaemon(dir, "hub.git")
	if err != nil {
		return r, err
	}
	defer stop()
	lizaClone, plain := filepath.Join(dir, "liza-clone"), filepath.Join(dir, "plain-clone")
	if err := b.remoteClone(url, lizaClone); err != nil {
		return r, err
	}
	if err := b.clone(url, plain); err != nil {
		return r, err
	}
	// The plain pushes go to a branch of their own; each run commits one
	// small file untimed, then pushes it timed.
	pushRun := func(it int) *exec.Cmd {
		name := "p" + strconv.Itoa(it)
		if err := os.WriteFile(filepath.Join(plain, name), []byte(name+"\n"), 0o644); err == nil {
			_, _ = output(plain, b.env, "git", "add", name)
			_, _ = output(plain, b.env, "git", "commit", "-q", "-m", name)
		}
		return command(plain, b.env, "git", "push", "-q", "origin", "HEAD:refs/heads/plain")
	}
	add := func(repo, prefix string) func(it int) *exec.Cmd {
		return func(it int) *exec.Cmd {
			// Untimed: the clone has been quiet for a while before its
			// operation, as an agent's clone is between two of its steps
			// (a clone that fetched or pushed within 250 ms fetches first).
			time.Sleep(300 * time.Millisecond)
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(fmt.Sprintf("%s-%d", prefix, it))...)...)
		}
	}
	progress(fmt.Sprintf("hub: timing %d+%d runs of each", warmups, b.opt.runs))
	samples, err := b.interleaveRuns([]func(it int) *exec.Cmd{pushRun, add(lizaClone, "hub"), add(local, "loc")})
	if err != nil {
		return r, err
	}
	r.Push, r.Add, r.Local = summarize(samples[0]), summarize(samples[1]), summarize(samples[2])
	r.RatioPush = r.Add.Median / r.Push.Median
	stop()
	if b.opt.fairTime > 0 {
		for _, n := range hubClones {
			f, err := b.measureFairnessOver(n, true)
			if err != nil {
				return r, fmt.Errorf("fairness over git daemon, %d clones: %v", n, err)
			}
			r.Fairness = append(r.Fairness, f)
		}
	}
	return r, nil
}

func printHub(r *hubResult) {
	if r == nil {
		return
	}
	fmt.Printf("\nOne operation on a hub over git daemon (%d tasks, medians of %d, ms):\n", r.Tasks, len(r.Add.Samples))
	fmt.Printf("  plain git push of one small commit %8.1f\n", r.Push.Median)
	fmt.Printf("  git liza task add, remote mode     %8.1f  (%.2f of the plain push)\n", r.Add.Median, r.RatioPush)
	fmt.Printf("  git liza task add, local mode      %8.1f\n", r.Local.Median)
	printFairnessOver(r.Fairness, "git daemon")
}
