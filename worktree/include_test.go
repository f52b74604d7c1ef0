package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/refstore"
)

// includeRepo is a repository whose integration tip ignores *.env,
// secret*, local/ and the links, and lists in .worktreeinclude what is
// given; the main checkout holds those ignored files.
func includeRepo(t *testing.T, include string) *testRepo {
	t.Helper()
	r := newRepo(t)
	r.write(".gitignore", "*.env\nsecret*\nlocal/\nlink-*\nfifo\n")
	r.write(IncludeFile, include)
	r.git("add", ".")
	r.git("commit", "-q", "-m", "include")
	r.base = r.ref("refs/heads/integration")
	r.write(".env", "KEY=main\n")
	r.write("local/conf/a.json", "{}\n")
	r.write("secret.txt", "not listed\n")
	return r
}

// prepareAt checks out commit in a new detached worktree and prepares it
// as a merge's test worktree from source; it returns the worktree and
// what Prepare did, and the log lines.
func prepareAt(t *testing.T, r *testRepo, commit, source refstore.Hash) (string, *Prepared, []string) {
	t.Helper()
	ctx := context.Background()
	path := MergePath(r.repo, "t1")
	if err := AddDetached(ctx, r.repo, path, commit, "t1", ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { RemoveDetached(ctx, r.repo, path) })
	var log []string
	got, err := Prepare(ctx, r.repo, Prep{Dir: path, Kind: KindMerge, Task: "t1", Source: source, Log: func(s string) { log = append(log, s) }})
	if err != nil {
		t.Fatal(err)
	}
	return path, got, log
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func statusClean(t *testing.T, dir string) {
	t.Helper()
	out, err := refstore.RunIn(context.Background(), dir, "status", "--porcelain")
	if err != nil || len(out) != 0 {
		t.Errorf("git status in %s: %q %v; want clean", dir, out, err)
	}
}

// The ignored files .worktreeinclude names are copied, folders whole;
// an ignored file it does not name is not; the worktree stays clean.
func TestIncludeCopies(t *testing.T) {
	r := includeRepo(t, "# the local settings\n.env\nlocal/\n")
	path, got, log := prepareAt(t, r, r.base, r.base)
	if want := []string{".env", "local/conf/a.json"}; !slices.Equal(got.Copied, want) {
		t.Errorf("copied %q, want %q", got.Copied, want)
	}
	if s := readFile(t, filepath.Join(path, ".env")); s != "KEY=main\n" {
		t.Errorf(".env in the worktree = %q", s)
	}
	if _, err := os.Lstat(filepath.Join(path, "secret.txt")); err == nil {
		t.Error("secret.txt, which .worktreeinclude does not name, was copied")
	}
	if got.Bytes != int64(len("KEY=main\n{}\n")) {
		t.Errorf("bytes = %d", got.Bytes)
	}
	if len(log) != 1 || !strings.Contains(log[0], "copied 2 ignored files") || !strings.Contains(log[0], ".env, local/conf/a.json") {
		t.Errorf("log = %q", log)
	}
	statusClean(t, path)
}

// What counts is the .worktreeinclude of the source commit (the
// integration tip): not the main checkout's file, which the planner may
// edit, nor the one of the commit checked out, which a coder wrote.
func TestIncludeFromSourceOnly(t *testing.T) {
	r := includeRepo(t, ".env\n")
	r.git("checkout", "-q", "-b", "task/t1")
	r.write(IncludeFile, ".env\nsecret*\n")
	r.git("add", IncludeFile)
	r.git("commit", "-q", "-m", "coder widens the include")
	task := r.ref("refs/heads/task/t1")
	r.git("checkout", "-q", "integration")
	r.write(IncludeFile, "secret*\n") // edited in the main checkout, not committed
	path, got, _ := prepareAt(t, r, task, r.base)
	if want := []string{".env"}; !slices.Equal(got.Copied, want) {
		t.Errorf("copied %q, want %q", got.Copied, want)
	}
	if _, err := os.Lstat(filepath.Join(path, "secret.txt")); err == nil {
		t.Error("secret.txt was copied on the coder's (or the planner's) say")
	}
}

// A tracked file, a path out of the repository, git-liza's own folders and
// a pattern with control characters are refused: nothing is copied for
// them and the log says why.
func TestIncludeRefuses(t *testing.T) {
	r := includeRepo(t, "README\n../secret\n/../secret\nlocal/../../secret\n.worktrees/\n.git/config\n.liza/x\nx\x1b[2Jy\n.env\n")
	outside := filepath.Join(filepath.Dir(r.root), "secret")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(outside) })
	r.write("README", "edited in the main checkout\n")
	r.write(".worktrees/t9/.env", "another worktree's\n")
	path, got, log := prepareAt(t, r, r.base, r.base)
	if want := []string{".env"}; !slices.Equal(got.Copied, want) {
		t.Errorf("copied %q, want %q", got.Copied, want)
	}
	if s := readFile(t, filepath.Join(path, "README")); s != "hello\n" {
		t.Errorf("README in the worktree = %q: the tracked file was overwritten", s)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(path), "secret")); err == nil {
		t.Error("a file was written beside the worktree")
	}
	all := strings.Join(log, "\n")
	for _, want := range []string{
		`.worktreeinclude: "../secret" refused: it leaves the repository`,
		`.worktreeinclude: "/../secret" refused: it leaves the repository`,
		`.worktreeinclude: "local/../../secret" refused: it leaves the repository`,
		`.worktreeinclude: ".worktrees/" refused: git-liza's own folders are never copied`,
		`.worktreeinclude: ".git/config" refused: git-liza's own folders are never copied`,
		`.worktreeinclude: ".liza/x" refused: git-liza's own folders are never copied`,
		`.worktreeinclude: "x\x1b[2Jy" refused: it holds control characters`,
		`: README: skipped: git tracks it`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q:\n%s", want, all)
		}
	}
	if strings.ContainsRune(all, 0x1b) {
		t.Error("the log carries a raw escape character")
	}
	statusClean(t, path)
}

