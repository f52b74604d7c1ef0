package worktree

import (
	"context"

	"github.com/liza-dev/git-liza/refstore"
)

// IncludeFile names the ignored files that are copied into new worktrees.
const IncludeFile = ".worktreeinclude"

func copyIncluded(ctx context.Context, repo *refstore.Repo, p Prep, out *Prepared) error {
	return nil
}
