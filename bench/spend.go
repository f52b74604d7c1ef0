package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// spendResult is what recording spend costs a session: a one-task team
// (one coder session, one review session) whose agent reports its usage
// with a liza_usage line, against the same team whose agent reports none,
// interleaved. The whole run is timed (wall and processor time of git
// liza run and everything it started), so the difference sits in the noise
// of a team's run; the bytes are exact: what a session_ended commit writes
// (its commit object and the blobs it changes), with and without usage.
type spendResult struct {
	Runs int `json:"runs"`
	// Plain and Usage are the team's runs, wall ms; PlainCPU and UsageCPU
	// their processor time, ms.
	Plain    stats `json:"plain"`
	Usage    stats `json:"usage"`
	PlainCPU stats `json:"plain_cpu"`
	UsageCPU stats `json:"usage_cpu"`
	// PerSession is the difference of the medians over the two sessions
	// of a run, ms (wall, then processor).
	PerSession    float64 `json:"ms_per_session"`
	PerSessionCPU float64 `json:"cpu_ms_per_session"`
	// Bytes: a session_ended commit's object and changed blobs, without
	// and with usage, averaged over its sessions.
	PlainBytes float64 `json:"plain_bytes_per_session"`
	UsageBytes float64 `json:"usage_bytes_per_session"`
}

// spendAgent is the team's one-step agent (teamAgent); with USAGE=1 it
// also reports what its session spent.
var spendAgent = teamAgent + `if [ "$USAGE" = 1 ]; then
	echo '{"liza_usage":{"model":"gpt-5","input_tokens":123456,"output_tokens":7890,"cache_read_tokens":45678,"cache_write_tokens":0}}'
fi
`

// measureSpend times the one-task team with and without usage, runs times
// each after warmups, in a random order per iteration.
func (b *bench) measureSpend() (spendResult, error) {
	r := spendResult{Runs: b.opt.runs}
	dir := filepath.Join(b.tmp, "spend")
	agent := filepath.Join(dir, "agent.sh")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	if err := os.WriteFile(agent, []byte(spendAgent), 0o755); err != nil {
		return r, err
	}
	progress(fmt.Sprintf("spend: %d+%d one-task teams with and without usage", warmups, b.opt.runs))
	var wall, cpu [2][]float64
	var bytes [2][]float64
	order := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < warmups+b.opt.runs; it++ {
		for _, v := range order.Perm(2) {
			repo := filepath.Join(dir, fmt.Sprintf("run-%d-%d", it, v))
			w, c, n, err := b.spendRun(repo, agent, v == 1)
			if err != nil {
				return r, err
			}
			if it >= warmups {
				wall[v], cpu[v], bytes[v] = append(wall[v], w), append(cpu[v], c), append(bytes[v], n)
			}
			_ = os.RemoveAll(repo)
		}
	}
	r.Plain, r.Usage = summarize(wall[0]), summarize(wall[1])
	r.PlainCPU, r.UsageCPU = summarize(cpu[0]), summarize(cpu[1])
	r.PerSession = (r.Usage.Median - r.Plain.Median) / 2
	r.PerSessionCPU = (r.UsageCPU.Median - r.PlainCPU.Median) / 2
	r.PlainBytes, r.UsageBytes = summarize(bytes[0]).Median, summarize(bytes[1]).Median
	return r, nil
}

