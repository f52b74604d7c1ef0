package refstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// FileAt reports whether path names a file (or directory) in the tree of
// commit. It walks trees in-process and starts no process.
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
	h, ok := ParseHash(s)
	if errors.As(err, &ge) || err == nil && !ok {
		return Hash{}, contracts.Invalidf("unknown revision %q", rev)
	}
	if err != nil {
		return Hash{}, err
	}
	return h, nil
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	if ok, known := r.firstParentAncestor(a, b); known {
		return ok, nil
	}
	_, err := r.Git(ctx, "merge-base", "--is-ancestor", a, b)
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// ancestorWalk bounds firstParentAncestor: a state history is a line, and
// what one clone has not seen of it is usually short.
const ancestorWalk = 64

// firstParentAncestor answers IsAncestor for two object ids without git
// when b's first-parent line reaches a within ancestorWalk commits of
// single parents (a linear history, as refs/liza/state is); known is false
// when the walk cannot tell (a merge, a missing object, a longer way).
func (r *Repo) firstParentAncestor(a, b string) (ok, known bool) {
	ha, okA := ParseHash(a)
	hb, okB := ParseHash(b)
	if !okA || !okB {
		return false, false
	}
	for i := 0; i < ancestorWalk; i++ {
		if hb == ha {
			return true, true
		}
		c, err := r.ReadCommit(hb)
		if err != nil || len(c.Parents) > 1 {
			return false, false
		}
		if len(c.Parents) == 0 {
			return false, true // the root, without meeting a
		}
		hb = c.Parents[0]
	}
	return false, false
}

// MergeTree merges theirs into ours without touching any checkout, with
// `git merge-tree --write-tree`. It returns the merged tree, or the paths
// in conflict (and a zero tree): at most MaxConflictNames of them, then
// one entry saying how many more there are (see MergeCheck).
func (r *Repo) MergeTree(ctx context.Context, ours, theirs Hash) (Hash, []string, error) {
	m, err := r.MergeCheck(ctx, ours, theirs)
	if err != nil {
		return Hash{}, nil, err
	}
	if !m.Conflicted() {
		return m.Tree, nil, nil
	}
	paths := m.Conflicts
	if m.More > 0 {
		paths = append(paths, fmt.Sprintf("%d more files", m.More))
	}
	return Hash{}, paths, nil
}

// FileChange is one file a diff touches, with the lines added and removed
// (both -1 for a binary file).
type FileChange struct {
	Path    string
	Added   int
	Removed int
}

// DiffFiles lists the files that differ between two commits, renames
// counted as a deletion and an addition.
func (r *Repo) DiffFiles(ctx context.Context, from, to Hash) ([]FileChange, error) {
	out, err := r.Git(ctx, "diff", "--numstat", "--no-renames", "-z", from.String(), to.String(), "--")
	if err != nil {
		return nil, err
	}
	var changes []FileChange
	for _, rec := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		c := FileChange{Path: parts[2], Added: -1, Removed: -1}
		if parts[0] != "-" {
			c.Added, _ = strconv.Atoi(parts[0])
			c.Removed, _ = strconv.Atoi(parts[1])
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// CheckObjects reads every object reachable from tip and not from base
// (what a task's commits add to the project) and checks each against its
// name: git reads them by id and never checks, and an agent that may
// commit may also rewrite their files, so that a checkout of the reviewed
// id holds other content. A rewritten one comes back as ErrCorrupt.
func (r *Repo) CheckObjects(ctx context.Context, base, tip Hash) error {
	args := []string{"rev-list", "--objects", "--no-object-names", tip.String()}
	if !base.IsZero() {
		args = append(args, "^"+base.String())
	}
	out, err := r.Git(ctx, args...)
	if err != nil {
		return err
	}
	for _, line := range strings.Fields(string(out)) {
		id, ok := ParseHash(line)
		if !ok {
			continue
		}
		if _, _, err := r.odb.read(id); err != nil {
			return err
		}
	}
	return nil
}
