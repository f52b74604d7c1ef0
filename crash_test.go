package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// TestCrashInjection kills git-liza with SIGKILL at random moments and at
// named points inside its operations (claim, submit, review, verdict,
// merge, merge --queue with its batches and bisections, sync, import), hundreds of times against one repository and a
// bare remote, and checks after each run that the task can still move on
// (the same request again succeeds, or is refused for a reason of the
// contract, never for a leftover), and every few runs and at the end that
// the state validates with its history, the integration branch and the
// state agree, git fsck is clean, and worktree prune leaves nothing of
// git-liza's behind. It reports how many runs of each operation it made,
// how many kills landed inside an operation, how many leftovers the next
// commands repaired, and the failures, which must be none.
//
//	LIZA_CRASH_RUNS=300 go test -run TestCrashInjection -timeout 30m .
//
// LIZA_CRASH_SEED repeats a run's random choices. It is not part of the
// default go test ./...: it builds git-liza with its crash points
// (-tags crashpoints) and takes minutes.
func TestCrashInjection(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("LIZA_CRASH_RUNS"))
	if runs <= 0 {
		t.Skip("set LIZA_CRASH_RUNS=N to kill git-liza N times (minutes)")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LIZA_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("LIZA_CRASH_SEED=%d", seed)
	h := newCrashHarness(t, seed)
	// Batches of their own first, while the board has room in flight.
	h.batches(max(2, runs/25))
	h.hereClaims(max(len(herePoints), runs/15))
	for i := 1; i <= runs; i++ {
		h.run(i)
		if i%25 == 0 || i == runs {
			h.check(fmt.Sprintf("after run %d", i))
			t.Logf("%d runs: %d kills landed, %d failures", i, h.landed, len(h.failures))
		}
	}
	h.drain()
	// What the last kills left is judged stale once it is older than a
	// git command takes.
	time.Sleep(refstore.StaleLockAge)
	h.prune()
	h.check("at the end")
	h.report()
}

type crashHarness struct {
	t        *testing.T
	rng      *rand.Rand
	bin      string
	env      []string
	proj     string // local mode
	hub      string // bare remote
	clone    string // remote mode, on hub
	peer     string // another remote-mode clone
	next     int    // request ids, task ids
	ops      map[string]int
	landed   int
	points   map[string]int
	repairs  map[string]int
	refusals map[string]int
	failures []string
	notes    []string // made offline in the clone, each to reach the remote
	marked   []string // of those, the ones planner-1 marked processed offline, by their number there
	// fix are the tasks claimed back after INTEGRATION_FAILED: their next
	// work merges the integration branch and drops what broke the test.
	fix map[string]bool
	// breaks says which tasks' first piece of work breaks the test (for
	// the others, chance does).
	breaks map[string]bool
	took   map[string][]time.Duration
}

// operation kinds the harness kills.
var crashOps = []string{"claim", "submit", "review", "verdict", "merge", "queue", "sync", "import"}

// crash points (proc.CrashPoint) each operation passes.
var crashPoints = map[string][]string{
	// pack:renamed is an operation's pack in place without its index;
	// pack:tidied, once in a few operations, the small packs merged and
	// not yet removed (refstore's tidyPacks).
	"claim":   {"claim:worktree", "pack:renamed", "cas:commit", "refs:locked", "refs:logged", "claim:committed", "pack:tidied"},
	"submit":  {"pack:renamed", "cas:commit", "refs:locked", "refs:logged", "submit:recorded", "pack:tidied"},
	"review":  {"pack:renamed", "cas:commit", "refs:locked", "refs:logged", "pack:tidied"},
	"verdict": {"pack:renamed", "cas:commit", "refs:locked", "refs:logged"},
	"merge":   {"merge:test", "cas:commit", "merge:committed", "worktree:discard", "worktree:branch"},
	// merge --queue: a batch's test, its landing, the worktrees it
	// removes after, and the INTEGRATION_FAILED of a task its bisection
	// isolated, with more landings or tests to come.
	"queue":  {"merge:test", "cas:commit", "queue:landed", "queue:isolated", "worktree:discard", "worktree:branch"},
	"import": {"pack:renamed", "cas:commit", "refs:locked", "refs:logged"},
}

