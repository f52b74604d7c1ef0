package main

import (
	"bytes"
	"encoding/json"
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

	"go.yaml.in/yaml/v3"

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
	build := exec.Command("go", "build", "-tags", "crashpoints", "-o", h.bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags crashpoints: %v\n%s", err, out)
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

func (h *crashHarness) addTask(dir string) string {
	h.next++
	id := fmt.Sprintf("t%d", h.next)
	h.must(dir, "git-liza", "--agent", "planner-1", "task", "add", "--id", id, "--desc", "task "+id, "--spec", "specs/vision.md",
		"--done", "files/"+id+".txt exists", "--scope", "IN: files/"+id+".txt", "--paths", "files/"+id+".txt")
	return id
}

// task is what the harness reads of a task.
type crashTask struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	AssignedTo  string `json:"assigned_to"`
	ReviewingBy string `json:"reviewing_by"`
	MergeCommit string `json:"merge_commit"`
	BaseCommit  string `json:"base_commit"`
	Worktree    string `json:"worktree"`
}

func (h *crashHarness) tasks(dir string) []crashTask {
	var st struct {
		Tasks []crashTask `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(h.must(dir, "git-liza", "show", "--json")), &st); err != nil {
		h.t.Fatal(err)
	}
	return st.Tasks
}

// pick is a random task in one of the statuses, or nil.
func (h *crashHarness) pick(ts []crashTask, ok func(crashTask) bool) *crashTask {
	var c []crashTask
	for _, t := range ts {
		if ok(t) {
			c = append(c, t)
		}
	}
	if len(c) == 0 {
		return nil
	}
	t := c[h.rng.IntN(len(c))]
	return &t
}

// activeCoders are the coders that hold a task they must finish before
// they claim another (one active task per coder): CLAIMED, READY_FOR_REVIEW
// or REJECTED, each but the task except.
func activeCoders(ts []crashTask, except string) map[string]bool {
	busy := map[string]bool{}
	for _, t := range ts {
		switch t.Status {
		case "CLAIMED", "READY_FOR_REVIEW", "REJECTED":
			if t.ID != except {
				busy[t.AssignedTo] = true
			}
		}
	}
	return busy
}

// freeCoder is a coder that holds no active task: one of eight, else one
// further on.
func (h *crashHarness) freeCoder(ts []crashTask) string {
	busy := activeCoders(ts, "")
	for _, n := range h.rng.Perm(8) {
		if c := fmt.Sprintf("coder-%d", n+1); !busy[c] {
			return c
		}
	}
	for n := 9; ; n++ {
		if c := fmt.Sprintf("coder-%d", n); !busy[c] {
			return c
		}
	}
}

// freeReviewer is a reviewer that holds no review.
func (h *crashHarness) freeReviewer(ts []crashTask) string {
	busy := map[string]bool{}
	for _, t := range ts {
		if t.Status == "READY_FOR_REVIEW" {
			busy[t.ReviewingBy] = true
		}
	}
	for _, n := range h.rng.Perm(4) {
		if c := fmt.Sprintf("code-reviewer-%d", n+1); !busy[c] {
			return c
		}
	}
	return ""
}

// step is one operation to kill: where, as whom, what, and which refusals
// of the same request again are the contract's (a follow-up that finds
// the killed request done).
type step struct {
	op, dir string
	args    []string
	task    string
	allowed []string // patterns of stderr a refused follow-up may show
	after   func()   // checks once the follow-up passed
}

// plan chooses the next operation and prepares what it needs.
func (h *crashHarness) plan() *step {
	ts := h.tasks(h.proj)
	h.next++
	req := fmt.Sprintf("crash-%d", h.next)
	weighted := []string{"claim", "claim", "claim", "submit", "submit", "review", "review", "verdict", "verdict", "verdict", "merge", "queue", "queue", "queue", "queue", "sync", "import"}
	for _, op := range h.rng.Perm(len(weighted)) {
		switch weighted[op] {
		case "claim":
			t := h.pick(ts, func(t crashTask) bool {
				return t.Status == "UNCLAIMED" || (t.Status == "REJECTED" || t.Status == "INTEGRATION_FAILED") && !activeCoders(ts, t.ID)[t.AssignedTo]
			})
			if t == nil {
				continue
			}
			c := t.AssignedTo
			if t.Status == "UNCLAIMED" {
				c = h.freeCoder(ts)
			}
			// The board's work-in-progress limit may refuse it: no harm.
			return &step{op: "claim", dir: h.proj, task: t.ID, args: []string{"--agent", c, "--request-id", req, "claim", t.ID},
				after: func() {
					now := h.tasks(h.proj)
					if i := slices.IndexFunc(now, func(x crashTask) bool { return x.ID == t.ID }); i >= 0 && now[i].AssignedTo == c {
						h.claimed(t.ID, c)
						if t.Status == "INTEGRATION_FAILED" && now[i].Status == "CLAIMED" {
							h.fix[t.ID] = true
						}
					}
				},
				allowed: []string{`(?m)^git-liza: \d+ tasks are in flight and max_in_flight is \d+$`}}
		case "submit":
			t := h.pick(ts, func(t crashTask) bool { return t.Status == "CLAIMED" })
			if t == nil {
				continue
			}
			h.work(t.ID, t.AssignedTo)
			return &step{op: "submit", dir: h.proj, task: t.ID, args: []string{"--agent", t.AssignedTo, "--request-id", req, "submit", t.ID}}
		case "review":
			t := h.pick(ts, func(t crashTask) bool { return t.Status == "READY_FOR_REVIEW" && t.ReviewingBy == "" })
			r := h.freeReviewer(ts)
			if t == nil || r == "" {
				continue
			}
			return &step{op: "review", dir: h.proj, task: t.ID, args: []string{"--agent", r, "--request-id", req, "review", t.ID}}
		case "verdict":
			t := h.pick(ts, func(t crashTask) bool { return t.Status == "READY_FOR_REVIEW" && t.ReviewingBy != "" })
			if t == nil {
				continue
			}
			v := []string{"approve"}
			if h.rng.IntN(6) == 0 {
				v = []string{"reject", "--reason", "not yet (" + req + ")"}
			}
			return &step{op: "verdict", dir: h.proj, task: t.ID, args: append([]string{"--agent", t.ReviewingBy, "--request-id", req, "verdict", t.ID}, v...)}
		case "merge":
			t := h.pick(ts, func(t crashTask) bool { return t.Status == "APPROVED" })
			if t == nil {
				continue
			}
			return &step{op: "merge", dir: h.proj, task: t.ID, args: []string{"--agent", "code-reviewer-1", "--request-id", req, "merge", t.ID},
				allowed: []string{`(?m)^git-liza: task ` + t.ID + ` is MERGED, not APPROVED$`,
					`(?m)^git-liza: task ` + t.ID + `: scripts/integration-test.sh failed \(exit 1\); it is INTEGRATION_FAILED`,
					`(?m)^git-liza: task ` + t.ID + ` is INTEGRATION_FAILED, not APPROVED$`}}
		case "queue":
			// A batch needs approved tasks to wait: the queue runs once
			// two or more are.
			if n := len(slices.DeleteFunc(slices.Clone(ts), func(t crashTask) bool { return t.Status != "APPROVED" })); n < 2 {
				continue
			}
			return &step{op: "queue", dir: h.proj, args: []string{"--agent", "code-reviewer-1", "--request-id", req, "merge", "--queue"},
				allowed: []string{queueMissed}}
		case "sync":
			// Operations on both sides, then the sync that replays or
			// publishes them.
			h.must(h.clone, "git-liza", "--offline", "note", "offline "+req)
			h.notes = append(h.notes, "offline "+req)
			if h.rng.IntN(2) == 0 {
				h.must(h.peer, "git-liza", "note", "online "+req)
			}
			return &step{op: "sync", dir: h.clone, args: []string{"sync"}, after: h.synced}
		case "import":
			return &step{op: "import", dir: h.proj, args: []string{"--request-id", req, "import", h.importFile()}}
		}
	}
	return nil
}

// queueMissed is merge --queue's refusal when a task of the queue broke
// the test (or waits for one that did): what the harness means to happen.
const queueMissed = `(?m)^git-liza: \d+ task\(s\) did not merge: `

// work commits the next piece of a task in its worktree: one task in
// five breaks the integration test with its first piece. A task claimed
// back after INTEGRATION_FAILED first takes the integration branch in
// and drops what broke the test.
func (h *crashHarness) work(id, coder string) {
	// The pre-execution checkpoint a submission needs first.
	h.must(h.proj, "git-liza", "--agent", coder, "checkpoint", id, "--intent", "work on "+id, "--validation", "cat files/"+id+".txt", "--files", "files/"+id+".txt")
	wt := filepath.Join(h.proj, ".worktrees", id)
	if h.fix[id] {
		// The commit the claim gave it as its base (the integration tip
		// then): a later tip would bring other tasks' files, which its
		// submission may not touch.
		delete(h.fix, id)
		base := ""
		for _, t := range h.tasks(h.proj) {
			if t.ID == id {
				base = t.BaseCommit
			}
		}
		h.must(wt, "git", "merge", "-q", "--no-edit", base)
		p := filepath.Join(wt, "files", id+".txt")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "breaks\n", "")), 0o644)
	}
	os.MkdirAll(filepath.Join(wt, "files"), 0o755)
	_, err := os.Stat(filepath.Join(wt, "files", id+".txt"))
	first := err != nil
	f, err := os.OpenFile(filepath.Join(wt, "files", id+".txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		h.t.Fatalf("the worktree of %s: %v", id, err)
	}
	fmt.Fprintf(f, "work %d\n", h.next)
	if b, set := h.breaks[id]; first && (b || !set && h.rng.IntN(5) == 0) {
		fmt.Fprintf(f, "breaks\n")
	}
	f.Close()
	h.must(wt, "git", "add", "files")
	h.must(wt, "git", "commit", "-q", "-m", "work on "+id)
}

// importFile is the board as it is, plus one new task, as a seed-format
// file to import.
func (h *crashHarness) importFile() string {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(h.must(h.proj, "git-liza", "export")), &doc); err != nil {
		h.t.Fatal(err)
	}
	h.next++
	id := fmt.Sprintf("t%d", h.next)
	var task yaml.Node
	yaml.Unmarshal([]byte(fmt.Sprintf(`id: %s
description: "imported %s"
status: UNCLAIMED
priority: 3
created: "2026-01-17T10:00:00Z"
spec_ref: specs/vision.md
done_when: "files/%s.txt exists"
scope: "IN: files/%s.txt"
paths: [files/%s.txt]
iteration: 0
history:
  - time: "2026-01-17T10:00:00Z"
    event: created
    agent: human
`, id, id, id, id, id)), &task)
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "tasks" {
			root.Content[i+1].Content = append(root.Content[i+1].Content, task.Content[0])
		}
	}
	b, err := yaml.Marshal(&doc)
	if err != nil {
		h.t.Fatal(err)
	}
	p := filepath.Join(filepath.Dir(h.proj), "import-"+id+".yaml")
	os.WriteFile(p, b, 0o644)
	return p
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

// refusedOK reports whether a refusal is one the contract makes.
func (h *crashHarness) refusedOK(s *step, r result) bool {
	if r.code != 1 {
		return false
	}
	for _, a := range s.allowed {
		if regexp.MustCompile(a).MatchString(r.stderr) {
			return true
		}
	}
	return false
}

// estimate is how long an operation takes when nobody kills it: the
// kills fall within it.
func (h *crashHarness) estimate(op string) time.Duration {
	d := h.took[op]
	if len(d) < 3 {
		return 150 * time.Millisecond
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2] * 5 / 4
}

// claimed checks that the claim left the task's worktree usable.
func (h *crashHarness) claimed(id, coder string) {
	wt := filepath.Join(h.proj, ".worktrees", id)
	r := h.exec(wt, 0, false, "", "git", "symbolic-ref", "HEAD")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "refs/heads/task/"+id {
		h.fail("claim of %s by %s: worktree %s: %s", id, coder, wt, r)
		return
	}
	if l := h.exec(h.proj, 0, false, "", "git", "worktree", "list", "--porcelain"); l.code != 0 {
		h.fail("git worktree list after the claim of %s: %s", id, l)
	} else if strings.Contains(l.stdout, "worktree "+wt+"\n") && regexp.MustCompile(`worktree `+regexp.QuoteMeta(wt)+`\n[^\n]*\n[^\n]*\nlocked`).MatchString(l.stdout) {
		h.fail("the worktree of %s is still locked after its claim", id)
	}
}

// synced checks that the clone's board is the remote's.
func (h *crashHarness) synced() {
	local := strings.TrimSpace(h.must(h.clone, "git", "rev-parse", "refs/liza/state"))
	remote := strings.TrimSpace(h.must(h.hub, "git", "rev-parse", "refs/liza/state"))
	if local != remote {
		h.fail("after sync, the clone's state %s is not the remote's %s", local, remote)
	}
	var st struct {
		Notes []struct {
			Message string `json:"message"`
		} `json:"human_notes"`
	}
	json.Unmarshal([]byte(h.must(h.clone, "git-liza", "show", "--json")), &st)
	have := map[string]bool{}
	for _, n := range st.Notes {
		have[n.Message] = true
	}
	for _, n := range h.notes {
		if !have[n] {
			h.fail("after sync, the note %q made offline is not on the remote's board", n)
		}
	}
}

// check: the state validates with its history, the integration branch
// moved only with merges the state records, git fsck is clean, and git can
// read every worktree.
func (h *crashHarness) check(when string) {
	for _, dir := range []string{h.proj, h.clone} {
		if r := h.exec(dir, 0, false, "", "git-liza", "validate", "--history"); r.code != 0 || !strings.HasPrefix(r.stdout, "VALID") {
			h.fail("%s: validate --history in %s: %s", when, filepath.Base(dir), r)
		}
		if r := h.exec(dir, 0, false, "", "git", "fsck", "--no-progress", "--strict", "--no-dangling"); r.code != 0 || r.stderr != "" {
			h.fail("%s: git fsck in %s: %s", when, filepath.Base(dir), r)
		}
		if r := h.exec(dir, 0, false, "", "git", "worktree", "list", "--porcelain"); r.code != 0 {
			h.fail("%s: git worktree list in %s: %s", when, filepath.Base(dir), r)
		}
	}
	if r := h.exec(h.hub, 0, false, "", "git", "fsck", "--no-progress", "--strict", "--no-dangling"); r.code != 0 || r.stderr != "" {
		h.fail("%s: git fsck in the remote: %s", when, r)
	}
	merged := map[string]string{}
	for _, t := range h.tasks(h.proj) {
		if t.Status == "MERGED" {
			merged[t.MergeCommit] = t.ID
			if r := h.exec(h.proj, 0, false, "", "git", "merge-base", "--is-ancestor", t.MergeCommit, "integration"); r.code != 0 {
				h.fail("%s: the merge of %s, %s, is not on integration", when, t.ID, t.MergeCommit)
			}
		}
	}
	moves := strings.Fields(h.must(h.proj, "git", "reflog", "show", "--format=%H", "refs/heads/integration"))
	for _, c := range moves[:len(moves)-1] {
		if _, ok := merged[c]; !ok {
			h.fail("%s: integration moved to %s, which no MERGED task records", when, c)
		}
	}
}

// drain takes every task to MERGED with no kills, one task at a time
// through all its steps: none may be stuck.
func (h *crashHarness) drain() {
	ts := h.tasks(h.proj)
	// Claimed tasks first (their coders may have rejected tasks to take
	// back), then the rest in flight, then the unclaimed (the board's
	// work-in-progress limit refuses claims while it is full).
	rank := func(t crashTask) int {
		switch t.Status {
		case "CLAIMED":
			return 0
		case "INTEGRATION_FAILED":
			// Its coder may have claimed another since: that one first.
			return 2
		case "UNCLAIMED":
			return 3
		}
		return 1
	}
	slices.SortStableFunc(ts, func(a, b crashTask) int { return rank(a) - rank(b) })
	for _, t := range ts {
		for step := 0; t.Status != "MERGED"; step++ {
			if step == 12 {
				h.fail("drain: task %s is still %s", t.ID, t.Status)
				break
			}
			var args []string
			switch t.Status {
			case "UNCLAIMED":
				args = []string{"--agent", h.freeCoder(h.tasks(h.proj)), "claim", t.ID}
			case "REJECTED":
				args = []string{"--agent", t.AssignedTo, "claim", t.ID}
			case "INTEGRATION_FAILED":
				args = []string{"--agent", t.AssignedTo, "claim", t.ID}
				h.fix[t.ID] = true
			case "CLAIMED":
				h.work(t.ID, t.AssignedTo)
				args = []string{"--agent", t.AssignedTo, "submit", t.ID}
			case "READY_FOR_REVIEW":
				if t.ReviewingBy == "" {
					// A reviewer of its own: the harness's may all hold
					// reviews of tasks further on.
					args = []string{"--agent", "code-reviewer-" + strings.TrimPrefix(t.ID, "t") + "0", "review", t.ID}
				} else {
					args = []string{"--agent", t.ReviewingBy, "verdict", t.ID, "approve"}
				}
			case "APPROVED":
				args = []string{"--agent", "code-reviewer-1", "merge", t.ID}
			case "BLOCKED":
				args = []string{"task", "unblock", t.ID}
			default:
				h.fail("drain: task %s is %s", t.ID, t.Status)
			}
			if r := h.exec(h.proj, 0, false, "", "git-liza", args...); r.code != 0 && !(t.Status == "APPROVED" && r.code == 1 && strings.Contains(r.stderr, "it is INTEGRATION_FAILED")) {
				h.fail("drain: %s: %s", strings.Join(args, " "), r)
				break
			}
			for _, n := range h.tasks(h.proj) {
				if n.ID == t.ID {
					t = n
				}
			}
		}
	}
}

// prune runs worktree prune and checks that nothing of git-liza's is left
// behind: no worktree registration, no throwaway or trash directory, no
// branch of a merged task, no lock of git's.
func (h *crashHarness) prune() {
	r := h.exec(h.proj, 0, false, "", "git-liza", "worktree", "prune")
	if r.code != 0 {
		h.fail("worktree prune: %s", r)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "kept ") {
			h.fail("worktree prune kept something: %s", line)
		}
	}
	h.countRepairs(regexp.MustCompile(`(?m)^`).ReplaceAllString(r.stdout, "git-liza: "))
	git := filepath.Join(h.proj, ".git")
	for _, pattern := range []string{"worktrees/*", "liza/merge/*", "liza/review/*", "liza/trash/*", "refs/*/*.lock", "refs/*/*/*.lock", "*.lock"} {
		got, _ := filepath.Glob(filepath.Join(git, pattern))
		for _, p := range got {
			what := ""
			if strings.HasPrefix(pattern, "worktrees/") {
				for _, f := range []string{"gitdir", "locked", "commondir", "HEAD"} {
					b, err := os.ReadFile(filepath.Join(p, f))
					what += fmt.Sprintf(" %s=%q (%v)", f, b, err)
				}
			}
			h.fail("left after prune: %s%s", p, what)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(h.proj, ".worktrees")); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		h.fail("left after prune in .worktrees: %s", strings.Join(names, " "))
	}
	if b := h.must(h.proj, "git", "branch", "--list", "task/*"); b != "" {
		h.fail("task branches left after prune:\n%s", b)
	}
	if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(h.proj), "tmp", "*")); len(tmp) > 0 {
		h.fail("left in TMPDIR: %v", tmp)
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
