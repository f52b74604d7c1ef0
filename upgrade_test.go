package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// previousRelease is the commit of the release before rule set 8, whose
// git-liza makes its commits under rule set 7.
const previousRelease = "e4c5220"

var (
	oldOnce sync.Once
	oldBin  string
	oldErr  string
)

// previousGitLiza builds the git-liza of previousRelease from this
// repository's history, once per test binary, and returns the directory
// that holds it. It skips with -short, and where the history is not here
// (a shallow clone, a copy of the tree).
func previousGitLiza(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the previous release (-short)")
	}
	oldOnce.Do(func() {
		if err := exec.Command("git", "cat-file", "-e", previousRelease+"^{commit}").Run(); err != nil {
			oldErr = "skip"
			return
		}
		// Kept between runs: the tree of a commit does not change.
		dir := filepath.Join(os.TempDir(), "git-liza-previous-"+previousRelease)
		if _, err := os.Stat(filepath.Join(dir, "bin", "git-liza")); err == nil {
			oldBin = filepath.Join(dir, "bin")
			return
		}
		tmp, err := os.MkdirTemp("", "git-liza-previous-")
		if err != nil {
			oldErr = err.Error()
			return
		}
		defer os.RemoveAll(tmp)
		src := filepath.Join(tmp, "src")
		build := "mkdir -p " + src + " && git archive " + previousRelease + " | tar -x -C " + src +
			" && cd " + src + " && go build -o " + filepath.Join(tmp, "bin", "git-liza") + " ."
		if out, err := exec.Command("sh", "-c", build).CombinedOutput(); err != nil {
			oldErr = "building " + previousRelease + ": " + err.Error() + "\n" + string(out)
			return
		}
		if err := os.RemoveAll(filepath.Join(tmp, "src")); err != nil {
			oldErr = err.Error()
			return
		}
		if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
			if _, serr := os.Stat(filepath.Join(dir, "bin", "git-liza")); serr != nil {
				oldErr = err.Error()
				return
			}
		}
		oldBin = filepath.Join(dir, "bin")
	})
	switch {
	case oldErr == "skip":
		t.Skipf("commit %s is not in this repository's history", previousRelease)
	case oldErr != "":
		t.Fatal(oldErr)
	}
	return oldBin
}

// upgradeEnv is an environment for git and git-liza with nothing of the
// caller's git, Liza or state settings, home at home.
func upgradeEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "GIT_") && !strings.HasPrefix(k, "LIZA_") && !strings.HasPrefix(k, "XDG_") && k != "HOME" && k != "PATH" {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com")
}

// upgradeFixture is a board the previous release made (src, its
// integration branch and state pushed to the bare hub), the two git-lizas
// (oldDir and newDir, each a directory to put first on PATH), and runners
// of commands in the environment of upgradeEnv.
type upgradeFixture struct {
	work, src, hub, oldDir, newDir string
	run                            func(dir, bin string, args ...string) (string, int)
	must                           func(dir, bin string, args ...string) string
}

