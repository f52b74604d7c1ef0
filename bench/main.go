// Command bench times one `task add` and one `claim` with git-liza against the
// seed's flock+yq baseline, whole process each, on the same machine and in the
// same run; and, without a baseline, a claim that creates its worktree and a
// merge. Then remote mode: one `task add` in a clone whose blackboard lives on
// a file:// remote and on a `git daemon` on 127.0.0.1, against local mode; and
// the throughput of 1 to 8 clones adding tasks at once through one remote,
// checking that no operation was lost.
//
// Run it from the module root:
//
//	go run ./bench [-runs 21] [-sizes 100,1000] [-remote=false] [-json] [-keep] [-shared ../shared]
//
// See bench/README.md for what the numbers mean.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

const (
	warmups        = 2               // untimed runs of each variant before the timed ones
	historyTasks   = 100             // tasks in both history repositories
	historyCommits = 1000            // commits on refs/liza/state in the long-history repository
	lifecycleTasks = 100             // tasks in the repositories of the worktree claim and merge timings
	remoteTasks    = 100             // tasks on the remotes of the remote-mode timings
	contendAdds    = 10              // tasks each clone adds in the contention runs
	contendBudget  = 5 * time.Minute // LIZA_RETRY_BUDGET of the contention runs
)

// contendClones are the numbers of clones contending on one remote.
var contendClones = []int{1, 2, 4, 8}

// goals are the target ratios git-liza/baseline, by number of tasks.
var goals = map[int]float64{100: 0.30, 1000: 0.10}

const historyGoal = 1.3 // long history may cost at most this times the short one

type options struct {
	runs   int
	sizes  []int
	json   bool
	keep   bool
	shared string
	remote bool
}

// bench holds what every measurement needs: paths and the child environment.
type bench struct {
	opt     options
	tmp     string   // scratch directory, removed at the end unless -keep
	bin     string   // tmp/bin: git-liza (and yq when installed here); first on PATH
	gitLiza string   // the freshly built binary
	yq      string   // mikefarah yq v4
	scripts string   // shared/bench
	env     []string // environment of every child process
}

type stats struct {
	Median  float64   `json:"median_ms"`
	P90     float64   `json:"p90_ms"`
	Samples []float64 `json:"samples_ms"`
}

type sizeResult struct {
	Tasks         int      `json:"tasks"`
	Seed          stats    `json:"seed"`
	GitLiza       stats    `json:"git_liza"`
	GitLizaDirect stats    `json:"git_liza_direct"`
	Ratio         float64  `json:"ratio"`
	RatioDirect   float64  `json:"ratio_direct"`
	Goal          *float64 `json:"goal,omitempty"`
	Floor         *floor   `json:"floor,omitempty"`
}

// floor is what any command run as `git liza` that moves a ref with git
// update-ref pays before doing anything: git's dispatch to a Go program
// that does nothing, and one update-ref process.
type floor struct {
	Dispatch  stats   `json:"dispatch"`   // git liza-floor: git, then an empty Go program
	UpdateRef stats   `json:"update_ref"` // git update-ref REF HEAD
	Median    float64 `json:"median_ms"`  // the sum of the two medians
	Ratio     float64 `json:"ratio"`      // Median to the baseline's median
}

type historyResult struct {
	Tasks        int     `json:"tasks"`
	ShortCommits int     `json:"short_commits"`
	LongCommits  int     `json:"long_commits"`
	Short        stats   `json:"short"`
	Long         stats   `json:"long"`
	Ratio        float64 `json:"ratio"`
	Goal         float64 `json:"goal"`
}

// soloResult is a command timed without a baseline.
type soloResult struct {
	Tasks   int    `json:"tasks"`
	Command string `json:"command"`
	Stats   stats  `json:"stats"`
}

// remoteResult is one task add in local mode and in remote mode over two
// transports, interleaved.
type remoteResult struct {
	Tasks       int     `json:"tasks"`
	Local       stats   `json:"local"`
	File        stats   `json:"file"`
	Daemon      stats   `json:"git_daemon"`
	RatioFile   float64 `json:"ratio_file"`
	RatioDaemon float64 `json:"ratio_git_daemon"`
}

