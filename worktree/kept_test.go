package worktree

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A kept test worktree moves from one commit to the next and holds
// exactly the commit each time: what a test changed, added or left
// ignored goes. While it is in use a second test gets one of its own,
// removed when given back; Close removes the kept one.
func TestKept(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	r.write(".gitignore", "*.out\n")
	r.write("src/a.txt", "a1\n")
	r.git("add", ".")
	r.git("commit", "-q", "-m", "second")
	second := r.ref("refs/heads/integration")
	r.git("rm", "-q", "README")
	r.write("src/a.txt", "a2\n")
	r.git("add", ".")
	r.git("commit", "-q", "-m", "third")
	third := r.ref("refs/heads/integration")

	k := &Kept{}
	path, done, err := k.Checkout(ctx, r.repo, second, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, filepath.Join(r.repo.CommonDir, "liza", "merge")+string(filepath.Separator)) {
		t.Errorf("kept worktree at %s, not under .git/liza/merge", path)
	}
	// A test that edits, adds and builds.
	for name, text := range map[string]string{"src/a.txt": "edited\n", "new.txt": "new\n", "build.out": "bin\n", "cache/x.out": "c\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(path, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(path, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Another merge's test meanwhile gets a worktree of its own.
	other, otherDone, err := k.Checkout(ctx, r.repo, third, "t2")
	if err != nil {
		t.Fatal(err)
	}
	if other == path {
		t.Fatal("two tests share the kept worktree")
	}
	otherDone()
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("the second test's worktree %s stays after it is given back: %v", other, err)
	}
	done()

	again, done, err := k.Checkout(ctx, r.repo, third, "t3")
	if err != nil {
		t.Fatal(err)
	}
	if again != path {
		t.Errorf("the next test got %s, not the kept %s", again, path)
	}
	if got := files(t, path); got != ".gitignore src/a.txt" {
		t.Errorf("the kept worktree holds %q after moving, want exactly the commit's files", got)
	}
	if b, _ := os.ReadFile(filepath.Join(path, "src", "a.txt")); string(b) != "a2\n" {
		t.Errorf("src/a.txt is %q, want the commit's a2", b)
	}
	if head := strings.TrimSpace(r.git("-C", path, "rev-parse", "HEAD")); head != third.String() {
		t.Errorf("HEAD is %s, want %s", head, third)
	}
	done()

	// Removed by hand meanwhile: made again.
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	path, done, err = k.Checkout(ctx, r.repo, second, "t4")
	if err != nil {
		t.Fatal(err)
	}
	if got := files(t, path); got != ".gitignore README src/a.txt" {
		t.Errorf("a remade kept worktree holds %q", got)
	}
	done()
	lockFile, _ := os.ReadFile(filepath.Join(r.admin(mustRel(t, r, path)), "locked"))
	if !regexp.MustCompile(`^git-liza merge test: pid \d+ on `).Match(lockFile) {
		t.Errorf("kept worktree locked with %q, want a lock that names this process", lockFile)
	}
	if err := k.Close(ctx, r.repo); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", path, err)
	}
	if out := r.git("worktree", "list", "--porcelain"); strings.Contains(out, "liza/merge") {
		t.Errorf("Close left a registration:\n%s", out)
	}
	r.sound()
}

// keptT1 is a new repository and a Kept holding t1's checkout of its base,
// with the checkout's path and the func that gives it back.
func keptT1(t *testing.T) (*testRepo, *Kept, string, func()) {
	r := newRepo(t)
	k := &Kept{}
	path, done, err := k.Checkout(context.Background(), r.repo, r.base, "t1")
	if err != nil {
		t.Fatal(err)
	}
	return r, k, path, done
}

// A kept worktree whose process died is a leftover like any throwaway
// worktree: the next Recover removes it.
func TestKeptOfDeadProcess(t *testing.T) {
	r, _, path, done := keptT1(t)
	done()
	lock(t, r.admin(mustRel(t, r, path)), "git-liza merge test: "+deadOwner(t))
	got := whats(recoverOK(t, r, holds("refs/heads/integration")))
	want := `removed .git/liza/merge/kept-\d+-[0-9a-f]+: the throwaway worktree of the merge test \(pid \d+ on \S+\), which died`
	if !regexp.MustCompile("(?m)^" + want + "$").MatchString(got) {
		t.Errorf("no repair %q in:\n%s", want, got)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s kept", path)
	}
	r.sound()
}

// files lists the files of a checkout, without its .git file.
func files(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); !d.IsDir() && rel != ".git" {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// A review checkout killed after git registered it and before it was
// checked out (no index, no files) is a dead process's leftover, which
// the next recovery removes; the next review of the task gets a whole
// checkout.
func TestAddDetachedKilledBeforeCheckout(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	path := filepath.Join(r.root, Dir, reviewSubdir, "code-reviewer-1", "t1")
	if err := registerDetached(ctx, r.repo, path, r.base, "git-liza review of t1 by code-reviewer-1: "+deadOwner(t)); err != nil {
		t.Fatal(err)
	}
	if got := files(t, path); got != "" {
		t.Fatalf("a registration without checkout holds %q", got)
	}
	got := whats(recoverOK(t, r, holds("refs/heads/integration")))
	want := `removed .worktrees/.review/code-reviewer-1/t1: the throwaway worktree of the review of t1 by code-reviewer-1 \(pid \d+ on \S+\), which died`
	if !regexp.MustCompile("(?m)^" + want + "$").MatchString(got) {
		t.Fatalf("no repair %q in:\n%s", want, got)
	}
	if err := AddDetached(ctx, r.repo, path, r.base, "t1", "code-reviewer-1"); err != nil {
		t.Fatalf("the next review's checkout: %v", err)
	}
	if got := files(t, path); got == "" {
		t.Fatal("the next review's checkout is empty")
	}
	r.sound()
}

// TestKeptDrop: a kept worktree that Drop names is removed as it is given
// back (what the test left there filled the disk), and the next test gets
// a new one; a drop of another path, or none, keeps it.
func TestKeptDrop(t *testing.T) {
	r, k, path, done := keptT1(t)
	ctx := context.Background()
	k.Drop(filepath.Join(path, "elsewhere"))
	done()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a drop of another path removed the kept worktree: %v", err)
	}
	again, done, err := k.Checkout(ctx, r.repo, r.base, "t2")
	if err != nil || again != path {
		t.Fatalf("checkout %s, %v: want the kept %s", again, err, path)
	}
	if err := os.WriteFile(filepath.Join(again, "filler"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	k.Drop(again)
	done()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the dropped worktree is still there (%v)", err)
	}
	next, done, err := k.Checkout(ctx, r.repo, r.base, "t3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(next, "filler")); !os.IsNotExist(err) {
		t.Errorf("the next test got the dropped test's files (%v)", err)
	}
	done()
	if err := k.Close(ctx, r.repo); err != nil {
		t.Error(err)
	}
}
