// Command bench times one `task add` and one `claim` with git-liza against the
// seed's flock+yq baseline, whole process each, on the same machine and in the
// same run; and, without a baseline, a claim that creates its worktree, a
// merge, and the add and the claim in SHA-1 and SHA-256 repositories, each
// read directly and through git's plumbing. Then remote mode: one `task add`
// in a clone whose blackboard lives on a file:// remote and on a `git daemon`
// on 127.0.0.1, against local mode; and the throughput of 1 to 8 clones
// adding tasks at once through one remote, checking that no operation was
// lost. Then claims whose scripts/worktree-setup.sh installs an npm tree
// offline (-only worktree), the first against the tenth, with npm's cache
// shared through LIZA_CACHE_DIR and private to each worktree. With -compare
// REV, the add and the claim also time git-liza built from git revision REV,
// beside this build.
//
// Run it from the module root:
//
//	go run ./bench [-runs 21] [-sizes 100,1000] [-formats=false] [-remote=false] [-compare REV] [-worktree-rounds 7] [-json] [-keep] [-shared ../shared]
//
// See bench/README.md for what the numbers mean.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

type options struct {
	servePages int
	// soakTasks and soakCoders size the soak (-only soak); soakKill, when
	// set, is about how often it kills a process of the team (kill -9).
	soakTasks, soakCoders int
	soakKill              time.Duration
	runs                  int
	sizes                 []int
	json                  bool
	keep                  bool
	shared                string
	remote                bool
	relay                 bool
	trust                 bool
	compare               string // a git revision of the module's repository to time against; "" for none
	formats               bool
	// scaleTasks and scaleHistory size the board of the whole-board
	// measurements (scaleTasks 0: none).
	scaleTasks, scaleHistory int
	// fairTime is how long the clones of the fairness runs add in a loop
	// (0: no fairness runs).
	fairTime time.Duration
	// teamTasks is how many live tasks the team runs of 1-8 coders merge;
	// teamBoard the size of the board the 20 live tasks of the second run
	// sit on (0 teamTasks: no team runs).
	teamTasks, teamBoard int
	// batchTasks is how many tasks each team of the merge queue's runs
	// merges (0: no such runs).
	batchTasks int
	// batchCaps are further merge_batch values an 8-coder team runs at.
	batchCaps []int
	// collideTasks is how many tasks, each adding a line to one of
	// collideFiles shared files, the collide runs' teams of collideCoders
	// coders merge (0: not).
	collideTasks, collideFiles int
	collideCoders              []int
	// queue is how many tasks wait in review while one task's claim,
	// review and merge are timed (0: not timed).
	queue int
	// bigpush times forged pushes of a huge state file (-only bigpush).
	bigpush bool
	// spend times recording a session's usage (one-task teams).
	spend bool
	// mcp times the MCP server: start-up with the SDK linked in or not,
	// tool calls against commands.
	mcp bool
	// worktreeRounds is how many rounds of new worktrees, whose setup
	// script installs an npm tree, the worktree section times (0: none).
	worktreeRounds int
	// claimSizes are the boards the claims section times a claim and an
	// add on against the floor.
	claimSizes []int
	// only, when not empty, names the sections to run (see -only).
	only map[string]bool
}

// sections are the parts of a run -only can name.
var sections = []string{"base", "claims", "hub", "formats", "remote", "fairness", "trust", "scale", "team", "queue", "batch", "collide", "bigpush", "spend", "mcp", "worktree", "serve", "soak"}

// want reports whether section runs: -only names it, or -only is empty
// and its own flag allows it.
func (o options) want(section string, flag bool) bool {
	if len(o.only) > 0 {
		return o.only[section]
	}
	return flag
}

