package refstore

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/liza-dev/git-liza/contracts"
)

// FileAt reports whether path names a file (or directory) in the tree of
// commit. It walks trees with go-git and starts no process.
func (r *Repo) FileAt(commit Hash, path string) (bool, error) {
	c, err := r.ReadCommit(commit)
	if err != nil {
		return false, err
	}
	id := c.Tree
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		entries, err := r.ReadTree(id)
		if err != nil {
			return false, err
		}
		found := false
		for _, e := range entries {
			if e.Name == p {
				if i < len(parts)-1 && !e.IsTree() {
					return false, nil
				}
				id, found = e.ID, true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// ResolveCommit turns a revision (a name, a sha, refs/liza/state~3) into a
// commit id with git rev-parse. An unknown revision is bad input.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (Hash, error) {
	out, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	s := strings.TrimSpace(string(out))
	var ge *GitError
	if errors.As(err, &ge) || err == nil && !plumbing.IsHash(s) {
		return Hash{}, contracts.Invalidf("unknown revision %q", rev)
	}
	if err != nil {
		return Hash{}, err
	}
	return plumbing.NewHash(s), nil
}