func newUpgradeFixture(t *testing.T) *upgradeFixture {
	t.Helper()
	f := &upgradeFixture{newDir: filepath.Dir(gitLizaBin(t)), oldDir: previousGitLiza(t)}
	f.work, _ = filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(f.work, "home")
	f.src, f.hub = filepath.Join(f.work, "src"), filepath.Join(f.work, "hub.git")
	for _, d := range []string{home, filepath.Join(f.src, "specs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, content := range map[string]string{
		filepath.Join(home, ".gitconfig"):          "[init]\n\tdefaultBranch = main\n",
		filepath.Join(f.src, "specs", "vision.md"): "vision\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := upgradeEnv(home)
	f.run = func(dir, bin string, args ...string) (string, int) {
		t.Helper()
		c := exec.Command(args[0], args[1:]...)
		c.Dir = dir
		c.Env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		return string(out), 0
	}
	f.must = func(dir, bin string, args ...string) string {
		t.Helper()
		out, code := f.run(dir, bin, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return strings.TrimSpace(out)
	}
	f.must(f.src, f.oldDir, "git", "init", "-q", "-b", "main")
	f.must(f.src, f.oldDir, "git", "add", ".")
	f.must(f.src, f.oldDir, "git", "commit", "-q", "-m", "start")
	f.must(f.src, f.oldDir, "git", "liza", "init", "goal")
	f.must(f.work, f.oldDir, "git", "init", "-q", "--bare", f.hub)
	f.must(f.src, f.oldDir, "git", "push", "-q", f.hub, "main", "integration", "refs/liza/state:refs/liza/state")
	return f
}

// clone clones the hub into work/name and joins its board with the
// git-liza of bin.
func (f *upgradeFixture) clone(name, bin string) string {
	dir := filepath.Join(f.work, name)
	f.must(f.work, bin, "git", "clone", "-q", "file://"+f.hub, dir)
	f.must(dir, bin, "git", "liza", "sync")
	return dir
}

func upgradeAdd(id string) []string {
	return []string{"git", "liza", "--agent", "planner-1", "task", "add", "--id", id, "--desc", id, "--spec", "specs/vision.md", "--done", "d", "--scope", "IN: " + id + "/"}
}

// TestPreviousReleaseRefusesRuleSet8InTheSameClone: a clone where this
// git-liza made a commit under rule set 8, then the previous release ran
// (a supervisor started before the upgrade, a downgrade). The previous
// release trusts the tips its file of verified commits names; this one
// wrote its commits there, so the old one built a rule-7 commit on the
// rule-8 one and pushed it to a hub without the guard, where every other
// clone stopped on it (exit 4, "older than its parent's") until an import.
// docs/state.md: "a git-liza that knows only 7 refuses commits made under
// 8": exit 4, naming the newer rule set, nothing pushed.
func TestPreviousReleaseRefusesRuleSet8InTheSameClone(t *testing.T) {
	f := newUpgradeFixture(t)
	oldDir, newDir, must, run, hub, work := f.oldDir, f.newDir, f.must, f.run, f.hub, f.work

	// The previous release made the board; the hub runs no guard.
	clone := f.clone("clone", oldDir)
	must(clone, oldDir, upgradeAdd("a")...)

	// The upgraded git-liza works on it: its first commit is rule set 8.
	must(clone, newDir, upgradeAdd("b")...)
	if got := must(clone, newDir, "git", "log", "-1", "--format=%(trailers:key=Liza-Rules,valueonly)", "refs/liza/state"); got != "8" {
		t.Fatalf("the first commit of the upgraded git-liza says Liza-Rules %q, want 8", got)
	}
	before := must(clone, newDir, "git", "rev-parse", "refs/liza/state")

	// The previous release, run again in the same clone, refuses it.
	out, code := run(clone, oldDir, upgradeAdd("c")...)
	if code != 4 || !strings.Contains(out, "made under rule set 8, newer than this git-liza knows (7): upgrade git-liza") {
		t.Errorf("the previous release on a rule-8 tip: exit %d, want 4 naming rule set 8\n%s", code, out)
	}
	if got := must(work, newDir, "git", "-C", hub, "rev-parse", "refs/liza/state"); got != before {
		t.Errorf("the previous release moved the hub's refs/liza/state from %.12s to %.12s:\n%s", before, got,
			must(work, newDir, "git", "-C", hub, "log", "-2", "--format=%h %s Liza-Rules %(trailers:key=Liza-Rules,valueonly)", "refs/liza/state"))
	}

	// The board stays valid, and every clone goes on.
	must(clone, newDir, "git", "liza", "validate", "--history")
	other := f.clone("other", newDir)
	must(other, newDir, upgradeAdd("d")...)
}

// TestPreviousReleaseGuardRefusesRuleSet8: a hub whose pre-receive hook
// runs the previous release refuses a push of rule set 8 ("newer than this
// git-liza knows (7): upgrade git-liza"). The upgraded clone that pushed
// passed those words on as they were, telling a user who had upgraded to
// upgrade; it says the remote's guard is the older one.
func TestPreviousReleaseGuardRefusesRuleSet8(t *testing.T) {
	f := newUpgradeFixture(t)
	f.must(f.hub, f.oldDir, "git", "liza", "hooks", "install", "--server")
	clone := f.clone("clone", f.oldDir)
	before := f.must(clone, f.oldDir, "git", "rev-parse", "refs/liza/state")
	// The hook of a file:// hub runs the git-liza of the pusher's PATH: the
	// previous release's, while the clone runs this one.
	out, code := f.run(clone, f.oldDir, append([]string{filepath.Join(f.newDir, "git-liza")}, upgradeAdd("a")[2:]...)...)
	if code != 1 || !strings.Contains(out, "newer than this git-liza knows (7)") || !strings.Contains(out, "the remote's guard, hooks/pre-receive, runs an older git-liza than this one") {
		t.Errorf("a push of rule set 8 to the previous release's guard: exit %d, want 1 saying the remote's guard is older\n%s", code, out)
	}
	if got := f.must(f.work, f.oldDir, "git", "-C", f.hub, "rev-parse", "refs/liza/state"); got != before {
		t.Errorf("the hub's refs/liza/state moved from %.12s to %.12s", before, got)
	}
	if got := f.must(clone, f.oldDir, "git", "rev-parse", "refs/liza/state"); got != before {
		t.Errorf("the clone's refs/liza/state moved from %.12s to %.12s", before, got)
	}
}

// TestUpgradedSyncPublishesThePreviousReleasesOfflineWork: a clone made
// operations with --offline under the previous release, then upgraded; its
// hub's guard is this release's, which takes only commits of rule set 8
// and tells the clone to "upgrade git-liza and run git liza sync". sync
// pushed the rule-7 commits as they were (the remote had not moved, they
// were recent), the guard refused them again, and the work could not be
// published: sync applies them again under rule set 8.
func TestUpgradedSyncPublishesThePreviousReleasesOfflineWork(t *testing.T) {
	f := newUpgradeFixture(t)
	f.must(f.hub, f.newDir, "git", "liza", "hooks", "install", "--server")
	clone := f.clone("clone", f.oldDir)
	f.must(clone, f.oldDir, append([]string{"git", "liza", "--offline"}, upgradeAdd("a")[2:]...)...)

	// The hook of a file:// hub runs the git-liza of the pusher's PATH:
	// this release's for both.
	out, code := f.run(clone, f.newDir, "git", "liza", "sync")
	if code != 0 {
		t.Fatalf("git liza sync after the upgrade: exit %d\n%s", code, out)
	}
	if got := f.must(f.work, f.newDir, "git", "-C", f.hub, "log", "-1", "--format=%s %(trailers:key=Liza-Rules,valueonly)", "refs/liza/state"); got != "add a (planner-1) 8" {
		t.Errorf("the hub's tip is %q, want the offline add under rule set 8", got)
	}
	f.must(clone, f.newDir, "git", "liza", "validate", "--history")
}