func newCrashHarness(t *testing.T, seed uint64) *crashHarness {
	work := t.TempDir()
	work, _ = filepath.EvalSymlinks(work)
	h := &crashHarness{
		t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		bin: filepath.Join(work, "bin", "git-liza"), proj: filepath.Join(work, "proj"), hub: filepath.Join(work, "hub.git"),
		clone: filepath.Join(work, "clone"), peer: filepath.Join(work, "peer"),
		ops: map[string]int{}, points: map[string]int{}, repairs: map[string]int{}, refusals: map[string]int{}, took: map[string][]time.Duration{},
		fix: map[string]bool{}, breaks: map[string]bool{},
	}
	// canoncheck: every state file the harness's git-liza writes or
	// reads is written or read by the YAML library too, and a
	// difference panics, which exec reports.
	build := exec.Command("go", "build", "-tags", "crashpoints,canoncheck", "-o", h.bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags crashpoints,canoncheck: %v\n%s", err, out)
	}
	home := filepath.Join(work, "home")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "LIZA_") || k == "HOME" || k == "PATH" {
			continue
		}
		h.env = append(h.env, kv)
	}
	h.env = append(h.env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com",
		"PATH="+filepath.Dir(h.bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+filepath.Join(work, "tmp"))
	os.MkdirAll(filepath.Join(work, "tmp"), 0o755)

	// The local board: an integration test that takes a moment, so that
	// kills land during it too, and fails while a task's file says
	// "breaks" (the merge queue then bisects its batch).
	os.MkdirAll(filepath.Join(h.proj, "specs"), 0o755)
	os.MkdirAll(filepath.Join(h.proj, "scripts"), 0o755)
	os.WriteFile(filepath.Join(h.proj, "specs", "vision.md"), []byte("vision\n"), 0o644)
	os.WriteFile(filepath.Join(h.proj, "scripts", "integration-test.sh"), []byte("sleep 0.05\nif grep -l breaks files/*.txt 2>/dev/null; then echo breaks; exit 1; fi\necho built > build.out\n"), 0o644)
	h.must(h.proj, "git", "init", "-q", "-b", "main")
	h.must(h.proj, "git", "add", ".")
	h.must(h.proj, "git", "commit", "-q", "-m", "start")
	h.must(h.proj, "git-liza", "init", "crash test")
	for i := 0; i < 12; i++ {
		h.addTask(h.proj)
	}

	// The shared board: a bare remote and two clones in remote mode.
	h.must(filepath.Dir(h.hub), "git", "clone", "-q", "--bare", h.proj, h.hub)
	for _, c := range []string{h.clone, h.peer} {
		h.must(filepath.Dir(c), "git", "clone", "-q", h.hub, c)
		h.must(c, "git", "config", "liza.remote", "origin")
	}
	h.must(h.clone, "git-liza", "init", "shared board")
	h.must(h.peer, "git-liza", "sync")
	return h
}

// result is one process's end.
type result struct {
	code           int
	killed         bool // by our SIGKILL, before it ended
	stdout, stderr string
	took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, killed %v\nstdout: %s\nstderr: %s", r.code, r.killed, r.stdout, r.stderr)
}

// exec runs a command; with kill > 0 it is killed that long after it
// starts (with group, its process group too: the git it runs); with crash
// set, it kills itself at that crash point.
func (h *crashHarness) exec(dir string, kill time.Duration, group bool, crash string, name string, args ...string) result {
	if name == "git-liza" {
		name = h.bin
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = h.env
	if crash != "" {
		cmd.Env = append(slices.Clone(h.env), "LIZA_CRASH_AT="+crash)
	}
	cmd.SysProcAttr = groupAttr()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("%s %s in %s: %v", name, strings.Join(args, " "), dir, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	if kill > 0 {
		select {
		case err = <-done:
		case <-time.After(kill):
			if group {
				signalGroup(cmd.Process.Pid, syscall.SIGKILL)
			} else {
				cmd.Process.Kill()
			}
			err = <-done
		}
	} else {
		err = <-done
	}
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(began)}
	if strings.Contains(r.stdout, ": resumed the replay") {
		h.repairs["killed sync's replay resumed"]++
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			r.killed = true
		}
	} else if err != nil {
		h.t.Fatal(err)
	}
	if crash != "" && group {
		// The point killed its group: git children ended with it.
		signalGroup(cmd.Process.Pid, syscall.SIGKILL)
	}
	if !r.killed && strings.Contains(r.stderr, "panic: ") && strings.Contains(r.stderr, "goroutine ") {
		h.fail("%s %s panicked:\n%s", name, strings.Join(args, " "), r.stderr)
	}
	h.countRepairs(r.stderr)
	return r
}

// repairKinds sort the lines in which commands say what they repaired.
var repairKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"empty commondir written", regexp.MustCompile(`^repaired .*/commondir: `)},
	{"stale lock of git's removed", regexp.MustCompile(`^removed \S+\.lock: a lock of git's`)},
	{"killed writer's ref lock removed", regexp.MustCompile(`^removed \S+\.lock: the lock of a git-liza process killed`)},
	{"half-made claim worktree removed", regexp.MustCompile(`^removed \S+: the worktree the claim .* was making when it died`)},
	{"dead claim's worktree unlocked", regexp.MustCompile(`^unlocked \S+: the claim `)},
	{"dead claim's worktree removed", regexp.MustCompile(`^removed \S+( and branch \S+)?: the claim .* died before the claim committed`)},
	{"throwaway worktree removed", regexp.MustCompile(`^removed \S+: the throwaway worktree of|^removed \S+: a throwaway`)},
	{"half-removed registration removed", regexp.MustCompile(`^removed the registration of |^forgot the registration of `)},
	{"trash emptied", regexp.MustCompile(`^emptied `)},
	{"merged task's worktree and branch removed", regexp.MustCompile(`^removed the worktree and branch of `)},
	{"torn merge finished", regexp.MustCompile(`^moved \S+ to \S+: the merge of `)},
	{"named, not touched", regexp.MustCompile(`^kept |: rm `)},
}

