package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// setupTailLines is how many of a failed setup's last lines the check
// quotes.
const setupTailLines = 3

// Setup runs the setup step (scripts/worktree-setup.sh of the
// integration branch) once, as a claim would, in a throwaway worktree of
// the branch's tip, with the copies .worktreeinclude names: whether it
// works, and how long it takes. No script is a warning: worktrees start as
// checked out. branch is the integration branch.
func Setup(ctx context.Context, repo *refstore.Repo, branch string) Check {
	c := Check{Name: "worktree setup", Level: OK}
	tip, ok, err := repo.ReadRef("refs/heads/" + branch)
	if err != nil || !ok {
		if tip, err = repo.ResolveCommit(ctx, "HEAD"); err != nil {
			c.Level, c.Detail = Warn, "no integration branch or HEAD to look in"
			return c
		}
		branch = "HEAD"
	}
	if _, has, err := worktree.SetupScriptAt(repo, tip); err != nil {
		c.Level, c.Detail, c.Code = Fail, err.Error(), contracts.CodeInvalid
		c.Fix = "commit " + worktree.SetupScript + " as a file"
		return c
	} else if !has {
		c.Level, c.Detail = Warn, "no "+worktree.SetupScript+": worktrees start as checked out"
		c.Fix = "add " + worktree.SetupScript + " to install what a worktree needs (LIZA_CACHE_DIR holds download caches)"
		return c
	}
	dir := worktree.MergePath(repo, "doctor")
	if err := worktree.AddDetached(ctx, repo, dir, tip, "", ""); err != nil {
		c.Level, c.Detail, c.Code = Fail, "cannot make a throwaway worktree to try the setup in: "+err.Error(), contracts.CodeGit
		return c
	}
	defer worktree.RemoveDetached(context.WithoutCancel(ctx), repo, dir)
	p, err := worktree.Prepare(ctx, repo, worktree.Prep{Dir: dir, Kind: worktree.KindTask, Task: "doctor",
		Role: contracts.RoleCoder, Source: tip, SetupTimeout: setupTimeout(repo)})
	var f *worktree.SetupFailed
	switch {
	case errors.As(err, &f):
		c.Level, c.Code = Fail, contracts.CodeMissingDep
		what := fmt.Sprintf("exit %d", f.Exit)
		if f.Outcome == worktree.SetupTimeout {
			what = fmt.Sprintf("killed at its timeout of %s", f.Timeout)
		}
		c.Detail = fmt.Sprintf("%s on %s fails in a new worktree (%s); log: %s", worktree.SetupScript, branch, what, f.Log)
		if tail := f.Tail; len(tail) > 0 {
			c.Detail += "; last lines: " + strings.Join(tail[max(0, len(tail)-setupTailLines):], " | ")
		}
		c.Fix = "make it work in a fresh checkout; agents get no task until it does"
	case err != nil:
		c.Level, c.Detail, c.Code = Fail, "cannot try the setup: "+err.Error(), contracts.CodeGit
	case p == nil || p.Setup == nil:
		c.Level, c.Detail = Warn, "no "+worktree.SetupScript+": worktrees start as checked out"
	default:
		c.Detail = fmt.Sprintf("%s on %s sets up a new worktree in %.3fs (log: %s)", worktree.SetupScript, branch, p.Setup.Seconds(), p.Setup.Log)
	}
	return c
}

// setupTimeout is the board's worktree_setup_timeout, or the default.
func setupTimeout(repo *refstore.Repo) (d time.Duration) {
	var c contracts.Config
	if tip, ok, err := repo.ReadRef(refstore.StateRef); err == nil && ok {
		if snap, err := cas.ReadSnapshot(repo, tip); err == nil {
			if st, err := snap.Header(); err == nil {
				c = st.Config
			}
		}
	}
	return c.SetupTimeout()
}
