package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// teamResult is a team of scripted agents working a board: git liza run
// with coders and one reviewer, each agent session one step (the coder
// checkpoints, commits a file and submits, the reviewer approves, its supervisor
// merges), timed from the start until every live task is MERGED.
type teamResult struct {
	Coders   int     `json:"coders"`
	Live     int     `json:"live_tasks"`
	Finished int     `json:"finished_tasks"` // MERGED before the run: the rest of the board
	Seconds  float64 `json:"seconds"`
	PerMin   float64 `json:"merged_per_min"`
	// Steady is the rate from the first merge to the last: the team at
	// work, without its start (registering, each supervisor's first read
	// of the board).
	Steady float64 `json:"steady_merged_per_min"`
	// CPU is the processor time of the whole team (git liza run, its
	// agents and every git they started), in seconds per merged task.
	CPU float64 `json:"cpu_seconds_per_task"`
}

// teamAgent is the scripted agent: one step per session, as the
// supervisor hands it out.
const teamAgent = `#!/bin/sh
set -e
case "$LIZA_ROLE" in
coder)
	cd "$LIZA_WORKTREE"
	git liza checkpoint "$LIZA_TASK" --intent "write done-$LIZA_TASK.txt" --validation "cat done-$LIZA_TASK.txt" --files "done-$LIZA_TASK.txt" >/dev/null
	echo "$LIZA_TASK" > "done-$LIZA_TASK.txt"
	git add "done-$LIZA_TASK.txt"
	git commit -q -m "$LIZA_TASK"
	git liza submit "$LIZA_TASK" >/dev/null ;;
code-reviewer)
	git liza verdict "$LIZA_TASK" approve >/dev/null ;;
esac
`

// teamBoardRuns is how many times each of the two boards of the board
// comparison is worked (alternately), and how many rounds of teams of 1,
// 2, 4 and 8 coders run; the medians count. A team's run lasts seconds,
// and on a small machine two runs of one team differ by a fifth: three
// rounds left the order of the teams to chance.
const teamBoardRuns = 5

