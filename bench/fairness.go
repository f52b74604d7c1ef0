package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// fairResult is n clones of one file:// remote each adding tasks in a
// loop, one process after another, for the same time.
type fairResult struct {
	Clones    int     `json:"clones"`
	Seconds   float64 `json:"seconds"`
	PerClone  []int   `json:"adds_per_clone"`
	Total     int     `json:"adds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// MinShare is the fewest adds any clone made over a fair share (the
	// total over n): 1 when every clone made as many.
	MinShare float64 `json:"min_share"`
	Add      stats   `json:"add"` // each acknowledged add, retries included
	P99      float64 `json:"p99_ms"`
	GaveUp   int     `json:"gave_up"`
	Lost     int     `json:"lost"`
}

// measureFairness has n clones add tasks in a loop for the bench's
// fairness time, then checks on the remote that every add acknowledged is
// there once.
func (b *bench) measureFairness(n int) (fairResult, error) {
	return b.measureFairnessOver(n, false)
}

// measureFairnessOver is measureFairness over file://, or with daemon over
// git daemon on 127.0.0.1 (stopped on the way out).
func (b *bench) measureFairnessOver(n int, daemon bool) (fairResult, error) {
	r := fairResult{Clones: n, PerClone: make([]int, n)}
	progress(fmt.Sprintf("fairness, %d clones: setting up", n))
	dir := filepath.Join(b.tmp, fmt.Sprintf("fair-%d", n))
	if daemon {
		dir += "-daemon"
	}
	seed, err := b.seedFile(dir, remoteTasks)
	if err != nil {
		return r, err
	}
	hub, err := b.newHub(dir, seed)
	if err != nil {
		return r, err
	}
	url := "file://" + hub
	if daemon {
		var stop func()
		if url, stop, err = b.startDaemon(dir, "hub.git"); err != nil {
			return r, err
		}
		defer stop()
	}
	clones := make([]string, n)
	for c := range clones {
		clones[c] = filepath.Join(dir, fmt.Sprintf("c%d", c+1))
		if err := b.remoteClone(url, clones[c]); err != nil {
			return r, err
		}
	}
	progress(fmt.Sprintf("fairness, %d clones: adding in a loop for %s", n, b.opt.fairTime))
	env := append(slices.Clip(b.env), "LIZA_RETRY_BUDGET="+contendBudget.String())
	samples := make([][]float64, n)
	acked := make([][]string, n)
	gaveUp := make([]int, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	var deadline time.Time
	for c, clone := range clones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; time.Now().Before(deadline); i++ {
				id := fmt.Sprintf("f%d-%d", c+1, i+1)
				args := addArgs(id)
				args[1] = fmt.Sprintf("planner-%d", c+1)
				d, err := timeRun(command(clone, env, "git", append([]string{"liza"}, args...)...))
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.ExitCode() == 2 {
					gaveUp[c]++
					continue
				}
				if err != nil {
					errs[c] = err
					return
				}
				samples[c] = append(samples[c], float64(d.Microseconds())/1000)
				acked[c] = append(acked[c], id)
			}
		}()
	}
	began := time.Now()
	deadline = began.Add(b.opt.fairTime)
	close(start)
	wg.Wait()
	r.Seconds = time.Since(began).Seconds()
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	for c := range clones {
		r.PerClone[c] = len(acked[c])
		r.Total += len(acked[c])
		r.GaveUp += gaveUp[c]
	}
	r.OpsPerSec = float64(r.Total) / r.Seconds
	if r.Total > 0 {
		r.MinShare = float64(slices.Min(r.PerClone)) / (float64(r.Total) / float64(n))
		all := slices.Concat(samples...)
		r.Add = summarize(all)
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		r.P99 = sorted[max(0, (len(sorted)*99+99)/100-1)]
	}
	ids, _, err := b.taskIDs(hub)
	if err != nil {
		return r, err
	}
	var lost []string
	for _, list := range acked {
		for _, id := range list {
			if ids[id] != 1 {
				lost = append(lost, id)
			}
		}
	}
	r.Lost = len(lost)
	if len(lost) > 0 {
		return r, fmt.Errorf("%d acknowledged adds are not on the remote once: %s", len(lost), strings.Join(lost, " "))
	}
	return r, nil
}

func printFairness(rs []fairResult) { printFairnessOver(rs, "file://") }

func printFairnessOver(rs []fairResult, over string) {
	if len(rs) == 0 {
		return
	}
	fmt.Printf("\nFair turns on one %s remote: clones adding in a loop for %.0f s each run:\n", over, rs[0].Seconds)
	fmt.Printf("  %-7s %8s %8s %12s %10s %10s %10s  %s\n", "clones", "adds", "ops/s", "vs 1 clone", "min share", "median ms", "p99 ms", "adds per clone")
	one := rs[0].OpsPerSec
	for _, r := range rs {
		var per []string
		for _, n := range r.PerClone {
			per = append(per, fmt.Sprint(n))
		}
		fmt.Printf("  %-7d %8d %8.1f %12.2f %10.2f %10.1f %10.1f  %s\n", r.Clones, r.Total, r.OpsPerSec, r.OpsPerSec/one, r.MinShare, r.Add.Median, r.P99, strings.Join(per, " "))
	}
}