// spendRun makes a repository with one task, runs the team until the task
// is merged, and returns its wall and processor ms and the mean bytes of
// its session_ended commits.
func (b *bench) spendRun(repo, agent string, usage bool) (float64, float64, float64, error) {
	if err := b.initRepo(repo); err != nil {
		return 0, 0, 0, err
	}
	if err := os.MkdirAll(filepath.Join(repo, "scripts"), 0o755); err != nil {
		return 0, 0, 0, err
	}
	if err := os.WriteFile(filepath.Join(repo, "scripts", "integration-test.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		return 0, 0, 0, err
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "integration test"}, {"config", "gc.auto", "0"}} {
		if _, err := output(repo, b.env, "git", args...); err != nil {
			return 0, 0, 0, err
		}
	}
	head, err := output(repo, b.env, "git", "rev-parse", "HEAD")
	if err != nil {
		return 0, 0, 0, err
	}
	seed := filepath.Join(repo, ".git", "seed.yaml")
	if err := os.WriteFile(seed, []byte(teamSeed(1, 0, head)), 0o644); err != nil {
		return 0, 0, 0, err
	}
	if out, err := command(repo, b.env, "git", "liza", "import", seed).CombinedOutput(); err != nil {
		return 0, 0, 0, fmt.Errorf("import: %v\n%s", err, out)
	}
	env := append(b.env, "USAGE=0")
	if usage {
		env[len(env)-1] = "USAGE=1"
	}
	team := command(repo, env, b.gitLiza, "run", "--no-planner", "--coders", "1", "--reviewers", "1",
		"--poll", "50ms", "--backoff", "200ms", "--", "sh", agent)
	log, err := os.Create(filepath.Join(repo, ".git", "team.log"))
	if err != nil {
		return 0, 0, 0, err
	}
	defer log.Close()
	team.Stdout, team.Stderr = log, log
	ownGroup(team)
	start := time.Now()
	if err := team.Start(); err != nil {
		return 0, 0, 0, err
	}
	deadline := start.Add(30 * time.Second)
	// Done once the task is merged (the integration branch moved past the
	// two commits it started at) and both sessions' ends are recorded.
	for merged := false; ; {
		if n, err := firstParents(repo, b.env, "refs/heads/integration"); err == nil && n > 2 {
			merged = true
		}
		if merged {
			out, _ := output(repo, b.env, "git", "rev-list", "--count", "--grep=^Liza-Kind: session_ended$", "refs/liza/state")
			if strings.TrimSpace(out) == "2" {
				break
			}
		}
		if time.Now().After(deadline) {
			killGroup(team)
			team.Wait()
			return 0, 0, 0, fmt.Errorf("the task was not merged in 30s (see %s)", log.Name())
		}
		time.Sleep(10 * time.Millisecond)
	}
	wall := float64(time.Since(start).Microseconds()) / 1000
	stopGroup(team)
	team.Wait()
	var cpu float64
	if ps := team.ProcessState; ps != nil {
		cpu = float64((ps.UserTime() + ps.SystemTime()).Nanoseconds()) / 1e6
	}
	n, err := sessionBytes(repo, b.env, usage)
	return wall, cpu, n, err
}

// sessionBytes is the mean size of the session_ended commits on the
// board: the commit object and the blobs it changes.
func sessionBytes(repo string, env []string, usage bool) (float64, error) {
	out, err := output(repo, env, "git", "log", "--format=%H", "--grep=^Liza-Kind: session_ended$", "refs/liza/state")
	if err != nil {
		return 0, err
	}
	commits := strings.Fields(out)
	if len(commits) == 0 {
		return 0, fmt.Errorf("no session_ended commit on the board")
	}
	total := 0
	for _, c := range commits {
		msg, err := output(repo, env, "git", "cat-file", "commit", c)
		if err != nil {
			return 0, err
		}
		if strings.Contains(msg, `"usage"`) != usage {
			return 0, fmt.Errorf("session_ended %s: usage recorded %v, want %v", c[:12], !usage, usage)
		}
		size, err := output(repo, env, "git", "cat-file", "-s", c)
		if err != nil {
			return 0, err
		}
		n, _ := strconv.Atoi(strings.TrimSpace(size))
		total += n
		diff, err := output(repo, env, "git", "diff-tree", "-r", "--no-commit-id", c)
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(strings.TrimSpace(diff), "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || strings.Trim(f[3], "0") == "" {
				continue
			}
			size, err := output(repo, env, "git", "cat-file", "-s", f[3])
			if err != nil {
				return 0, err
			}
			n, _ := strconv.Atoi(strings.TrimSpace(size))
			total += n
		}
	}
	return float64(total) / float64(len(commits)), nil
}

// printSpend prints what recording spend costs a session.
func printSpend(r *spendResult) {
	if r == nil {
		return
	}
	fmt.Printf("\nspend: a one-task team (a coder's and a reviewer's session), agents reporting usage (liza_usage) or not, %d runs each, interleaved\n", r.Runs)
	fmt.Printf("  %-12s %22s %22s %16s\n", "", "wall ms, median (p90)", "cpu ms, median (p90)", "bytes/session")
	fmt.Printf("  %-12s %22s %22s %16.0f\n", "no usage", ms(r.Plain), ms(r.PlainCPU), r.PlainBytes)
	fmt.Printf("  %-12s %22s %22s %16.0f\n", "usage", ms(r.Usage), ms(r.UsageCPU), r.UsageBytes)
	fmt.Printf("  per session: %+.1f ms wall, %+.1f ms cpu, %+.0f bytes (the state commit of the session's end)\n",
		r.PerSession, r.PerSessionCPU, r.UsageBytes-r.PlainBytes)
}
