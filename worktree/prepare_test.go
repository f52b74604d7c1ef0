package worktree

import (
	"context"
	"testing"
)

// A repository without .worktreeinclude: Prepare copies nothing and runs
// no setup.
func TestPrepareNothing(t *testing.T) {
	r := newRepo(t)
	got, err := Prepare(context.Background(), r.repo, Prep{Dir: t.TempDir(), Kind: KindTask, Task: "t1", Source: r.base})
	if err != nil || len(got.Copied) != 0 || got.Setup != nil {
		t.Fatalf("Prepare = %+v, %v; want nothing done", got, err)
	}
}
