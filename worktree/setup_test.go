package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// commitSetup commits script as scripts/worktree-setup.sh on the
// integration branch and returns the new tip.
func (r *testRepo) commitSetup(script string) refstore.Hash {
	r.t.Helper()
	r.write(SetupScript, script)
	r.git("add", SetupScript)
	r.git("commit", "-q", "-m", "setup")
	return r.ref("refs/heads/integration")
}

// newCheckout is a detached worktree of commit for a setup to run in.
func (r *testRepo) newCheckout(commit refstore.Hash) string {
	r.t.Helper()
	dir := filepath.Join(r.t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "--detach", dir, commit.String())
	return dir
}

// TestSetupEnvironment: the setup runs from the worktree's top with its
// kind, role, task, worktree, project root and the repository's cache
// directory (0700) in its environment, and nothing of the supervisor's
// own LIZA_ or GIT_DIR variables.
func TestSetupEnvironment(t *testing.T) {
	r := newRepo(t)
	src := r.commitSetup(`echo "$LIZA_SETUP_KIND $LIZA_ROLE $LIZA_TASK $LIZA_WORKTREE $LIZA_PROJECT_ROOT $(pwd) agent=$LIZA_AGENT_ID" >> "$LIZA_CACHE_DIR/runs"
echo set up
`)
	dir := r.newCheckout(src)
	t.Setenv("LIZA_AGENT_ID", "coder-9")
	res, err := RunSetup(context.Background(), r.repo, Setup{Dir: dir, Kind: KindTask, Task: "a", Role: "coder", Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != SetupOK || res.Exit != 0 {
		t.Errorf("outcome %s exit %d, want ok 0", res.Outcome, res.Exit)
	}
	cache := filepath.Join(r.repo.CommonDir, "liza", "cache", "setup")
	got, _ := os.ReadFile(filepath.Join(cache, "runs"))
	want := strings.Join([]string{"task coder a", dir, r.root, dir, "agent="}, " ") + "\n"
	if string(got) != want {
		t.Errorf("the setup saw\n%q\nwant\n%q", got, want)
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache directory: %v %v, want mode 0700", fi, err)
	}
	if log, _ := os.ReadFile(res.Log); string(log) != "set up\n" {
		t.Errorf("log %s holds %q", res.Log, log)
	}
	if filepath.Dir(res.Log) != filepath.Join(r.repo.CommonDir, "liza", "logs", "setup") {
		t.Errorf("log at %s", res.Log)
	}
}

// TestSetupFromSource: the script that runs is the one of the Source
// commit (the integration tip), never the one the worktree holds: a coder
// who changes it on its branch does not get its version run by the
// supervisor in the reviewer's checkout.
func TestSetupFromSource(t *testing.T) {
	r := newRepo(t)
	src := r.commitSetup("echo reviewed >> \"$LIZA_CACHE_DIR/ran\"\n")
	r.write(SetupScript, "echo coder-planted >> \"$LIZA_CACHE_DIR/ran\"\n")
	r.git("commit", "-q", "-am", "a coder's own setup")
	branch := r.ref("HEAD")
	dir := r.newCheckout(branch)
	if _, err := RunSetup(context.Background(), r.repo, Setup{Dir: dir, Kind: KindReview, Task: "a", Role: "code-reviewer", Source: src}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(r.repo.CommonDir, "liza", "cache", "setup", "ran"))
	if string(got) != "reviewed\n" {
		t.Errorf("ran %q, want the integration tip's script alone", got)
	}
	// A symbolic link in its place is refused: it could name anything.
	r.git("rm", "-q", SetupScript)
	os.MkdirAll(filepath.Join(r.root, "scripts"), 0o755)
	if err := os.Symlink("/etc/passwd", filepath.Join(r.root, SetupScript)); err != nil {
		t.Fatal(err)
	}
	r.git("add", SetupScript)
	r.git("commit", "-q", "-m", "link")
	if _, err := RunSetup(context.Background(), r.repo, Setup{Dir: dir, Kind: KindTask, Task: "a", Source: r.ref("HEAD")}); err == nil || !strings.Contains(err.Error(), "is not a file (mode 120000)") {
		t.Errorf("a symbolic link ran: %v", err)
	}
	// No script: nothing runs, nothing fails.
	if res, err := RunSetup(context.Background(), r.repo, Setup{Dir: dir, Kind: KindTask, Task: "a", Source: r.base}); res != nil || err != nil {
		t.Errorf("no script: %v %v", res, err)
	}
}

// TestSetupFails: a failing script is a *SetupFailed (exit code 5 of the
// taxonomy) naming its exit status and log, with the output's last lines.
func TestSetupFails(t *testing.T) {
	r := newRepo(t)
	src := r.commitSetup("echo installing\necho 'npm ERR! 404 left-pad'\nexit 3\n")
	dir := r.newCheckout(src)
	_, err := RunSetup(context.Background(), r.repo, Setup{Dir: dir, Kind: KindTask, Task: "a", Role: "coder", Source: src})
	var f *SetupFailed
	if !errors.As(err, &f) {
		t.Fatalf("error %v, want a *SetupFailed", err)
	}
	if f.Outcome != SetupFailure || f.Exit != 3 || strings.Join(f.Details(), "|") != "installing|npm ERR! 404 left-pad" {
		t.Errorf("outcome %s exit %d tail %q", f.Outcome, f.Exit, f.Details())
	}
	if want := "scripts/worktree-setup.sh failed in the task worktree of a (exit 3); log: " + f.Log; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeMissingDep {
		t.Errorf("error code %v, want %d", ce, contracts.CodeMissingDep)
	}
}

// TestSetupTimeout: a setup past its timeout is killed with everything it
// started in its process group, and is a failure of kind timeout.
func TestSetupTimeout(t *testing.T) {
	r := newRepo(t)
	src := r.commitSetup("sleep 300 &\necho $! > \"$LIZA_CACHE_DIR/child\"\necho started\nsleep 300\n")
	dir := r.newCheckout(src)
	_, err := RunSetup(context.Background(), r.repo, Setup{Dir: dir, Kind: KindMerge, Task: "a", Source: src, Timeout: time.Second})
	var f *SetupFailed
	if !errors.As(err, &f) || f.Outcome != SetupTimeout || f.Exit != -1 {
		t.Fatalf("error %v, want a timeout", err)
	}
	if !strings.Contains(err.Error(), "(killed at its timeout of 1s)") {
		t.Errorf("error %q", err)
	}
	b, _ := os.ReadFile(filepath.Join(r.repo.CommonDir, "liza", "cache", "setup", "child"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("no child pid: %q", b)
	}
	// SIGKILL has been sent; the child is gone once init reaps it.
	for i := 0; alive(pid); i++ {
		if i > 200 {
			t.Fatalf("the setup's child %d outlived its kill", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestSetupLogBounded: a setup that prints megabytes leaves a log of its
// head and its tail, with how much was cut between, and its last line.
func TestSetupLogBounded(t *testing.T) {
	r := newRepo(t)
	src := r.commitSetup("yes 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde | head -c 5000000\necho the end\nexit 1\n")
	dir := r.newCheckout(src)
	_, err := RunSetup(context.Background(), r.repo, Setup{Dir: dir, Kind: KindTask, Task: "a", Source: src})
	var f *SetupFailed
	if !errors.As(err, &f) {
		t.Fatalf("error %v", err)
	}
	fi, err := os.Stat(f.Log)
	if err != nil || fi.Size() > LogHead+LogTail+100 {
		t.Fatalf("log of %d bytes (%v), want at most %d", fi.Size(), err, LogHead+LogTail+100)
	}
	b, _ := os.ReadFile(f.Log)
	if !strings.Contains(string(b), "bytes of output cut here]") || f.Tail[len(f.Tail)-1] != "the end" {
		t.Errorf("log without its cut or its end: tail %q", f.Tail)
	}
}

// TestSetupKey: a kept worktree sets up again when the script or a
// lockfile at the top changes, not for any other change.
func TestSetupKey(t *testing.T) {
	r := newRepo(t)
	src := r.commitSetup("true\n")
	k1, _ := SetupKey(r.repo, src, src)
	r.write("main.go", "package main\n")
	r.git("add", "main.go")
	r.git("commit", "-q", "-m", "code")
	k2, _ := SetupKey(r.repo, src, r.ref("HEAD"))
	r.write("requirements-dev.txt", "pytest\n")
	r.git("add", "requirements-dev.txt")
	r.git("commit", "-q", "-m", "deps")
	k3, _ := SetupKey(r.repo, src, r.ref("HEAD"))
	src2 := r.commitSetup("echo new\n")
	k4, _ := SetupKey(r.repo, src2, r.ref("HEAD"))
	if k1 == "" || k1 != k2 || k3 == k2 || k4 == k3 {
		t.Errorf("keys %q %q %q %q: want the same, then new for a lockfile, new for the script", k1, k2, k3, k4)
	}
	if k, err := SetupKey(r.repo, r.base, src); k != "" || err != nil {
		t.Errorf("no script: key %q %v", k, err)
	}
}

// TestKeptSetup: the merge lane's kept test worktree is set up once, and
// again only when the setup script or a lockfile changes; in between,
// what the setup installed (ignored) stays through each move, while what
// a test left that git does not ignore goes.
func TestKeptSetup(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	r.write(".gitignore", "node_modules/\n")
	r.write("package-lock.json", "{\"v\": 1}\n")
	r.git("add", ".")
	first := r.commitSetup("echo run >> \"$LIZA_CACHE_DIR/runs\"\nmkdir -p node_modules && echo x > node_modules/dep\n")
	r.write("main.js", "1\n")
	r.git("add", ".")
	r.git("commit", "-q", "-m", "code")
	code := r.ref("HEAD")
	r.write("package-lock.json", "{\"v\": 2}\n")
	r.git("commit", "-q", "-am", "deps")
	deps := r.ref("HEAD")
	runs := func() int {
		b, _ := os.ReadFile(filepath.Join(r.repo.CommonDir, "liza", "cache", "setup", "runs"))
		return strings.Count(string(b), "run\n")
	}
	k := &Kept{}
	defer k.Close(ctx, r.repo)
	for i, step := range []struct {
		commit refstore.Hash
		runs   int
	}{{first, 1}, {code, 1}, {deps, 2}, {deps, 2}} {
		prep := &Prep{Kind: KindMerge, Task: "t", Source: first}
		path, got, done, err := k.CheckoutPrepared(ctx, r.repo, step.commit, "t", prep)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if n := runs(); n != step.runs {
			t.Errorf("step %d: the setup ran %d times in all, want %d", i, n, step.runs)
		}
		if ran := got != nil && got.Setup != nil; ran != (i == 0 || i == 2) {
			t.Errorf("step %d: Prepared.Setup set: %v", i, ran)
		}
		if _, err := os.Stat(filepath.Join(path, "node_modules", "dep")); err != nil {
			t.Errorf("step %d: what the setup installed is gone: %v", i, err)
		}
		os.WriteFile(filepath.Join(path, "left-by-test.txt"), []byte("x"), 0o644)
		done()
	}
	path, _, done, err := k.CheckoutPrepared(ctx, r.repo, deps, "t", &Prep{Kind: KindMerge, Task: "t", Source: first})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if _, err := os.Stat(filepath.Join(path, "left-by-test.txt")); !os.IsNotExist(err) {
		t.Errorf("a file the last test left stays: %v", err)
	}
}
