package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	contendAdds   = 10              // tasks each clone adds in the contention runs
	contendBudget = 5 * time.Minute // LIZA_RETRY_BUDGET of the contention runs
)

// contendClones are the numbers of clones contending on one remote.
var contendClones = []int{1, 2, 4, 8}

// measureContention has n clones of one file:// remote add contendAdds
// tasks each, all at once: one goroutine per clone runs that clone's adds
// one process after another, as an agent would, and all of them start
// together. Then it checks on the remote that no operation was lost: its
// refs/liza/state holds exactly n*contendAdds commits on top of the setup's
// tip, and every task added is in the state once.
func (b *bench) measureContention(n int) (contentionResult, error) {
	progress(fmt.Sprintf("contention, %d clones: setting up", n))
	dir := filepath.Join(b.tmp, fmt.Sprintf("contend-%d", n))
	seed, err := b.seedFile(dir, remoteTasks)
	if err != nil {
		return contentionResult{}, err
	}
	hub, err := b.newHub(dir, seed)
	if err != nil {
		return contentionResult{}, err
	}
	clones := make([]string, n)
	for c := range clones {
		clones[c] = filepath.Join(dir, fmt.Sprintf("c%d", c+1))
		if err := b.remoteClone("file://"+hub, clones[c]); err != nil {
			return contentionResult{}, err
		}
	}
	setupTip, err := output(hub, b.env, "git", "rev-parse", "refs/liza/state")
	if err != nil {
		return contentionResult{}, err
	}
	r := contentionResult{Clones: n, AddsPerClone: contendAdds}
	if r.SetupCommits, err = b.countCommits(hub, "refs/liza/state"); err != nil {
		return r, err
	}

	progress(fmt.Sprintf("contention, %d clones: %d adds each, all at once", n, contendAdds))
	start := make(chan struct{})
	samples := make([][]float64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	// The retry budget is raised: what is measured is how the clones take
	// turns and whether anything is lost, not where a caller gives up. An
	// add that still gives up is refused (exit 2) and must not be on the
	// remote.
	env := append(slices.Clip(b.env), "LIZA_RETRY_BUDGET="+contendBudget.String())
	gaveUp := make([][]string, n)
	for c, clone := range clones {
		// Every command is built before the start, as timeRun wants them.
		cmds := make([]*exec.Cmd, contendAdds)
		for i := range cmds {
			args := addArgs(contendID(c, i))
			args[1] = fmt.Sprintf("planner-%d", c+1) // the --agent value
			cmds[i] = command(clone, env, "git", append([]string{"liza"}, args...)...)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i, cmd := range cmds {
				d, err := timeRun(cmd)
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.ExitCode() == 2 {
					gaveUp[c] = append(gaveUp[c], contendID(c, i))
					continue
				}
				if err != nil {
					errs[c] = err
					return
				}
				samples[c] = append(samples[c], float64(d.Microseconds())/1000)
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	refused := map[string]bool{}
	for _, ids := range gaveUp {
		for _, id := range ids {
			refused[id] = true
		}
	}
	r.GaveUp = len(refused)
	want := n*contendAdds - r.GaveUp
	r.WallMS = float64(wall.Microseconds()) / 1000
	r.OpsPerSec = float64(want) / wall.Seconds()
	if want > 0 {
		r.Add = summarize(slices.Concat(samples...))
	}

	// Every add above exited 0, so the remote acknowledged it: check that
	// it is there, once, and that nothing else is.
	if r.Commits, err = b.countCommits(hub, "refs/liza/state"); err != nil {
		return r, err
	}
	since, err := b.countCommits(hub, setupTip+"..refs/liza/state")
	if err != nil {
		return r, err
	}
	ids, total, err := b.taskIDs(hub)
	if err != nil {
		return r, err
	}
	var lost, twice, landed []string
	for c := 0; c < n; c++ {
		for i := 0; i < contendAdds; i++ {
			id := contendID(c, i)
			switch {
			case refused[id] && ids[id] > 0:
				landed = append(landed, id)
			case refused[id]:
			case ids[id] == 0:
				lost = append(lost, id)
			case ids[id] > 1:
				twice = append(twice, id)
			}
		}
	}
	r.Lost = len(lost)
	var problems []string
	if len(lost) > 0 {
		problems = append(problems, fmt.Sprintf("LOST %d of %d acknowledged adds: %s", len(lost), want, strings.Join(lost, " ")))
	}
	if len(landed) > 0 {
		problems = append(problems, fmt.Sprintf("%d adds reported as refused are on the remote: %s", len(landed), strings.Join(landed, " ")))
	}
	if len(twice) > 0 {
		problems = append(problems, fmt.Sprintf("%d tasks are in the state more than once: %s", len(twice), strings.Join(twice, " ")))
	}
	if since != want || r.Commits != r.SetupCommits+want {
		problems = append(problems, fmt.Sprintf("the remote's refs/liza/state has %d commits, %d of them on top of the setup's %d; want %d and %d",
			r.Commits, since, r.SetupCommits, r.SetupCommits+want, want))
	}
	if total != remoteTasks+want {
		problems = append(problems, fmt.Sprintf("the remote's state has %d tasks, want %d", total, remoteTasks+want))
	}
	if len(problems) > 0 {
		return r, errors.New(strings.Join(problems, "; "))
	}
	return r, nil
}

// contendID is the id of the i-th task clone c adds (both from 0).
func contendID(c, i int) string { return fmt.Sprintf("c%d-%d", c+1, i+1) }

// countCommits returns `git rev-list --count rev` in repo.
func (b *bench) countCommits(repo, rev string) (int, error) {
	out, err := output(repo, b.env, "git", "rev-list", "--count", rev)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

// taskIDs reads the state of repo with `git liza show --json --all` and
// returns how many times each task id occurs in it, live or archived, and
// the number of tasks.
func (b *bench) taskIDs(repo string) (map[string]int, int, error) {
	out, err := output(repo, b.env, "git", "liza", "show", "--json", "--all")
	if err != nil {
		return nil, 0, err
	}
	type task struct {
		ID string `json:"id"`
	}
	var st struct {
		Tasks   []task `json:"tasks"`
		Archive []task `json:"archive"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return nil, 0, fmt.Errorf("git liza show --json: %v", err)
	}
	ids := map[string]int{}
	for _, t := range slices.Concat(st.Tasks, st.Archive) {
		ids[t.ID]++
	}
	return ids, len(st.Tasks) + len(st.Archive), nil
}