// A symbolic link is copied as a link when it points inside the
// repository, and skipped, with a line saying so, when it points out.
func TestIncludeSymlinks(t *testing.T) {
	r := includeRepo(t, "link-*\n")
	for name, target := range map[string]string{"link-in": ".env", "link-up": "../outside", "link-abs": "/etc/hostname", "link-deep": "local/../../x"} {
		if err := os.Symlink(target, filepath.Join(r.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	path, got, log := prepareAt(t, r, r.base, r.base)
	if want := []string{"link-in"}; !slices.Equal(got.Copied, want) {
		t.Errorf("copied %q, want %q", got.Copied, want)
	}
	if target, err := os.Readlink(filepath.Join(path, "link-in")); err != nil || target != ".env" {
		t.Errorf("link-in in the worktree: %q %v", target, err)
	}
	all := strings.Join(log, "\n")
	for _, name := range []string{"link-up", "link-abs", "link-deep"} {
		if _, err := os.Lstat(filepath.Join(path, name)); err == nil {
			t.Errorf("%s, which points out of the repository, was copied", name)
		}
		if !strings.Contains(all, name+": skipped: a symbolic link out of the repository") {
			t.Errorf("log does not say %s was skipped:\n%s", name, all)
		}
	}
}

// The worktree's own tracked files win: a file there is never overwritten,
// and a tracked link in the worktree cannot carry a copy out of it.
func TestIncludeIntoWorktreeLinks(t *testing.T) {
	r := includeRepo(t, ".env\nlocal/\n")
	away := t.TempDir()
	// The coder's commit tracks .env, and local as a link out.
	task := commitWith(t, r, map[string]string{".env": "KEY=coder\n"}, map[string]string{"local": away})
	path, got, _ := prepareAt(t, r, task, r.base)
	if len(got.Copied) != 0 {
		t.Errorf("copied %q into a worktree that has them tracked", got.Copied)
	}
	if s := readFile(t, filepath.Join(path, ".env")); s != "KEY=coder\n" {
		t.Errorf(".env = %q: the tracked file was overwritten", s)
	}
	all := strings.Join(got.Skipped, "\n")
	for _, want := range []string{".env: skipped: the worktree has it already", "local/conf/a.json: skipped: cannot be put in the worktree"} {
		if !strings.Contains(all, want) {
			t.Errorf("skipped lacks %q:\n%s", want, all)
		}
	}
	if entries, _ := os.ReadDir(away); len(entries) != 0 {
		t.Errorf("a copy went through the worktree's link out: %v", entries)
	}
}

// commitWith is a commit on the integration tip with files and links
// added, made with git's plumbing.
func commitWith(t *testing.T, r *testRepo, files, links map[string]string) refstore.Hash {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = r.root, env, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "read-tree", r.base.String())
	for name, text := range files {
		blob := run(text, "hash-object", "-w", "--stdin")
		run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+name)
	}
	for name, target := range links {
		blob := run(target, "hash-object", "-w", "--stdin")
		run("", "update-index", "--add", "--cacheinfo", "120000,"+blob+","+name)
	}
	tree := run("", "write-tree")
	h, _ := refstore.ParseHash(run("", "commit-tree", "-p", r.base.String(), "-m", "task", tree))
	return h
}

// Bounded: past the count or size caps, the rest is skipped and the log
// says how much.
func TestIncludeBounds(t *testing.T) {
	r := includeRepo(t, "local/\n")
	for i := range 5 {
		r.write(filepath.Join("local", "many", string(rune('a'+i))), "12345\n")
	}
	defer func(f int, b int64) { maxIncludeFiles, maxIncludeBytes = f, b }(maxIncludeFiles, maxIncludeBytes)
	maxIncludeFiles, maxIncludeBytes = 4, 1<<20
	_, got, log := prepareAt(t, r, r.base, r.base)
	if len(got.Copied) != 4 {
		t.Errorf("copied %d files past a cap of 4: %q", len(got.Copied), got.Copied)
	}
	all := strings.Join(log, "\n")
	for _, want := range []string{"2 more skipped: past the cap of 4 files"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q:\n%s", want, all)
		}
	}
	maxIncludeFiles, maxIncludeBytes = 100, 14
	_, got, log = prepareAt(t, r, r.base, r.base)
	if got.Bytes > 14 {
		t.Errorf("copied %d bytes past a cap of 14", got.Bytes)
	}
	if all := strings.Join(log, "\n"); !strings.Contains(all, "skipped: past the cap of 14 bytes") {
		t.Errorf("log does not say the size cap was reached:\n%s", all)
	}
}