// bench holds what every measurement needs: paths and the child environment.
type bench struct {
	opt     options
	tmp     string   // scratch directory, removed at the end unless -keep
	bin     string   // tmp/bin: git-liza (and yq when installed here); first on PATH
	gitLiza string   // the freshly built binary
	compare string   // git-liza built from -compare REV, in tmp/bin-compare (not on PATH); "" without -compare
	yq      string   // mikefarah yq v4
	scripts string   // shared/bench
	env     []string // environment of every child process
	// serveHook, set while the web board is measured, watches a team's
	// run (see measureServe).
	serveHook serveTeamHook
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-measure-hook" {
		os.Exit(measureHookMode(os.Args[2:]))
	}
	var opt options
	var sizes string
	flag.IntVar(&opt.runs, "runs", 21, "timed runs per variant")
	flag.StringVar(&sizes, "sizes", "100,1000", "comma-separated task counts")
	flag.BoolVar(&opt.json, "json", false, "also print the results as JSON")
	flag.BoolVar(&opt.keep, "keep", false, "keep the temporary directory")
	flag.StringVar(&opt.shared, "shared", "../shared", "the shared/ directory, relative to the module root")
	flag.BoolVar(&opt.trust, "trust", true, "also time the server's guard per pushed commit and signing per operation")
	flag.BoolVar(&opt.relay, "relay", true, "build git-liza-relay beside git-liza, so that remote mode's git:// connections go through it (false: git connects itself)")
	flag.BoolVar(&opt.remote, "remote", true, "also time remote mode (file:// and git daemon) and clones contending on one remote")
	flag.BoolVar(&opt.formats, "formats", true, "also time SHA-1 and SHA-256 repositories, each read directly and through git's plumbing")
	flag.StringVar(&opt.compare, "compare", "", "also time git-liza built from git revision `REV` of this module's repository, in the add and claim tables")
	flag.IntVar(&opt.scaleTasks, "scale-tasks", 10000, "time the commands that read the whole board, and bytes per add, on a board of `N` tasks (0: not)")
	flag.IntVar(&opt.scaleHistory, "scale-history", 5000, "the last `N` tasks of that board are added one operation each, the history validate --history checks")
	flag.DurationVar(&opt.fairTime, "fair-time", 30*time.Second, "with -remote: how long 1, 2, 4 and 8 clones add tasks in a loop on one remote, to see that each gets its turn (0: not)")
	flag.IntVar(&opt.teamTasks, "team-tasks", 60, "teams of 1, 2, 4 and 8 coders merge `N` tasks each (0: no team runs)")
	flag.IntVar(&opt.teamBoard, "team-board", 2000, "and 2 coders merge 20 tasks on a board of 20, then on one of `N` tasks")
	flag.BoolVar(&opt.bigpush, "bigpush", false, "time pushes of a state commit whose liza.yaml is 200-300 MB to a guarded remote (a minute, a GB of disk)")
	flag.BoolVar(&opt.spend, "spend", true, "time what recording a session's usage costs: one-task teams whose agents report usage or not")
	flag.BoolVar(&opt.mcp, "mcp", true, "time the MCP server: short commands with its SDK linked in or not, a coder's status and checkpoint as commands and as tool calls")
	flag.IntVar(&opt.batchTasks, "batch-tasks", 40, "the merge queue: teams of 1, 2, 4 and 8 coders merge `N` tasks each with a 1 s integration test, one at a time and in batches (0: not)")
	var batchCaps string
	flag.StringVar(&batchCaps, "batch-caps", "", "with the merge queue's runs: also 8 coders at these comma-separated merge_batch `CAPS`")
	flag.IntVar(&opt.collideTasks, "collide-tasks", 24, "tasks that collide: teams merge `N` tasks that each add a line to one of a few shared files, counting the review sessions spent on work that no longer merged (0: not)")
	flag.IntVar(&opt.collideFiles, "collide-files", 3, "with -collide-tasks: how many shared `FILES` the tasks add their lines to")
	var collideCoders string
	flag.StringVar(&collideCoders, "collide-coders", "4,8", "with -collide-tasks: the team sizes (`N,...` coders)")
	flag.IntVar(&opt.queue, "queue", 100, "time one task's claim, review and merge with no other task in review, and with `N` in review (0: not)")
	flag.IntVar(&opt.worktreeRounds, "worktree-rounds", 7, "time `N` rounds of 10 new worktrees whose scripts/worktree-setup.sh installs an npm tree offline, with npm's cache shared through LIZA_CACHE_DIR and private (0: not)")
	flag.IntVar(&opt.soakTasks, "soak-tasks", 300, "with -only soak: a team of scripted agents merges `N` tasks, its rate by tenths, its log's failed merges and repairs, its supervisors' files and memory")
	flag.IntVar(&opt.soakCoders, "soak-coders", 2, "with -only soak: the team's `CODERS`")
	flag.DurationVar(&opt.soakKill, "soak-kill", 0, "with -only soak: kill -9 a random process of the team (a supervisor, a session, a git it runs) about every `INTERVAL`, and check what is left at the end")
	flag.IntVar(&opt.servePages, "serve-pages", 50, "time the web board (git liza serve) with `N` pages open on its events stream (0: not)")
	var only, claimSizes string
	flag.StringVar(&claimSizes, "claim-sizes", "100,10000,50000", "the boards (`N,...` tasks) the claims section times a claim by id, a claim of the best task and an add on, against the floor")
	flag.StringVar(&only, "only", "", "run only these `SECTIONS` (comma-separated: "+strings.Join(sections, ", ")+"); the other flags still size them")
	flag.Parse()
	for _, sec := range strings.Split(only, ",") {
		if sec = strings.TrimSpace(sec); sec == "" {
			continue
		}
		if !slices.Contains(sections, sec) {
			fatal(fmt.Errorf("-only %s: no such section (%s)", sec, strings.Join(sections, ", ")))
		}
		if opt.only == nil {
			opt.only = map[string]bool{}
		}
		opt.only[sec] = true
	}
	for _, c := range strings.Split(batchCaps, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > 64 {
			fatal(fmt.Errorf("bad -batch-caps %q: want merge_batch values from 1 to 64, separated by commas", batchCaps))
		}
		opt.batchCaps = append(opt.batchCaps, n)
	}
	for _, c := range strings.Split(collideCoders, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 || n > 64 {
			fatal(fmt.Errorf("bad -collide-coders %q: want team sizes from 1 to 64, separated by commas", collideCoders))
		}
		opt.collideCoders = append(opt.collideCoders, n)
	}
	if opt.collideFiles < 1 {
		fatal(errors.New("-collide-files must be at least 1"))
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("bad -sizes %q: want positive integers separated by commas", sizes))
		}
		opt.sizes = append(opt.sizes, n)
	}
	for _, s := range strings.Split(claimSizes, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			opt.claimSizes = append(opt.claimSizes, n)
		}
	}
	if opt.scaleTasks > 0 && (opt.scaleHistory < 0 || opt.scaleHistory >= opt.scaleTasks) {
		fatal(errors.New("-scale-history must be at least 0 and below -scale-tasks"))
	}
	if opt.runs < 1 {
		fatal(errors.New("-runs must be at least 1"))
	}
	if err := run(opt); err != nil {
		fatal(err)
	}
}

