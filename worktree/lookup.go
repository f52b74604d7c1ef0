package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// find is the registration of task id's worktree, or nil (the caller
// holds lockRepo). Git names a registration after the worktree's
// directory (id, or id and a number when that name was taken), and the
// worktree's .git file names its registration: find reads those, not
// every registration, since claims and merges ask for one task's with the
// whole review queue registered. One it cannot see so (moved into place by
// git worktree move, its directory gone) makes git worktree add refuse the
// path, and register then reads them all (findAll).
func find(repo *refstore.Repo, id string) (*entry, error) {
	dir, names, err := adminNames(repo)
	if err != nil {
		return nil, err
	}
	var admins []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, id); ok && strings.Trim(rest, "0123456789") == "" {
			admins = append(admins, filepath.Join(dir, n))
		}
	}
	path, err := Path(repo, id)
	if err != nil {
		return nil, err
	}
	if g, ok := gitdirIn(path, ".git"); ok {
		admins = append(admins, g)
	}
	a := areasOf(repo)
	real := ""
	for i, admin := range admins {
		if slices.Contains(admins[:i], admin) {
			continue
		}
		// Most names that only begin with id are other tasks' (t-1 and
		// t-12): their gitdir says so.
		if g, ok := gitdirIn(admin, "gitdir"); ok && filepath.Dir(g) != path {
			if real == "" {
				real = realPath(path)
			}
			if filepath.Dir(g) != real {
				continue
			}
		}
		if e := read(a, admin); e.kind == taskTree && e.id == id {
			return e, nil
		}
	}
	return nil, nil
}

// gitdirIn reads the path that file in dir names: a worktree's .git file
// ("gitdir: " and its registration), or a registration's gitdir (the
// worktree's .git file).
func gitdirIn(dir, file string) (string, bool) {
	b, ok := readSmall(filepath.Join(dir, file))
	if !ok {
		return "", false
	}
	g := strings.TrimSpace(string(b))
	if file == ".git" {
		if g, ok = strings.CutPrefix(g, "gitdir: "); !ok {
			return "", false
		}
	}
	if g == "" {
		return "", false
	}
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	return filepath.Clean(g), true
}

// adminNames lists the names in git's registry of worktrees (dir), in
// order, without looking at each: none when there is no registry.
func adminNames(repo *refstore.Repo) (dir string, names []string, err error) {
	dir = filepath.Join(repo.CommonDir, "worktrees")
	f, err := os.Open(dir)
	if os.IsNotExist(err) {
		return dir, nil, nil
	}
	if err != nil {
		return dir, nil, err
	}
	names, err = f.Readdirnames(-1)
	f.Close()
	slices.Sort(names)
	return dir, names, err
}

// findAll is find reading every registration.
func findAll(repo *refstore.Repo, id string) (*entry, error) {
	entries, err := scan(repo)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.kind == taskTree && e.id == id {
			return e, nil
		}
	}
	return nil, nil
}

// Inspect reports on a task's worktree.
func Inspect(ctx context.Context, repo *refstore.Repo, id string) (Info, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return Info{}, err
	}
	info, err := inspect(repo, id)
	unlock()
	if err != nil {
		return Info{}, err
	}
	return info, fillDirty(ctx, repo, &info)
}

// inspect is Inspect without Dirty, for a caller holding lockRepo.
func inspect(repo *refstore.Repo, id string) (Info, error) {
	path, err := Path(repo, id)
	if err != nil {
		return Info{}, err
	}
	e, err := find(repo, id)
	if err != nil || e == nil {
		return Info{ID: id, Path: path}, err
	}
	return e.info(repo), nil
}