func (h *crashHarness) countRepairs(stderr string) {
	for _, line := range strings.Split(stderr, "\n") {
		msg, ok := strings.CutPrefix(line, "git-liza: ")
		if !ok {
			continue
		}
		for _, k := range repairKinds {
			if k.re.MatchString(msg) {
				h.repairs[k.kind]++
				break
			}
		}
	}
}

func (h *crashHarness) must(dir, name string, args ...string) string {
	h.t.Helper()
	r := h.exec(dir, 0, false, "", name, args...)
	if r.code != 0 {
		h.t.Fatalf("%s %s in %s: %s", name, strings.Join(args, " "), filepath.Base(dir), r)
	}
	return r.stdout
}

func (h *crashHarness) fail(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	h.failures = append(h.failures, msg)
	h.t.Errorf("%s", msg)
}

// run kills one operation, at a random moment or at a crash point, then
// asks for the same again and checks that it passes.
func (h *crashHarness) run(i int) {
	if i%10 == 0 {
		// Packed refs make branch deletions take packed-refs.lock.
		h.must(h.proj, "git", "pack-refs", "--all")
	}
	if h.rng.IntN(12) == 0 {
		h.addTask(h.proj)
	}
	s := h.plan()
	if s == nil {
		h.addTask(h.proj)
		return
	}
	h.ops[s.op]++
	group := h.rng.IntN(2) == 0
	crash, how := "", ""
	var kill time.Duration
	// Two kills in five at a named point; four for the merge queue, whose
	// batches come less often and whose points (a landing with more to
	// come, an isolation) random moments seldom hit.
	atPoint := 2
	if s.op == "queue" {
		atPoint = 4
	}
	if pts := crashPoints[s.op]; len(pts) > 0 && h.rng.IntN(5) < atPoint {
		crash = pts[h.rng.IntN(len(pts))]
		how = "at " + crash
		if group {
			crash += ":group"
		}
	} else {
		kill = time.Duration(1 + h.rng.Int64N(int64(h.estimate(s.op))))
		how = "after " + kill.Round(time.Millisecond).String()
	}
	if group {
		how += " with its git"
	}
	// Now and then a person looks at the worktrees meanwhile: that must
	// neither fail nor take what a live process is making.
	var bystander chan result
	if s.dir == h.proj && h.rng.IntN(4) == 0 {
		bystander = make(chan result, 1)
		go func() {
			time.Sleep(time.Duration(h.rng.Int64N(int64(30 * time.Millisecond))))
			bystander <- h.exec(h.proj, 0, false, "", "git-liza", "worktree", "list")
		}()
	}
	r := h.exec(s.dir, kill, group, crash, "git-liza", s.args...)
	if r.killed {
		h.landed++
		if crash != "" {
			h.points[strings.TrimSuffix(crash, ":group")]++
		}
	} else if r.code != 0 && !h.refusedOK(s, r) {
		h.fail("run %d: %s %s (not killed) failed: %s", i, s.op, strings.Join(s.args, " "), r)
	}
	if bystander != nil {
		if b := <-bystander; b.code != 0 {
			h.fail("run %d: worktree list beside %s %s: %s", i, s.op, how, b)
		}
	}
	again := h.exec(s.dir, 0, false, "", "git-liza", s.args...)
	if again.code == 0 {
		h.took[s.op] = append(h.took[s.op], again.took)
	} else if !h.refusedOK(s, again) {
		h.fail("run %d: %s killed %s; the same request again: %s", i, s.op, how, again)
		return
	} else {
		h.refusals[s.op]++
	}
	if s.after != nil {
		s.after()
	}
}

func (h *crashHarness) report() {
	var ops []string
	total := 0
	for _, op := range crashOps {
		ops = append(ops, fmt.Sprintf("%s %d", op, h.ops[op]))
		total += h.ops[op]
	}
	var pts []string
	for p, n := range h.points {
		pts = append(pts, fmt.Sprintf("%s %d", p, n))
	}
	sort.Strings(pts)
	var reps []string
	repaired := 0
	for k, n := range h.repairs {
		reps = append(reps, fmt.Sprintf("%s %d", k, n))
		repaired += n
	}
	sort.Strings(reps)
	var refs []string
	for k, n := range h.refusals {
		refs = append(refs, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(refs)
	h.t.Logf("runs: %d (%s)", total, strings.Join(ops, ", "))
	h.t.Logf("kills landed mid-operation: %d (at crash points: %s)", h.landed, strings.Join(pts, ", "))
	h.t.Logf("leftovers found and repaired by the next commands: %d (%s)", repaired-h.repairs["named, not touched"], strings.Join(reps, ", "))
	h.t.Logf("follow-ups refused for the contract (the killed request had landed): %s", strings.Join(refs, ", "))
	h.t.Logf("failures: %d", len(h.failures))
}