// contentionResult is Clones clones adding AddsPerClone tasks each, all at
// once, through one file:// remote.
type contentionResult struct {
	Clones       int     `json:"clones"`
	AddsPerClone int     `json:"adds_per_clone"`
	WallMS       float64 `json:"wall_ms"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	Add          stats   `json:"add"`           // each acknowledged add, whole process, retries included
	GaveUp       int     `json:"gave_up"`       // adds that spent the retry budget (exit 2): refused, not lost
	SetupCommits int     `json:"setup_commits"` // on the remote's refs/liza/state before the adds
	Commits      int     `json:"commits"`       // and after
	Lost         int     `json:"lost"`
}

type report struct {
	Go            string             `json:"go"`
	Git           string             `json:"git"`
	Yq            string             `json:"yq"`
	NumCPU        int                `json:"nproc"`
	Runs          int                `json:"runs"`
	Sizes         []sizeResult       `json:"sizes"`
	History       historyResult      `json:"history"`
	Claims        []sizeResult       `json:"claims"`
	ClaimWorktree soloResult         `json:"claim_worktree"`
	Merge         soloResult         `json:"merge"`
	Remote        *remoteResult      `json:"remote,omitempty"`
	Contention    []contentionResult `json:"contention,omitempty"`
}

func main() {
	var opt options
	var sizes string
	flag.IntVar(&opt.runs, "runs", 21, "timed runs per variant")
	flag.StringVar(&sizes, "sizes", "100,1000", "comma-separated task counts")
	flag.BoolVar(&opt.json, "json", false, "also print the results as JSON")
	flag.BoolVar(&opt.keep, "keep", false, "keep the temporary directory")
	flag.StringVar(&opt.shared, "shared", "../shared", "the shared/ directory, relative to the module root")
	flag.BoolVar(&opt.remote, "remote", true, "also time remote mode (file:// and git daemon) and clones contending on one remote")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("bad -sizes %q: want positive integers separated by commas", sizes))
		}
		opt.sizes = append(opt.sizes, n)
	}
	if opt.runs < 1 {
		fatal(errors.New("-runs must be at least 1"))
	}
	if err := run(opt); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func run(opt options) error {
	for _, tool := range []string{"go", "git", "bash", "flock", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found on PATH", tool)
		}
	}
	gomod, err := output("", nil, "go", "env", "GOMOD")
	if err != nil || gomod == "" || gomod == os.DevNull {
		return fmt.Errorf("run from inside the git-liza module (go env GOMOD: %q, %v)", gomod, err)
	}
	root := filepath.Dir(gomod)
	if !filepath.IsAbs(opt.shared) {
		opt.shared = filepath.Join(root, opt.shared)
	}
	b := &bench{opt: opt, scripts: filepath.Join(opt.shared, "bench")}
	for _, f := range []string{"gen-state.py", "seed-add.sh", "seed-claim.sh", "install-yq.sh"} {
		if _, err := os.Stat(filepath.Join(b.scripts, f)); err != nil {
			return fmt.Errorf("baseline scripts missing (set -shared): %v", err)
		}
	}

	if b.tmp, err = os.MkdirTemp("", "liza-bench-"); err != nil {
		return err
	}
	if opt.keep {
		defer fmt.Fprintln(os.Stderr, "kept", b.tmp)
	} else {
		defer os.RemoveAll(b.tmp)
	}
	b.bin = filepath.Join(b.tmp, "bin")
	b.gitLiza = filepath.Join(b.bin, "git-liza")
	b.env = childEnv(b.bin)

	progress("building git-liza")
	if _, err := output(root, nil, "go", "build", "-o", b.gitLiza, "."); err != nil {
		return fmt.Errorf("building git-liza: %v", err)
	}
	if err := b.buildFloor(); err != nil {
		return err
	}
	if err := b.findYq(); err != nil {
		return err
	}

	rep := report{Runs: opt.runs, NumCPU: runtime.NumCPU()}
	rep.Go, _ = output("", nil, "go", "version")
	rep.Git, _ = output("", nil, "git", "version")
	rep.Yq, _ = output("", nil, b.yq, "--version")

	for _, n := range opt.sizes {
		r, err := b.measureSize(n)
		if err != nil {
			return fmt.Errorf("%d tasks: %v", n, err)
		}
		rep.Sizes = append(rep.Sizes, r)
	}
	if rep.History, err = b.measureHistory(); err != nil {
		return fmt.Errorf("history: %v", err)
	}
	for _, n := range opt.sizes {
		r, err := b.measureClaim(n)
		if err != nil {
			return fmt.Errorf("claim, %d tasks: %v", n, err)
		}
		rep.Claims = append(rep.Claims, r)
	}
	if rep.ClaimWorktree, err = b.measureClaimWorktree(); err != nil {
		return fmt.Errorf("claim with worktree: %v", err)
	}
	if rep.Merge, err = b.measureMerge(); err != nil {
		return fmt.Errorf("merge: %v", err)
	}
	if opt.remote {
		r, err := b.measureRemote()
		if err != nil {
			return fmt.Errorf("remote mode: %v", err)
		}
		rep.Remote = &r
		for _, n := range contendClones {
			c, err := b.measureContention(n)
			if err != nil {
				return fmt.Errorf("contention, %d clones: %v", n, err)
			}
			rep.Contention = append(rep.Contention, c)
		}
	}

	printTable(rep)
	if opt.json {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Println(string(out))
	}
	return nil
}

// childEnv is the environment of every child: PATH starts with bin, so `git liza`
// finds the fresh build, and nothing that would steer git or git-liza elsewhere
// (LIZA_NOW, LIZA_AGENT_ID, GIT_DIR, ...) leaks in from the caller.
func childEnv(bin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "LIZA_"), k == "PATH",
			k == "GIT_DIR", k == "GIT_WORK_TREE", k == "GIT_INDEX_FILE",
			k == "GIT_COMMON_DIR", k == "GIT_OBJECT_DIRECTORY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// findYq picks mikefarah yq v4 from PATH or ~/go/bin, else installs it into b.bin.
func (b *bench) findYq() error {
	var candidates []string
	if p, err := exec.LookPath("yq"); err == nil {
		candidates = append(candidates, p)
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, "go", "bin", "yq"))
	}
	for _, c := range candidates {
		if v, err := output("", nil, c, "--version"); err == nil && strings.Contains(v, "mikefarah") {
			b.yq = c
			return nil
		}
	}
	progress("mikefarah yq v4 not found; installing it with install-yq.sh")
	env := append(os.Environ(), "BIN="+b.bin)
	if _, err := output("", env, "sh", filepath.Join(b.scripts, "install-yq.sh")); err != nil {
		return fmt.Errorf("mikefarah yq v4 is not on PATH or in ~/go/bin, and install-yq.sh failed: %v", err)
	}
	b.yq = filepath.Join(b.bin, "yq")
	if v, err := output("", nil, b.yq, "--version"); err != nil || !strings.Contains(v, "mikefarah") {
		return fmt.Errorf("install-yq.sh did not produce mikefarah yq: %q %v", v, err)
	}
	return nil
}

// measureSize times the baseline, `git liza` and `git-liza` adding one task to a
// state of n tasks, interleaved.
func (b *bench) measureSize(n int) (sizeResult, error) {
	progress(fmt.Sprintf("%d tasks: setting up", n))
	dir := filepath.Join(b.tmp, fmt.Sprintf("size-%d", n))
	seed, err := b.seedFile(dir, n)
	if err != nil {
		return sizeResult{}, err
	}
	// The baseline edits its own copy; flock takes STATE.lock beside it.
	state := filepath.Join(dir, "state.yaml")
	if err := copyFile(seed, state); err != nil {
		return sizeResult{}, err
	}
	repo := filepath.Join(dir, "repo")
	if err := b.newRepo(repo, seed); err != nil {
		return sizeResult{}, err
	}

	progress(fmt.Sprintf("%d tasks: timing %d+%d runs of each", n, warmups, b.opt.runs))
	yqEnv := append(slices.Clip(b.env), "YQ="+b.yq)
	samples, err := b.interleave([]func(id string) *exec.Cmd{
		func(id string) *exec.Cmd {
			return command(dir, yqEnv, "bash", filepath.Join(b.scripts, "seed-add.sh"), state, id)
		},
		func(id string) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		},
		func(id string) *exec.Cmd { return command(repo, b.env, b.gitLiza, addArgs(id)...) },
		func(id string) *exec.Cmd { return command(repo, b.env, "git", "liza-floor") },
		func(id string) *exec.Cmd {
			return command(repo, b.env, "git", "update-ref", "refs/bench/"+id, "HEAD")
		},
	})
	if err != nil {
		return sizeResult{}, err
	}
	r := sizeResult{Tasks: n, Seed: summarize(samples[0]), GitLiza: summarize(samples[1]), GitLizaDirect: summarize(samples[2])}
	r.Ratio = r.GitLiza.Median / r.Seed.Median
	r.RatioDirect = r.GitLizaDirect.Median / r.Seed.Median
	f := &floor{Dispatch: summarize(samples[3]), UpdateRef: summarize(samples[4])}
	f.Median = f.Dispatch.Median + f.UpdateRef.Median
	f.Ratio = f.Median / r.Seed.Median
	r.Floor = f
	if g, ok := goals[n]; ok {
		r.Goal = &g
	}
	return r, nil
}

// buildFloor builds git-liza-floor, an empty Go program, beside git-liza.
func (b *bench) buildFloor() error {
	dir := filepath.Join(b.tmp, "floor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return err
	}
	if _, err := output(dir, nil, "go", "build", "-o", filepath.Join(b.bin, "git-liza-floor"), "main.go"); err != nil {
		return fmt.Errorf("building git-liza-floor: %v", err)
	}
	return nil
}

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
	// history needs historyCommits-2 filler commits between them.
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

// interleave runs each variant warmups+runs times, rotating the order every
// iteration so that no variant always runs first (or right after a given
// other one), and returns the timed samples of each variant in milliseconds.
// Every run gets a fresh task id.
func (b *bench) interleave(variants []func(id string) *exec.Cmd) ([][]float64, error) {
	runs := make([]func(it int) *exec.Cmd, len(variants))
	for v, f := range variants {
		runs[v] = func(it int) *exec.Cmd { return f(fmt.Sprintf("bench-%c-%d", 'a'+v, it)) }
	}
	return b.interleaveRuns(runs)
}

// interleaveRuns is interleave for variants that pick their own arguments
// from the iteration number (0 to warmups+runs-1).
func (b *bench) interleaveRuns(variants []func(it int) *exec.Cmd) ([][]float64, error) {
	samples := make([][]float64, len(variants))
	for it := 0; it < warmups+b.opt.runs; it++ {
		for k := range variants {
			v := (it + k) % len(variants)
			cmd := variants[v](it)
			d, err := timeRun(cmd)
			if err != nil {
				return nil, err
			}
			if it >= warmups {
				samples[v] = append(samples[v], float64(d.Microseconds())/1000)
			}
		}
	}
	return samples, nil
}

// measureClaim times the baseline, `git liza` and `git-liza` claiming one
// UNCLAIMED task (without a worktree) in a state of n tasks, interleaved. Run
// it takes task-(it+1) for coder-(it+1): a coder holds one task at a time. The
// two git-liza variants claim in repositories of their own, so each finds its
// task unclaimed.
func (b *bench) measureClaim(n int) (sizeResult, error) {
	if total := warmups + b.opt.runs; total > n {
		return sizeResult{}, fmt.Errorf("%d runs need %d unclaimed tasks, and the state has %d", b.opt.runs, total, n)
	}
	progress(fmt.Sprintf("claim, %d tasks: setting up", n))
	dir := filepath.Join(b.tmp, fmt.Sprintf("claim-%d", n))
	seed, err := b.seedFile(dir, n)
	if err != nil {
		return sizeResult{}, err
	}
	state := filepath.Join(dir, "state.yaml")
	if err := copyFile(seed, state); err != nil {
		return sizeResult{}, err
	}
	viaGit, direct := filepath.Join(dir, "repo-git"), filepath.Join(dir, "repo-direct")
	for _, repo := range []string{viaGit, direct} {
		if err := b.newRepo(repo, seed); err != nil {
			return sizeResult{}, err
		}
	}

	progress(fmt.Sprintf("claim, %d tasks: timing %d+%d runs of each", n, warmups, b.opt.runs))
	yqEnv := append(slices.Clip(b.env), "YQ="+b.yq)
	samples, err := b.interleaveRuns([]func(it int) *exec.Cmd{
		func(it int) *exec.Cmd {
			return command(dir, yqEnv, "bash", filepath.Join(b.scripts, "seed-claim.sh"), state, taskID(it), coderID(it))
		},
		func(it int) *exec.Cmd {
			return command(viaGit, b.env, "git", append([]string{"liza"}, claimArgs(it, true)...)...)
		},
		func(it int) *exec.Cmd { return command(direct, b.env, b.gitLiza, claimArgs(it, true)...) },
	})
	if err != nil {
		return sizeResult{}, err
	}
	// seed-claim.sh exits 0 whether or not its select matched: check that
	// every run claimed its task.
	data, err := os.ReadFile(state)
	if err != nil {
		return sizeResult{}, err
	}
	if got, want := strings.Count(string(data), "status: CLAIMED"), warmups+b.opt.runs; got != want {
		return sizeResult{}, fmt.Errorf("the baseline claimed %d tasks, want %d", got, want)
	}
	r := sizeResult{Tasks: n, Seed: summarize(samples[0]), GitLiza: summarize(samples[1]), GitLizaDirect: summarize(samples[2])}
	r.Ratio = r.GitLiza.Median / r.Seed.Median
	r.RatioDirect = r.GitLizaDirect.Median / r.Seed.Median
	if g, ok := goals[n]; ok {
		r.Goal = &g
	}
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

// measureRemote times `git liza task add` on a state of remoteTasks tasks in
// three setups, interleaved: a repository in local mode (no liza.remote); a
// clone in remote mode whose remote is a bare repository reached over
// file://; and one whose remote is served by git daemon on 127.0.0.1. In
// remote mode every add fetches the remote's refs/liza/state and pushes the
// new commit atomically. The daemon is stopped on the way out, error or not.
func (b *bench) measureRemote() (remoteResult, error) {
	progress("remote mode: setting up local, file:// and git daemon")
	dir := filepath.Join(b.tmp, "remote")
	seed, err := b.seedFile(dir, remoteTasks)
	if err != nil {
		return remoteResult{}, err
	}
	local := filepath.Join(dir, "local")
	if err := b.newRepo(local, seed); err != nil {
		return remoteResult{}, err
	}
	fileHub, err := b.newHub(filepath.Join(dir, "file"), seed)
	if err != nil {
		return remoteResult{}, err
	}
	viaFile := filepath.Join(dir, "file-clone")
	if err := b.remoteClone("file://"+fileHub, viaFile); err != nil {
		return remoteResult{}, err
	}
	served := filepath.Join(dir, "served")
	if _, err := b.newHub(served, seed); err != nil {
		return remoteResult{}, err
	}
	url, stop, err := b.startDaemon(served, "hub.git")
	if err != nil {
		return remoteResult{}, err
	}
	defer stop()
	viaDaemon := filepath.Join(dir, "daemon-clone")
	if err := b.remoteClone(url, viaDaemon); err != nil {
		return remoteResult{}, err
	}

	progress(fmt.Sprintf("remote mode: timing %d+%d runs of each", warmups, b.opt.runs))
	add := func(repo string) func(id string) *exec.Cmd {
		return func(id string) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		}
	}
	samples, err := b.interleave([]func(id string) *exec.Cmd{add(local), add(viaFile), add(viaDaemon)})
	if err != nil {
		return remoteResult{}, err
	}
	r := remoteResult{Tasks: remoteTasks, Local: summarize(samples[0]), File: summarize(samples[1]), Daemon: summarize(samples[2])}
	r.RatioFile = r.File.Median / r.Local.Median
	r.RatioDaemon = r.Daemon.Median / r.Local.Median
	return r, nil
}

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

// lifecycleRepo makes a repository holding a state of lifecycleTasks
// UNCLAIMED tasks.
func (b *bench) lifecycleRepo(repo string) error {
	seed, err := b.seedFile(filepath.Dir(repo), lifecycleTasks)
	if err != nil {
		return err
	}
	return b.newRepo(repo, seed)
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

// timeRun runs cmd and returns its wall-clock time, process start to exit.
// The command is fully built (binary looked up, buffers attached) beforehand.
func timeRun(cmd *exec.Cmd) (time.Duration, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.Bytes())
	}
	return d, nil
}

func timeErr(cmd *exec.Cmd) error { _, err := timeRun(cmd); return err }

// addArgs is one task add, with the same content the baseline script writes.
func addArgs(id string) []string {
	return []string{"--agent", "planner-1", "task", "add", "--id", id,
		"--desc", "Added task " + id, "--spec", "specs/vision.md",
		"--done", "tests pass", "--scope", "IN: src/" + id}
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

// initRepo makes a git repository at dir with specs/vision.md committed.
func (b *bench) initRepo(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "specs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "specs", "vision.md"), []byte("# Vision\n\nRetry logic for all API calls.\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q"},
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

// newHub makes dir/hub.git, a bare repository standing for a team's shared
// remote, and returns its path. It is a bare clone of a fresh repository
// (dir/src) to which a first clone (dir/publisher) publishes the state: it
// imports seed without liza.remote, then turns remote mode on and runs
// `git liza sync origin`, which pushes refs/liza/state and the integration
// branch.
func (b *bench) newHub(dir, seed string) (string, error) {
	src, hub, pub := filepath.Join(dir, "src"), filepath.Join(dir, "hub.git"), filepath.Join(dir, "publisher")
	if err := b.initRepo(src); err != nil {
		return "", err
	}
	if _, err := output(dir, b.env, "git", "clone", "-q", "--bare", src, hub); err != nil {
		return "", err
	}
	if err := b.clone("file://"+hub, pub); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"liza", "import", seed},
		{"config", "liza.remote", "origin"},
		{"liza", "sync", "origin"},
	} {
		if _, err := output(pub, b.env, "git", args...); err != nil {
			return "", err
		}
	}
	return hub, nil
}

// remoteClone clones url into dir in remote mode (liza.remote is origin)
// and fetches the blackboard with `git liza sync`.
func (b *bench) remoteClone(url, dir string) error {
	if err := b.clone(url, dir, "liza.remote=origin"); err != nil {
		return err
	}
	_, err := output(dir, b.env, "git", "liza", "sync")
	return err
}

// clone clones url into dir with the bench's identity and any further
// config (KEY=VALUE) set in the clone.
func (b *bench) clone(url, dir string, config ...string) error {
	args := []string{"clone", "-q"}
	for _, c := range append([]string{"user.name=Bench", "user.email=bench@liza.invalid", "commit.gpgsign=false"}, config...) {
		args = append(args, "-c", c)
	}
	_, err := output("", b.env, "git", append(args, "--", url, dir)...)
	return err
}

// startDaemon serves the repositories under base with git daemon on a free
// port of 127.0.0.1, pushes allowed, and waits until `git ls-remote` of
// base/repo answers. It returns repo's git:// URL and stop, which kills the
// daemon and waits for it. git-daemon runs directly rather than through
// `git daemon`, so that the kill reaches the server itself.
func (b *bench) startDaemon(base, repo string) (string, func(), error) {
	execPath, err := output("", b.env, "git", "--exec-path")
	if err != nil {
		return "", nil, err
	}
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cmd := command(base, b.env, filepath.Join(execPath, "git-daemon"), "--reuseaddr", "--listen=127.0.0.1",
		"--port="+strconv.Itoa(port), "--base-path="+base, "--export-all", "--enable=receive-pack", base)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("git daemon: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	url := fmt.Sprintf("git://127.0.0.1:%d/%s", port, repo)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := output("", b.env, "git", "ls-remote", url); err == nil {
			return url, stop, nil
		}
		select {
		case err := <-exited:
			return "", nil, fmt.Errorf("git daemon exited before answering (%v)\n%s", err, log.Bytes())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("git daemon on port %d did not answer git ls-remote %s within 10s\n%s", port, url, log.Bytes())
		}
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// padHistory puts n commits on top of refs/liza/state, each with the tip's tree,
// in one git fast-import (a commit with `from` and no file changes keeps its
// parent's tree). They go to a scratch ref first; then refs/liza/state moves.
func (b *bench) padHistory(repo string, n int) error {
	tip, err := output(repo, b.env, "git", "rev-parse", "refs/liza/state")
	if err != nil {
		return err
	}
	const scratch = "refs/bench/history"
	var stream bytes.Buffer
	now := time.Now().Unix()
	for i := 1; i <= n; i++ {
		msg := fmt.Sprintf("note %d\n\nLiza-Op: note\nLiza-Agent: human\n", i)
		fmt.Fprintf(&stream, "commit %s\ncommitter human <human@liza.invalid> %d +0000\ndata %d\n%s", scratch, now, len(msg), msg)
		if i == 1 {
			fmt.Fprintf(&stream, "from %s\n", tip)
		}
		stream.WriteString("\n")
	}
	cmd := command(repo, b.env, "git", "fast-import", "--quiet")
	cmd.Stdin = &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git fast-import: %v\n%s", err, out)
	}
	last, err := output(repo, b.env, "git", "rev-parse", scratch)
	if err != nil {
		return err
	}
	if _, err := output(repo, b.env, "git", "update-ref", "refs/liza/state", last, tip); err != nil {
		return err
	}
	_, err = output(repo, b.env, "git", "update-ref", "-d", scratch)
	return err
}

func command(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// output runs a command and returns its trimmed stdout; the error carries stderr.
func output(dir string, env []string, name string, args ...string) (string, error) {
	cmd := command(dir, env, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

func summarize(ms []float64) stats {
	s := slices.Clone(ms)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	p90 := s[int(math.Ceil(0.9*float64(n)))-1] // nearest rank
	return stats{Median: med, P90: p90, Samples: ms}
}

func progress(msg string) { fmt.Fprintln(os.Stderr, "bench:", msg) }

func printTable(r report) {
	fmt.Printf("machine: %s; %s; nproc %d; %s\n\n", r.Go, r.Git, r.NumCPU, r.Yq)
	fmt.Printf("task add, whole process, median (p90) of %d runs, ms\n", r.Runs)
	printRatios(r.Sizes)
	fmt.Println()
	for _, s := range r.Sizes {
		if f := s.Floor; f != nil {
			fmt.Printf("floor at %d tasks: git liza-floor (an empty Go program) %s + git update-ref %s = %.1f ms, ratio %.3f\n",
				s.Tasks, ms(f.Dispatch), ms(f.UpdateRef), f.Median, f.Ratio)
		}
	}
	h := r.History
	fmt.Printf("\nhistory (%d tasks, git liza task add): %d commits %s ms, %d commits %s ms, ratio %.3f%s (goal <= %.1fx)\n",
		h.Tasks, h.ShortCommits, ms(h.Short), h.LongCommits, ms(h.Long), h.Ratio, verdict(h.Ratio <= h.Goal), h.Goal)

	fmt.Printf("\nclaim ID --no-worktree, whole process, median (p90) of %d runs, ms\n", r.Runs)
	printRatios(r.Claims)
	fmt.Println()
	for _, s := range []soloResult{r.ClaimWorktree, r.Merge} {
		fmt.Printf("%s (%d tasks, no baseline): %s ms\n", s.Command, s.Tasks, ms(s.Stats))
	}

	if m := r.Remote; m != nil {
		fmt.Printf("\nremote mode: git liza task add (%d tasks), whole process, median (p90) of %d runs, ms\n", m.Tasks, r.Runs)
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "local\tfile://\tgit daemon\tratio(file://)\tratio(git daemon)")
		fmt.Fprintf(w, "%s\t%s\t%s\t%.2f\t%.2f\n", ms(m.Local), ms(m.File), ms(m.Daemon), m.RatioFile, m.RatioDaemon)
		w.Flush()
	}
	if len(r.Contention) > 0 {
		fmt.Printf("\nclones contending on one file:// remote (%d tasks), %d adds per clone, all started at once\n", remoteTasks, contendAdds)
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "clones\tadds\twall ms\tops/s\tadd ms, median (p90)\tcommits (setup+adds)\tgave up\tlost")
		lost := 0
		for _, c := range r.Contention {
			fmt.Fprintf(w, "%d\t%d\t%.0f\t%.1f\t%s\t%d+%d\t%d\t%d\n", c.Clones, c.Clones*c.AddsPerClone, c.WallMS, c.OpsPerSec,
				ms(c.Add), c.SetupCommits, c.Commits-c.SetupCommits, c.GaveUp, c.Lost)
			lost += c.Lost
		}
		w.Flush()
		fmt.Printf("lost: %d (every acknowledged add is on the remote once, one commit each)\n", lost)
	}
}

// printRatios prints a table of git-liza against the baseline, by number of tasks.
func printRatios(rows []sizeResult) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "tasks\tseed(flock+yq)\tgit liza\tgit-liza\tratio(git liza)\tratio(git-liza)\tgoal")
	for _, s := range rows {
		goal, mark := "-", func(float64) string { return "" }
		if s.Goal != nil {
			goal = fmt.Sprintf("<= %.2f", *s.Goal)
			mark = func(x float64) string { return verdict(x <= *s.Goal) }
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%.3f%s\t%.3f%s\t%s\n", s.Tasks,
			ms(s.Seed), ms(s.GitLiza), ms(s.GitLizaDirect),
			s.Ratio, mark(s.Ratio), s.RatioDirect, mark(s.RatioDirect), goal)
	}
	w.Flush()
}

func ms(s stats) string { return fmt.Sprintf("%.1f (%.1f)", s.Median, s.P90) }

func verdict(ok bool) string {
	if ok {
		return " ok"
	}
	return " MISSED"
}
