package ops_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestClaimPathsCacheKeepsTaskCommits: what a claim reads of the tasks in
// flight (their base and reviewed commits) is kept in the changes cache by
// the object id of each task's file, so that the next claim decodes none
// of them. The cache is trusted only for the file it names: an entry an
// agent rewrote steers the preference and nothing else, and once the
// task's file changes the entry is not read again.
func TestClaimPathsCacheKeepsTaskCommits(t *testing.T) {
	human, root := newBoard(t)
	ctx := context.Background()
	ok := succeeds(t)
	ok(human.As("planner-1", 0).AddTask(ctx, ops.AddTaskRequest{Task: task("x")}))
	coder := human.As("coder-1", 0)
	ok(coder.Claim(ctx, ops.ClaimRequest{Task: "x"}))
	commitIn(t, root, "x", "src/a.go", "a\n")
	want := map[string][]string{"x": {"src/a.go"}}
	if got, err := human.InFlightChanges(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("what the branches in flight change: %v %v, want %v", got, err, want)
	}
	read := func() map[string]map[string]any {
		t.Helper()
		b, err := os.ReadFile(human.ChangesCachePath())
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := read()
	if len(c["tasks"]) != 1 || len(c["branches"]) != 1 {
		t.Fatalf("the cache after a claim's read: %v", c)
	}

	// An entry that says x's branch starts at its tip: x is not read from
	// its file, and changes nothing the preference sees.
	tip := git(t, root, "rev-parse", "refs/heads/task/x")
	for file := range c["tasks"] {
		c["tasks"][file] = map[string]any{"base": tip}
	}
	b, _ := json.Marshal(c)
	write(t, human.ChangesCachePath(), string(b))
	if got, err := human.InFlightChanges(ctx); err != nil || len(got) != 0 {
		t.Fatalf("with the rewritten entry: %v %v, want nothing", got, err)
	}

	// x's file changes (its coder checkpoints): the entry names a file the
	// state no longer has, and x is read again.
	ok(coder.Checkpoint(ctx, ops.CheckpointRequest{Task: "x", Checkpoint: contracts.Checkpoint{Intent: "write a", Validation: "go test", FilesToModify: []string{"src/a.go"}}}))
	if got, err := human.InFlightChanges(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after x's file changed: %v %v, want %v", got, err, want)
	}
}