// measureTeams runs the teams: the same 20 live tasks on a board of 20 and
// on one of teamBoard tasks, two coders each, teamBoardRuns times each;
// then teamTasks live tasks with 1, 2, 4 and 8 coders.
func (b *bench) measureTeams() ([]teamResult, error) {
	var out []teamResult
	type run struct{ coders, live, finished int }
	var runs []run
	for range teamBoardRuns {
		runs = append(runs, run{2, 20, 0}, run{2, 20, b.opt.teamBoard - 20})
	}
	for i := range teamBoardRuns {
		coders := []int{1, 2, 4, 8}
		if i%2 == 1 {
			slices.Reverse(coders)
		}
		for _, c := range coders {
			runs = append(runs, run{c, b.opt.teamTasks, 0})
		}
	}
	for i, run := range runs {
		r, err := b.measureTeam(filepath.Join(b.tmp, fmt.Sprintf("team-%d", i+1)), run.coders, run.live, run.finished)
		if err != nil {
			return out, fmt.Errorf("%d coders, %d+%d tasks: %v", run.coders, run.live, run.finished, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// measureTeam runs one team until live tasks are merged.
func (b *bench) measureTeam(dir string, coders, live, finished int) (teamResult, error) {
	return b.measureTeamWith(dir, coders, live, finished, teamSetup{test: "#!/bin/sh\nexit 0\n"})
}

// teamSetup is what a team run's board varies: the integration test
// script, and the board's merge_batch (0: the default); the agent's script
// ("": teamAgent), further files committed before the run, and the tasks'
// scope, by the task's number (nil: each its own done file).
type teamSetup struct {
	test       string
	mergeBatch int
	agent      string
	files      map[string]string
	scope      func(n int) string
	// countBoard counts the merges on the board (git liza status, every
	// 250 ms) rather than on the integration branch's first-parent line:
	// a merge that fast-forwards to a task's branch adds the task's own
	// commits to that line, not one commit.
	countBoard bool
	// watch, when set, is called at each look at the team with the
	// number of tasks merged so far.
	watch func(team *exec.Cmd, merged int)
}

// measureTeamWith runs one team on a board set up as setup says.
func (b *bench) measureTeamWith(dir string, coders, live, finished int, setup teamSetup) (teamResult, error) {
	r := teamResult{Coders: coders, Live: live, Finished: finished}
	progress(fmt.Sprintf("team: %d coders, %d live tasks on a board of %d", coders, live, live+finished))
	repo := filepath.Join(dir, "repo")
	if err := b.initRepo(repo); err != nil {
		return r, err
	}
	files := map[string]string{"scripts/integration-test.sh": setup.test, ".gitignore": ".liza/\n"}
	maps.Copy(files, setup.files)
	for path, text := range files {
		p := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return r, err
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			return r, err
		}
	}
	agent := filepath.Join(dir, "agent.sh")
	script := teamAgent
	if setup.agent != "" {
		script = setup.agent
	}
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		return r, err
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "integration test"}, {"config", "gc.auto", "0"}} {
		if _, err := output(repo, b.env, "git", args...); err != nil {
			return r, err
		}
	}
	head, err := output(repo, b.env, "git", "rev-parse", "HEAD")
	if err != nil {
		return r, err
	}
	seed := filepath.Join(dir, "seed.yaml")
	if err := os.WriteFile(seed, []byte(teamSeedScope(live, finished, head, setup.mergeBatch, setup.scope)), 0o644); err != nil {
		return r, err
	}
	if out, err := command(repo, b.env, "git", "liza", "import", seed).CombinedOutput(); err != nil {
		return r, fmt.Errorf("import: %v\n%s", err, out)
	}
	// The import of a large board leaves thousands of new files for the
	// system to write back: written now, not while the team runs.
	syncDisks()
	log, err := os.Create(filepath.Join(dir, "team.log"))
	if err != nil {
		return r, err
	}
	defer log.Close()
	team := command(repo, b.env, b.gitLiza, "run", "--no-planner", "--coders", fmt.Sprint(coders), "--reviewers", "1",
		"--poll", "100ms", "--backoff", "200ms", "--", "sh", agent)
	team.Stdout, team.Stderr = log, log
	ownGroup(team)
	// The integration branch starts where it is, or from HEAD.
	base, err := firstParents(repo, b.env, "refs/heads/integration")
	if err != nil {
		if base, err = firstParents(repo, b.env, "HEAD"); err != nil {
			return r, err
		}
	}
	if b.serveHook != nil {
		defer b.serveHook(repo)()
	}
	start := time.Now()
	if err := team.Start(); err != nil {
		return r, err
	}
	ended := make(chan struct{}) // closed once run has ended
	go func() { team.Wait(); close(ended) }()
	stop := func() {
		stopGroup(team)
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			killGroup(team)
			<-ended
		}
	}
	// Merges are counted on the integration branch (one commit each on its
	// first-parent line), which costs one git process whatever the board:
	// the bench's own looking does not slow the team on a big board. The
	// board is asked once the count is reached.
	deadline := start.Add(time.Duration(live) * 10 * time.Second)
	var first time.Time
	for {
		n := 0 // until the integration branch is made
		if setup.countBoard {
			if merged, err := mergedCount(repo, b.env); err == nil {
				n = merged - finished
			}
		} else if count, err := firstParents(repo, b.env, "refs/heads/integration"); err == nil {
			n = count - base
		}
		if setup.watch != nil {
			setup.watch(team, n)
		}
		now := time.Now()
		if n > 0 && first.IsZero() {
			first = now
		}
		if n >= live {
			merged, err := mergedCount(repo, b.env)
			if err != nil {
				stop()
				return r, err
			}
			if merged >= live+finished {
				break
			}
		}
		if now.After(deadline) {
			stop()
			return r, fmt.Errorf("only %d of %d tasks merged after %s (see %s)", n, live, time.Since(start).Round(time.Second), log.Name())
		}
		select {
		case <-ended:
			return r, fmt.Errorf("the team stopped (%v) with %d of %d tasks merged after %s (see %s)", team.ProcessState, n, live, time.Since(start).Round(time.Second), log.Name())
		default:
		}
		if setup.countBoard {
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
	}
	end := time.Now()
	r.Seconds = end.Sub(start).Seconds()
	r.PerMin = float64(live) / r.Seconds * 60
	if live > 1 {
		r.Steady = float64(live-1) / end.Sub(first).Seconds() * 60
	}
	stop()
	if ps := team.ProcessState; ps != nil {
		cpu := ps.UserTime() + ps.SystemTime()
		r.CPU = cpu.Seconds() / float64(live)
	}
	return r, nil
}

// firstParents counts the commits on rev's first-parent line.
func firstParents(repo string, env []string, rev string) (int, error) {
	out, err := command(repo, env, "git", "rev-list", "--count", "--first-parent", rev, "--").Output()
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(string(out), &n)
	return n, err
}

// mergedCount counts the MERGED tasks of the board (git liza status --json).
func mergedCount(repo string, env []string) (int, error) {
	out, err := command(repo, env, "git", "liza", "status", "--json").Output()
	if err != nil {
		return 0, fmt.Errorf("status: %v", err)
	}
	var b struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(out, &b); err != nil {
		return 0, err
	}
	return b.Counts["MERGED"], nil
}

// teamSeed is a board of live UNCLAIMED tasks and finished MERGED ones.
func teamSeed(live, finished int, commit string) string {
	return teamSeedScope(live, finished, commit, 0, nil)
}

// teamSeedScope is teamSeed whose config sets merge_batch (0: not) and
// whose live tasks' scope is scope of their number (nil: each its own
// done file).
func teamSeedScope(live, finished int, commit string, mergeBatch int, scope func(n int) string) string {
	if scope == nil {
		scope = func(n int) string { return fmt.Sprintf("IN: done-t-%d.txt", n) }
	}
	var s strings.Builder
	s.WriteString("version: 1\ngoal: {id: goal-1, description: bench, status: IN_PROGRESS, created: \"2026-01-17T10:00:00Z\"}\n")
	if mergeBatch > 0 {
		fmt.Fprintf(&s, "config: {integration_branch: integration, max_in_flight: 64, merge_batch: %d}\n", mergeBatch)
	} else {
		s.WriteString("config: {integration_branch: integration, max_in_flight: 64}\n")
	}
	s.WriteString("sprint: {id: sprint-1, goal_ref: goal-1, status: IN_PROGRESS, timeline: {started: \"2026-01-17T10:00:00Z\"}}\nagents: {}\ntasks:\n")
	for i := 1; i <= finished; i++ {
		fmt.Fprintf(&s, "  - {id: old-%d, description: 'finished task %d', status: MERGED, priority: 3, created: \"2026-01-17T09:00:00Z\", spec_ref: specs/vision.md, done_when: d, scope: 'IN: old-%d', merge_commit: %s, depends_on: [], iteration: 1, history: []}\n", i, i, i, commit)
	}
	for i := 1; i <= live; i++ {
		fmt.Fprintf(&s, "  - {id: t-%d, description: 'task %d', status: UNCLAIMED, priority: %d, created: \"2026-01-17T10:00:00Z\", spec_ref: specs/vision.md, done_when: d, scope: '%s', depends_on: [], iteration: 0, history: []}\n", i, i, 1+i%5, scope(i))
	}
	return s.String()
}

func printTeams(rs []teamResult) {
	if len(rs) < 2*teamBoardRuns {
		return
	}
	fmt.Printf("\nTeams of scripted agents (git liza run --no-planner, 1 reviewer), until every live task is merged\n")
	fmt.Printf("(merged/min over the whole run; steady: from the first merge to the last; cpu: seconds of processor per task):\n")
	fmt.Printf("  %-7s %10s %14s %10s %12s %12s %8s\n", "coders", "live", "board", "seconds", "merged/min", "steady", "cpu")
	var small, large, smallSteady, largeSteady []float64
	byCoders := map[int][]teamResult{}
	for i, r := range rs {
		fmt.Printf("  %-7d %10d %14d %10.1f %12.1f %12.1f %8.2f\n", r.Coders, r.Live, r.Live+r.Finished, r.Seconds, r.PerMin, r.Steady, r.CPU)
		if i < 2*teamBoardRuns {
			if i%2 == 0 {
				small, smallSteady = append(small, r.PerMin), append(smallSteady, r.Steady)
			} else {
				large, largeSteady = append(large, r.PerMin), append(largeSteady, r.Steady)
			}
		} else {
			byCoders[r.Coders] = append(byCoders[r.Coders], r)
		}
	}
	s, l := summarize(small).Median, summarize(large).Median
	ss, ls := summarize(smallSteady).Median, summarize(largeSteady).Median
	fmt.Printf("  the same %d live tasks on a board of %d vs one of %d (medians of %d runs): %.1f vs %.1f merged/min, ratio %.2f; steady %.1f vs %.1f, ratio %.2f\n",
		rs[0].Live, rs[1].Live+rs[1].Finished, rs[0].Live, teamBoardRuns, l, s, l/s, ls, ss, ls/ss)
	var line, ratios []string
	prev, prevSteady := 0.0, 0.0
	for i, c := range slices.Sorted(maps.Keys(byCoders)) {
		var per, steady, cpu []float64
		for _, r := range byCoders[c] {
			per, steady, cpu = append(per, r.PerMin), append(steady, r.Steady), append(cpu, r.CPU)
		}
		m, ms := summarize(per).Median, summarize(steady).Median
		line = append(line, fmt.Sprintf("%d: %.1f (steady %.1f, cpu %.2f)", c, m, ms, summarize(cpu).Median))
		if i > 0 {
			ratios = append(ratios, fmt.Sprintf("%d: %.2f (steady %.2f)", c, m/prev, ms/prevSteady))
		}
		prev, prevSteady = m, ms
	}
	fmt.Printf("  by coders, medians of merged/min over %d rounds: %s\n", teamBoardRuns, strings.Join(line, ", "))
	fmt.Printf("  each team against the one of half as many coders: %s\n", strings.Join(ratios, ", "))
}
