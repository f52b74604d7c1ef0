package worktree

import (
	"context"
	"fmt"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Kinds of worktree that Prepare readies.
const (
	KindTask   = "task"   // a claim's task worktree
	KindReview = "review" // a reviewer's checkout of the commit under review
	KindMerge  = "merge"  // a merge's integration test worktree
)

// Prep says which new worktree Prepare readies and from what.
type Prep struct {
	// Dir is the new worktree, checked out.
	Dir string
	// Kind is KindTask, KindReview or KindMerge.
	Kind string
	// Task is the task the worktree is for.
	Task string
	// Role is the role of the agent that works in it (empty for a merge).
	Role contracts.Role
	// Source is the commit whose .worktreeinclude (and setup script)
	// count: the integration branch's tip, reviewed and merged work, never
	// the task's own branch, which its coder writes.
	Source refstore.Hash
	// Log, when set, is told each line worth a person's reading: what was
	// copied, what was refused and why.
	Log func(string)
	// SetupTimeout bounds the setup step (the config's
	// worktree_setup_timeout); 0 is contracts.DefaultSetupTimeout.
	SetupTimeout time.Duration
}

// Prepared is what Prepare did to a new worktree.
type Prepared struct {
	// Copied are the paths (relative, slash-separated) copied from the
	// main checkout because .worktreeinclude names them.
	Copied []string
	// Skipped says, a line each, what .worktreeinclude named and was not
	// copied, and why.
	Skipped []string
	// Bytes is the size of what was copied.
	Bytes int64
	// Setup is what the setup step did; nil: no setup ran.
	Setup *SetupResult
}

// Prepare readies a worktree that was just made (a claim's, a review's, a
// merge test's) before anyone works in it: the ignored files that
// .worktreeinclude names are copied from the main checkout, then the setup
// step runs. It is called once per new worktree: not when a claim takes on
// a worktree kept from an earlier claim, and not every time the merge
// lane's kept test worktree moves to the next merge.
func Prepare(ctx context.Context, repo *refstore.Repo, p Prep) (*Prepared, error) {
	out := &Prepared{}
	if err := copyIncluded(ctx, repo, p, out); err != nil {
		return out, fmt.Errorf("copy what %s names into %s: %w", IncludeFile, p.Dir, err)
	}
	// Then the setup step, with the copies in place. A failure is a
	// *SetupFailed: the caller undoes the worktree and charges no task.
	res, err := RunSetup(ctx, repo, Setup{Dir: p.Dir, Kind: p.Kind, Task: p.Task, Role: p.Role.IDPrefix(), Source: p.Source, Timeout: p.SetupTimeout})
	out.Setup = res
	if err == nil && res != nil && p.Log != nil {
		p.Log(fmt.Sprintf("%s set up the %s worktree of %s in %.2fs (log: %s)", SetupScript, p.Kind, p.Task, res.Seconds(), res.Log))
	}
	return out, err
}