// The merge lane's kept test worktree is readied once, and gets its
// copies back each time it moves to the next merge (the move cleans every
// ignored file away), without a log line each time.
func TestIncludeKept(t *testing.T) {
	r := includeRepo(t, ".env\n")
	ctx := context.Background()
	var log []string
	prep := &Prep{Kind: KindMerge, Task: "t1", Source: r.base, Log: func(s string) { log = append(log, s) }}
	k := &Kept{}
	defer k.Close(ctx, r.repo)
	for i := range 2 {
		path, got, done, err := k.CheckoutPrepared(ctx, r.repo, r.base, "t1", prep)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || !slices.Equal(got.Copied, []string{".env"}) {
			t.Errorf("checkout %d: prepared %+v", i, got)
		}
		if s := readFile(t, filepath.Join(path, ".env")); s != "KEY=main\n" {
			t.Errorf("checkout %d: .env = %q", i, s)
		}
		if err := os.WriteFile(filepath.Join(path, ".env"), []byte("changed by the test\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		done()
	}
	if len(log) != 1 {
		t.Errorf("log = %q; want one line, for the new worktree", log)
	}
}

// A file name that holds a terminal escape is copied, and logged quoted:
// the main checkout's names are partly agents' writing.
func TestIncludeLogPrintable(t *testing.T) {
	r := includeRepo(t, "*.env\n")
	r.write("a\x1b[31m.env", "x\n")
	path, got, log := prepareAt(t, r, r.base, r.base)
	if !slices.Contains(got.Copied, "a\x1b[31m.env") {
		t.Errorf("copied %q", got.Copied)
	}
	all := strings.Join(log, "\n")
	if strings.ContainsRune(all, 0x1b) || !strings.Contains(all, `"a\x1b[31m.env"`) {
		t.Errorf("log = %q", all)
	}
	// What Prepare logged is kept with the worktree, for the session log.
	if rec := PreparedLines(path); !slices.Equal(rec, log) {
		t.Errorf("PreparedLines = %q, want %q", rec, log)
	}
}

// A file replaced (by a link, say) between its listing and its copy is
// not copied.
func TestIncludeSwapped(t *testing.T) {
	r := includeRepo(t, "")
	from, err := os.OpenRoot(r.root)
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	to, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer to.Close()
	listed, err := from.Lstat("secret.txt")
	if err != nil {
		t.Fatal(err)
	}
	if n, why := copyFile(from, to, ".env", listed, 1<<20); n != 0 || why != "changed while it was copied" {
		t.Errorf("copyFile of a swapped file = %d, %q", n, why)
	}
	if _, err := to.Lstat(".env"); err == nil {
		t.Error("the swapped file was copied")
	}
}
