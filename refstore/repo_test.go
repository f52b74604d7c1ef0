package refstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// wantDirs checks a Repo's directories against what git itself says in the
// same place, and against the expected values.
func wantDirs(t *testing.T, r *Repo, gitDir, commonDir, workTree, mainWorkTree string) {
	t.Helper()
	for _, c := range []struct{ name, got, want string }{
		{"GitDir", r.GitDir, gitDir},
		{"CommonDir", r.CommonDir, commonDir},
		{"WorkTree", r.WorkTree, workTree},
		{"MainWorkTree", r.MainWorkTree(), mainWorkTree},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if r.Bare() != (workTree == "") {
		t.Errorf("Bare() = %v with WorkTree %q", r.Bare(), workTree)
	}
}

// gitSays asks git for the git dir, common dir and top of the work tree
// from dir ("" top in a bare repository).
func gitSays(t *testing.T, dir string) (gitDir, commonDir, top string) {
	t.Helper()
	gitDir = git(t, dir, "rev-parse", "--absolute-git-dir")
	commonDir = git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if git(t, dir, "rev-parse", "--is-bare-repository") == "false" && git(t, dir, "rev-parse", "--is-inside-work-tree") == "true" {
		top = git(t, dir, "rev-parse", "--show-toplevel")
	}
	return filepath.Clean(gitDir), filepath.Clean(commonDir), top
}

func TestOpenMainCheckout(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	dotgit := filepath.Join(dir, ".git")
	wantDirs(t, r, dotgit, dotgit, dir, dir)
	gd, cd, top := gitSays(t, dir)
	wantDirs(t, r, gd, cd, top, dir)
	if r.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", r.Dir(), dir)
	}
}

func TestOpenSubdirectory(t *testing.T) {
	dir := newRepo(t)
	sub := filepath.Join(dir, "dir")
	r := open(t, sub)
	dotgit := filepath.Join(dir, ".git")
	wantDirs(t, r, dotgit, dotgit, dir, dir)
	gd, cd, top := gitSays(t, sub)
	wantDirs(t, r, gd, cd, top, dir)
}

func TestOpenLinkedWorktree(t *testing.T) {
	dir := newRepo(t)
	wt := filepath.Join(realpath(t, t.TempDir()), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "feature", wt)

	for _, from := range []string{wt, filepath.Join(wt, "dir")} {
		r := open(t, from)
		wantDirs(t, r, filepath.Join(dir, ".git", "worktrees", "wt"), filepath.Join(dir, ".git"), wt, dir)
		gd, cd, top := gitSays(t, from)
		wantDirs(t, r, gd, cd, top, dir)

		// Objects and refs come from the common dir.
		head := hashOf(t, git(t, dir, "rev-parse", "main"))
		if got, ok, err := r.ReadRef("refs/heads/main"); err != nil || !ok || got != head {
			t.Errorf("ReadRef(main) from the worktree = %s, %v, %v; want %s", got, ok, err, head)
		}
		if _, err := r.ReadCommit(head); err != nil {
			t.Errorf("ReadCommit from the worktree: %v", err)
		}
		// HEAD is the worktree's own.
		branch, commit, err := r.Head()
		if err != nil || branch != "refs/heads/feature" || commit != head {
			t.Errorf("Head() = %q, %s, %v; want refs/heads/feature, %s", branch, commit, err, head)
		}
	}
}

func TestOpenWorktreeConfigExtension(t *testing.T) {
	dir := newRepo(t)
	git(t, dir, "config", "core.repositoryformatversion", "1")
	git(t, dir, "config", "extensions.worktreeConfig", "true")
	wt := filepath.Join(realpath(t, t.TempDir()), "wt")
	git(t, dir, "worktree", "add", "-q", "--detach", wt)
	git(t, dir, "config", "liza.where", "repo")
	git(t, wt, "config", "--worktree", "liza.where", "linked")
	git(t, wt, "config", "--worktree", "liza.only", "wt")

	r := open(t, dir)
	wantDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), dir, dir)
	if v, _ := r.Config("liza.where"); v != "repo" {
		t.Errorf("main checkout: liza.where = %q, want repo", v)
	}
	if v, ok := r.Config("liza.only"); ok {
		t.Errorf("main checkout sees the linked worktree's config: liza.only = %q", v)
	}

	w := open(t, wt)
	wantDirs(t, w, filepath.Join(dir, ".git", "worktrees", "wt"), filepath.Join(dir, ".git"), wt, dir)
	for _, key := range []string{"liza.where", "liza.only"} {
		v, ok := w.Config(key)
		want := git(t, wt, "config", "--get", key)
		if !ok || v != want {
			t.Errorf("linked worktree: %s = %q, %v; git says %q", key, v, ok, want)
		}
	}
	// A detached worktree has no branch.
	if branch, commit, err := w.Head(); err != nil || branch != "" || commit.IsZero() {
		t.Errorf("detached Head() = %q, %s, %v", branch, commit, err)
	}
}

func TestOpenWithGitDir(t *testing.T) {
	dir := newRepo(t)
	elsewhere := realpath(t, t.TempDir())

	// Absolute GIT_DIR: the current directory is the top of the work tree,
	// as git has it.
	t.Setenv("GIT_DIR", filepath.Join(dir, ".git"))
	r := open(t, elsewhere)
	wantDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), elsewhere, dir)
	gd, cd, top := gitSays(t, elsewhere)
	wantDirs(t, r, gd, cd, top, dir)

	// Relative GIT_DIR, as git sets it for hooks.
	t.Setenv("GIT_DIR", ".git")
	r = open(t, dir)
	wantDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), dir, dir)

	// GIT_WORK_TREE names the work tree.
	t.Setenv("GIT_DIR", filepath.Join(dir, ".git"))
	t.Setenv("GIT_WORK_TREE", dir)
	r = open(t, elsewhere)
	if r.WorkTree != dir {
		t.Errorf("with GIT_WORK_TREE: WorkTree = %q, want %q", r.WorkTree, dir)
	}
	unsetenv(t, "GIT_WORK_TREE")

	// GIT_DIR that is not a repository is bad input.
	t.Setenv("GIT_DIR", elsewhere)
	_, err := Open(elsewhere)
	wantCode(t, err, contracts.CodeInvalid)
}

