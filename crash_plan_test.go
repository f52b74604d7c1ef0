package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The crash harness's choices: which operation runs next, on which task,
// as which agent, and what the board must show after it.

func (h *crashHarness) addTask(dir string) string {
	h.next++
	id := fmt.Sprintf("t%d", h.next)
	h.must(dir, "git-liza", "--agent", "planner-1", "task", "add", "--id", id, "--desc", "task "+id, "--spec", "specs/vision.md",
		"--done", "files/"+id+".txt exists", "--scope", "IN: files/"+id+".txt", "--paths", "files/"+id+".txt")
	return id
}

// crashTask is what the harness reads of a task.
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
			out := h.must(h.clone, "git-liza", "--offline", "note", "offline "+req)
			h.notes = append(h.notes, "offline "+req)
			// Half the time the planner marks it processed, offline too,
			// by the number it has here, which the replay renumbers
			// when the remote got notes of its own meanwhile.
			if m := noteAdded.FindStringSubmatch(out); m != nil && h.rng.IntN(2) == 0 {
				h.must(h.clone, "git-liza", "--offline", "--agent", "planner-1", "note", "--done", m[1])
				h.marked = append(h.marked, "offline "+req)
			}
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
		Agents map[string]struct {
			NotesProcessed []int `json:"notes_processed"`
		} `json:"agents"`
	}
	json.Unmarshal([]byte(h.must(h.clone, "git-liza", "show", "--json")), &st)
	have := map[string]int{}
	for i, n := range st.Notes {
		have[n.Message] = i + 1
	}
	for _, n := range h.notes {
		if have[n] == 0 {
			h.fail("after sync, the note %q made offline is not on the remote's board", n)
		}
	}
	// What the planner marked offline is marked on the remote's board,
	// and nothing else: no other clone's note took its number's mark.
	done := st.Agents["planner-1"].NotesProcessed
	for _, n := range h.marked {
		if !slices.Contains(done, have[n]) {
			h.fail("after sync, the note %q the planner marked offline (note %d here) is not marked: %v", n, have[n], done)
		}
	}
	for _, d := range done {
		if d < 1 || d > len(st.Notes) || !slices.Contains(h.marked, st.Notes[d-1].Message) {
			h.fail("after sync, note %d is marked processed, which the planner never marked", d)
		}
	}
}

// noteAdded is what git liza note prints: the note's number.
var noteAdded = regexp.MustCompile(`(?m)^note (\d+) added`)