// List reports every worktree under .worktrees/.
func List(ctx context.Context, repo *refstore.Repo) ([]Info, error) {
	unlock, err := lockRepo(repo)
	if err != nil {
		return nil, err
	}
	infos, err := list(repo)
	unlock()
	if err != nil {
		return nil, err
	}
	for i := range infos {
		if err := fillDirty(ctx, repo, &infos[i]); err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// fillDirty asks git whether a worktree is dirty. One removed meanwhile
// is reported absent.
func fillDirty(ctx context.Context, repo *refstore.Repo, w *Info) error {
	if !w.Exists {
		return nil
	}
	dirty, onlyDeleted, err := status(ctx, repo, w.Path)
	if errors.Is(err, errForeignGitDir) {
		w.Dirty = true
		return nil
	}
	if err != nil {
		if _, serr := os.Stat(filepath.Join(w.Path, ".git")); os.IsNotExist(serr) {
			w.Exists = false
			return nil
		}
		return err
	}
	w.Dirty, w.OnlyDeleted = dirty, onlyDeleted
	return nil
}

// list reports every worktree registered under .worktrees/, not whether
// it is dirty, for a caller holding lockRepo. It reads the registry
// itself: git worktree list dies on a registration a killed process left
// half written.
func list(repo *refstore.Repo) ([]Info, error) {
	if _, err := Root(repo); err != nil {
		return nil, err
	}
	entries, err := scan(repo)
	if err != nil {
		return nil, err
	}
	var infos []Info
	for _, e := range entries {
		if e.kind == taskTree && e.path != "" {
			infos = append(infos, e.info(repo))
		}
	}
	return infos, nil
}

// Dirty reports whether the checkout at path has uncommitted changes or
// untracked files.
func Dirty(ctx context.Context, repo *refstore.Repo, path string) (bool, error) {
	dirty, _, err := status(ctx, repo, path)
	return dirty, err
}

// status is Dirty, and whether the only changes are tracked files deleted
// from the checkout.
func status(ctx context.Context, repo *refstore.Repo, path string) (dirty, onlyDeleted bool, err error) {
	// Without its .git file, git would answer for the checkout around it.
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		return false, false, fmt.Errorf("%s is not a checkout: %w", path, err)
	}
	// The checkout is an agent's to write, its .git file and its git
	// directory's commondir included: git is told which repository it is
	// in, one whose config containment reads, not left to find one there.
	gitDir, err := checkoutGitDir(repo, path)
	if err != nil {
		return false, false, err
	}
	// --no-optional-locks: status refreshes the index when it can, under
	// index.lock, which a kill would leave in the coder's way.
	// --ignore-submodules=dirty: a submodule's own repository (in the
	// checkout, or anywhere its .git file names) has a config nobody
	// scanned; git status would run git there. Its HEAD is still compared
	// with the index, without running anything.
	out, err := refstore.RunPinned(ctx, path, gitDir, repo.CommonDir, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=dirty")
	if err != nil {
		return false, false, err
	}
	onlyDeleted = true
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		dirty = true
		if !strings.HasPrefix(rec, " D ") {
			onlyDeleted = false
		}
	}
	return dirty, dirty && onlyDeleted, nil
}

// checkoutGitDir is the git directory of the checkout at path when it is
// one of repo's: the common directory itself (the main checkout, whose
// .git is that directory), or a registration directly in its worktrees/
// that the checkout's .git file names.
func checkoutGitDir(repo *refstore.Repo, path string) (string, error) {
	dotGit := filepath.Join(path, ".git")
	common := realPath(repo.CommonDir)
	if fi, err := os.Lstat(dotGit); err == nil && fi.IsDir() {
		if realPath(dotGit) == common {
			return repo.CommonDir, nil
		}
	} else if err == nil && fi.Mode().IsRegular() {
		// The resolved path: a link of the agent's that named the
		// registration now could name another directory by the time git
		// runs.
		if g, ok := gitdirIn(path, ".git"); ok {
			if real := realPath(g); filepath.Dir(real) == filepath.Join(common, "worktrees") {
				return real, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w", dotGit, errForeignGitDir)
}

// errForeignGitDir: a checkout whose .git names a git directory that is
// not the repository's. It is kept as if dirty: nothing in it is lost,
// and nothing there is run.
var errForeignGitDir = errors.New("it does not name a git directory of this repository's; git is not run there")