func TestOpenGitDirOfBareRepo(t *testing.T) {
	dir := newRepo(t)
	bare := filepath.Join(realpath(t, t.TempDir()), "bare.git")
	git(t, dir, "clone", "-q", "--bare", dir, bare)
	t.Setenv("GIT_DIR", bare)
	r := open(t, realpath(t, t.TempDir()))
	wantDirs(t, r, bare, bare, "", "")
}

func TestOpenBare(t *testing.T) {
	dir := newRepo(t)
	bare := filepath.Join(realpath(t, t.TempDir()), "bare.git")
	git(t, dir, "clone", "-q", "--bare", dir, bare)
	r := open(t, bare)
	wantDirs(t, r, bare, bare, "", "")
	if r.Dir() != bare {
		t.Errorf("Dir() = %q, want %q", r.Dir(), bare)
	}
	gd, cd, _ := gitSays(t, bare)
	wantDirs(t, r, gd, cd, "", "")
	head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
	if got, ok, err := r.ReadRef("refs/heads/main"); err != nil || !ok || got != head {
		t.Errorf("ReadRef in bare = %s, %v, %v; want %s", got, ok, err, head)
	}
	// Git commands run in the bare repository.
	out, err := r.Git(t.Context(), "rev-parse", "HEAD")
	if err != nil || string(out) != head.String()+"\n" {
		t.Errorf("Git(rev-parse HEAD) = %q, %v", out, err)
	}
}

func TestOpenWorktreeOfBareRepo(t *testing.T) {
	dir := newRepo(t)
	bare := filepath.Join(realpath(t, t.TempDir()), "bare.git")
	git(t, dir, "clone", "-q", "--bare", dir, bare)
	wt := filepath.Join(realpath(t, t.TempDir()), "wt")
	git(t, bare, "worktree", "add", "-q", wt, "main")
	r := open(t, wt)
	wantDirs(t, r, filepath.Join(bare, "worktrees", "wt"), bare, wt, "")
}

func TestOpenOutsideRepo(t *testing.T) {
	gitEnv(t)
	_, err := Open(t.TempDir())
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Open outside a repository: %v, want ErrNotRepo", err)
	}
	wantCode(t, err, contracts.CodeInvalid)
}

func TestOpenBrokenGitFile(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".git"), "gitdir: /nonexistent/place\n")
	if _, err := Open(dir); err == nil {
		t.Fatal("Open with a .git file pointing nowhere succeeded")
	}
	writeFile(t, filepath.Join(dir, ".git"), "not a gitdir line\n")
	if _, err := Open(dir); err == nil {
		t.Fatal("Open with a garbage .git file succeeded")
	}
}

func TestHeadAndSymbolicRefs(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
	branch, commit, err := r.Head()
	if err != nil || branch != "refs/heads/main" || commit != head {
		t.Fatalf("Head() = %q, %s, %v", branch, commit, err)
	}
	if got, ok, err := r.ReadRef("HEAD"); err != nil || !ok || got != head {
		t.Fatalf("ReadRef(HEAD) = %s, %v, %v; want %s", got, ok, err, head)
	}
	if _, ok, err := r.ReadRef("refs/heads/nope"); err != nil || ok {
		t.Fatalf("ReadRef of a missing ref = %v, %v", ok, err)
	}

	// Packed refs read the same.
	git(t, dir, "update-ref", "refs/liza/state", head.String())
	git(t, dir, "pack-refs", "--all", "--prune")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "liza", "state")); err == nil {
		t.Fatal("pack-refs left a loose ref")
	}
	if got, ok, err := r.ReadRef(StateRef); err != nil || !ok || got != head {
		t.Fatalf("ReadRef of a packed ref = %s, %v, %v", got, ok, err)
	}

	// An unborn branch has no commit.
	git(t, dir, "symbolic-ref", "HEAD", "refs/heads/unborn")
	branch, commit, err = r.Head()
	if err != nil || branch != "refs/heads/unborn" || !commit.IsZero() {
		t.Fatalf("unborn Head() = %q, %s, %v", branch, commit, err)
	}
}

// CheckoutGitDir reads what git would: a main checkout's .git directory,
// the registration a linked worktree's .git file names; nothing for a
// directory that is no checkout of its own.
func TestCheckoutGitDir(t *testing.T) {
	dir := newRepo(t)
	wt := filepath.Join(realpath(t, t.TempDir()), "wt")
	git(t, dir, "worktree", "add", "-q", "--detach", wt)
	for _, c := range []struct{ dir, want string }{
		{dir, filepath.Join(dir, ".git")},
		{wt, filepath.Join(dir, ".git", "worktrees", "wt")},
	} {
		got, err := CheckoutGitDir(c.dir)
		if err != nil || got != c.want {
			t.Errorf("CheckoutGitDir(%s) = %q, %v; want %s", c.dir, got, err, c.want)
		}
		if said := git(t, c.dir, "rev-parse", "--absolute-git-dir"); said != got {
			t.Errorf("CheckoutGitDir(%s) = %s, git says %s", c.dir, got, said)
		}
	}
	if got, err := CheckoutGitDir(filepath.Join(dir, "dir")); err == nil {
		t.Errorf("CheckoutGitDir of a subdirectory = %s, want an error", got)
	}
}