// measureBase times the add and the claim against the baseline, history,
// a claim with its worktree and a merge.
func (b *bench) measureBase(rep *report) error {
	var err error
	for _, n := range b.opt.sizes {
		r, err := b.measureSize(n)
		if err != nil {
			return fmt.Errorf("%d tasks: %v", n, err)
		}
		rep.Sizes = append(rep.Sizes, r)
	}
	if rep.History, err = b.measureHistory(); err != nil {
		return fmt.Errorf("history: %v", err)
	}
	for _, n := range b.opt.sizes {
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
	return nil
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
	// Remote mode's git:// connections go through the relay when it is
	// beside git-liza, as go install puts it (-relay=false leaves it out).
	if opt.relay {
		if _, err := output(root, nil, "go", "build", "-o", filepath.Join(b.bin, "git-liza-relay"), "./git-liza-relay"); err != nil {
			return fmt.Errorf("building git-liza-relay: %v", err)
		}
	}
	if err := b.buildFloor(root); err != nil {
		return err
	}
	var compareCommit string
	if opt.compare != "" {
		if compareCommit, err = b.buildCompare(root, opt.compare); err != nil {
			return err
		}
	}
	if err := b.findYq(); err != nil {
		return err
	}

	rep := report{Runs: opt.runs, NumCPU: runtime.NumCPU()}
	rep.Go, _ = output("", nil, "go", "version")
	rep.Git, _ = output("", nil, "git", "version")
	rep.Yq, _ = output("", nil, b.yq, "--version")
	if opt.compare != "" {
		rep.Compare = &compareInfo{Rev: opt.compare, Commit: compareCommit}
	}

	if opt.want("base", true) {
		if err := b.measureBase(&rep); err != nil {
			return err
		}
	}
	if opt.want("claims", true) {
		for _, n := range opt.claimSizes {
			r, err := b.measureClaims(n)
			if err != nil {
				return fmt.Errorf("claims, %d tasks: %v", n, err)
			}
			rep.ClaimsFloor = append(rep.ClaimsFloor, r)
		}
	}
	if opt.want("hub", opt.remote) {
		r, err := b.measureHub()
		if err != nil {
			return fmt.Errorf("hub: %v", err)
		}
		rep.Hub = &r
	}
	if opt.want("formats", opt.formats) {
		r, err := b.measureFormats()
		if err != nil {
			return fmt.Errorf("formats: %v", err)
		}
		rep.Formats = &r
	}
	if opt.want("remote", opt.remote) {
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
	if opt.want("fairness", opt.remote && opt.fairTime > 0) {
		for _, n := range contendClones {
			f, err := b.measureFairness(n)
			if err != nil {
				return fmt.Errorf("fairness, %d clones: %v", n, err)
			}
			rep.Fairness = append(rep.Fairness, f)
		}
	}
	if opt.want("trust", opt.trust) {
		t, err := b.measureTrust()
		if err != nil {
			return fmt.Errorf("trust: %v", err)
		}
		rep.Trust = &t
	}

	if opt.want("team", opt.teamTasks > 0) {
		t, err := b.measureTeams()
		if err != nil {
			return fmt.Errorf("team: %v", err)
		}
		rep.Teams = t
	}
	if opt.want("queue", opt.queue > 0) {
		q, err := b.measureQueue()
		if err != nil {
			return fmt.Errorf("queue: %v", err)
		}
		rep.Queue = &q
	}
	if opt.want("batch", opt.batchTasks > 0) {
		r, err := b.measureBatch()
		if err != nil {
			return fmt.Errorf("batch: %v", err)
		}
		rep.Batch = &r
	}
	if opt.want("collide", opt.collideTasks > 0) {
		if opt.collideTasks < 1 {
			return errors.New("-only collide needs -collide-tasks of at least 1")
		}
		r, err := b.measureCollide()
		if err != nil {
			return fmt.Errorf("collide: %v", err)
		}
		rep.Collide = r
	}
	if opt.want("spend", opt.spend) {
		r, err := b.measureSpend()
		if err != nil {
			return fmt.Errorf("spend: %v", err)
		}
		rep.Spend = &r
	}
	if opt.want("mcp", opt.mcp) {
		r, err := b.measureMCP(root)
		if err != nil {
			return fmt.Errorf("mcp: %v", err)
		}
		rep.MCP = &r
	}
	_, npmErr := exec.LookPath("npm")
	if opt.want("worktree", opt.worktreeRounds > 0) && npmErr != nil && !opt.only["worktree"] {
		// On by default, but a machine without npm still runs the rest.
		progress("worktree: skipped, npm not found on PATH")
	} else if opt.want("worktree", opt.worktreeRounds > 0) {
		if opt.worktreeRounds < 1 {
			return errors.New("-only worktree needs -worktree-rounds of at least 1")
		}
		r, err := b.measureWorktree()
		if err != nil {
			return fmt.Errorf("worktree: %v", err)
		}
		rep.Worktree = &r
	}
	if opt.want("serve", opt.servePages > 0) {
		r, err := b.measureServe(root)
		if err != nil {
			return fmt.Errorf("serve: %v", err)
		}
		rep.Serve = &r
	}
	if opt.want("soak", false) {
		if opt.soakTasks < 10 || opt.soakCoders < 1 {
			return errors.New("-only soak needs -soak-tasks of at least 10 and -soak-coders of at least 1")
		}
		r, err := b.measureSoak()
		if err != nil {
			return fmt.Errorf("soak: %v", err)
		}
		rep.Soak = &r
	}
	if opt.want("bigpush", opt.bigpush) {
		r, err := b.measureBigPush()
		if err != nil {
			return fmt.Errorf("bigpush: %v", err)
		}
		rep.BigPush = &r
	}
	if opt.want("scale", opt.scaleTasks > 0) {
		s, err := b.measureScale()
		if err != nil {
			return fmt.Errorf("scale: %v", err)
		}
		rep.Scale = &s
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
