package main

import (
	"fmt"
	"path/filepath"
)

// buildCompare builds git-liza from git revision rev of the repository
// holding the module at root, as b.compare (tmp/bin-compare/git-liza, not on
// PATH: it runs directly), and returns the commit rev names. The source is a
// detached worktree in tmp, made with `git worktree add --detach` and removed
// with `git worktree remove --force` whether the build worked or not, so the
// repository keeps no trace of it.
func (b *bench) buildCompare(root, rev string) (string, error) {
	progress("building git-liza at " + rev)
	commit, err := output(root, nil, "git", "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("-compare %s: %v", rev, err)
	}
	// The module may sit in a subdirectory of its repository.
	prefix, err := output(root, nil, "git", "rev-parse", "--show-prefix")
	if err != nil {
		return "", err
	}
	src := filepath.Join(b.tmp, "compare-src")
	// The removal also runs when the add fails, in case git left the
	// worktree registered; only its failure after a successful add is news.
	added := false
	defer func() {
		if _, err := output(root, nil, "git", "worktree", "remove", "--force", src); err != nil && added {
			progress(fmt.Sprintf("could not remove the worktree at %s (once it is gone, git worktree prune forgets it): %v", src, err))
		}
	}()
	if _, err := output(root, nil, "git", "worktree", "add", "--detach", src, commit); err != nil {
		return "", fmt.Errorf("-compare %s: %v", rev, err)
	}
	added = true
	bin := filepath.Join(b.tmp, "bin-compare", "git-liza")
	if _, err := output(filepath.Join(src, prefix), nil, "go", "build", "-o", bin, "."); err != nil {
		return "", fmt.Errorf("building git-liza at %s: %v", rev, err)
	}
	b.compare = bin
	return commit, nil
}

// newCompareRepo makes a git repository at dir with specs/vision.md
// committed, where the build bin itself imports seed, so that the state is
// written as that build writes it.
func (b *bench) newCompareRepo(dir, bin, seed string) error {
	if err := b.initRepo(dir); err != nil {
		return err
	}
	_, err := output(dir, b.env, bin, "import", seed)
	return err
}

// setCompare puts the samples of the -compare build in r, and the ratio of
// this build's median (run directly like it, in a repository made the same
// way) to its median.
func (r *sizeResult) setCompare(compare, this []float64) {
	s := summarize(compare)
	r.Compare = &s
	r.RatioCompare = summarize(this).Median / s.Median
}
