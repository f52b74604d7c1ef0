package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// status gives a model a page of the board, not all of it: the counts of
// every status, the first tasks of each (10 unless limit says, at most
// 100) and how many more each has; the finished tasks only when asked
// for by status. A board of a few hundred tasks whole is past what an
// agent CLI keeps of a tool's result (Claude Code: 50,000 characters,
// then 25,000 tokens).
func TestStatusIsAPage(t *testing.T) {
	b := newBoard(t)
	ctx := context.Background()
	for i := range 400 {
		tk := task(fmt.Sprintf("t%d", i))
		tk.Description = fmt.Sprintf("Retry the calls of client %d with exponential backoff and jitter, give up after five tries and report the last error", i)
		if _, err := b.human.AddTask(ctx, ops.AddTaskRequest{Task: tk}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.human.Abandon(ctx, ops.AbandonRequest{Task: "t7", Reason: "not needed"}); err != nil {
		t.Fatal(err)
	}
	// Every agent that registers stays on the board until it leaves.
	for i := range 60 {
		if _, err := b.human.As(fmt.Sprintf("coder-%d", i+2), 0).Register(ctx, ops.RegisterRequest{Host: "here"}); err != nil {
			t.Fatal(err)
		}
	}
	cs := b.coder(t)
	type page struct {
		Counts map[string]int `json:"counts"`
		Total  int            `json:"total"`
		Tasks  []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"tasks"`
		More       map[string]int `json:"more"`
		Agents     []any          `json:"agents"`
		MoreAgents int            `json:"more_agents"`
	}
	read := func(args string) (page, int) {
		t.Helper()
		res := call(t, cs, "status", args)
		if res.IsError {
			t.Fatalf("status %s refused: %s", args, text(res))
		}
		var p page
		if err := json.Unmarshal([]byte(text(res)), &p); err != nil {
			t.Fatal(err)
		}
		return p, len(text(res))
	}
	listed := func(p page, status string) int {
		n := 0
		for _, x := range p.Tasks {
			if x.Status == status {
				n++
			}
		}
		return n
	}
	unclaimed := 400
	for _, c := range []struct {
		args                 string
		unclaimed, abandoned int
	}{
		{`{}`, 10, 0},
		{`{"limit":100}`, 100, 0},
		{`{"limit":100000}`, 100, 0},
		{`{"statuses":["ABANDONED"]}`, 0, 1},
		{`{"statuses":["UNCLAIMED","ABANDONED"],"limit":3}`, 3, 1},
	} {
		p, size := read(c.args)
		if size > 50000 {
			t.Errorf("status %s: %d characters", c.args, size)
		}
		if p.Counts["UNCLAIMED"] != 400 || p.Counts["ABANDONED"] != 1 || p.Total != 402 {
			t.Fatalf("status %s: counts %v, total %d: the counts are the whole board's", c.args, p.Counts, p.Total)
		}
		if got := listed(p, "UNCLAIMED"); got != c.unclaimed || p.More["UNCLAIMED"] != unclaimed-c.unclaimed && c.unclaimed > 0 {
			t.Errorf("status %s: %d UNCLAIMED listed and %d more, want %d and %d", c.args, got, p.More["UNCLAIMED"], c.unclaimed, unclaimed-c.unclaimed)
		}
		if got := listed(p, "ABANDONED"); got != c.abandoned {
			t.Errorf("status %s: %d ABANDONED listed, want %d", c.args, got, c.abandoned)
		}
		if len(p.Agents) != 50 || p.MoreAgents != 11 {
			t.Errorf("status %s: %d agents and %d more, want 50 and 11", c.args, len(p.Agents), p.MoreAgents)
		}
		if c.abandoned == 0 && p.More["ABANDONED"] != 1 {
			t.Errorf("status %s: the ABANDONED task left out is not counted in more: %v", c.args, p.More)
		}
	}
	refused(t, call(t, cs, "status", `{"limit":-1}`), contracts.CodeInvalid, "limit")
}

// validate gives a model at most 50 problems and 50 warnings, and counts
// the rest: a state broken in every task lists a problem for each.
func TestValidateIsBounded(t *testing.T) {
	b := newBoard(t)
	ctx := context.Background()
	for i := range 80 {
		if _, err := b.human.AddTask(ctx, ops.AddTaskRequest{Task: task(fmt.Sprintf("t%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	// A state commit, not made by git-liza, whose every UNCLAIMED task has
	// a status the contract does not know.
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	gitIn := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = b.root, env, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("", "read-tree", "refs/liza/state")
	broken := 0
	for _, p := range strings.Split(gitIn("", "ls-tree", "-r", "--name-only", "refs/liza/state", "tasks/"), "\n") {
		if !strings.HasSuffix(p, ".yaml") {
			continue
		}
		old := gitIn("", "cat-file", "blob", "refs/liza/state:"+p)
		bad := strings.Replace(old, "status: UNCLAIMED", "status: LOST", 1)
		if bad == old {
			continue
		}
		id := gitIn(bad, "hash-object", "-w", "--stdin")
		gitIn("", "update-index", "--cacheinfo", "100644,"+id+","+p)
		broken++
	}
	tree := gitIn("", "write-tree")
	commit := gitIn("", "commit-tree", tree, "-p", "refs/liza/state", "-m", "liza: broken by hand")
	gitIn("", "update-ref", "refs/liza/state", commit)
	if broken < 80 {
		t.Fatalf("%d tasks broken", broken)
	}
	var v struct {
		Valid        bool     `json:"valid"`
		Problems     []string `json:"problems"`
		MoreProblems int      `json:"more_problems"`
	}
	must(t, b.coder(t), "validate", `{}`, &v)
	if v.Valid || len(v.Problems) != 50 || v.MoreProblems < broken-50 {
		t.Fatalf("validate: valid %v, %d problems and %d more, for %d tasks broken", v.Valid, len(v.Problems), v.MoreProblems, broken)
	}
}
