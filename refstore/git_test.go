package refstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

func TestParseGitVersion(t *testing.T) {
	for _, c := range []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"git version 2.39.5\n", 2, 39, true},
		{"git version 2.37.1 (Apple Git-137.1)\n", 2, 37, true},
		{"git version 2.45.2.windows.1\n", 2, 45, true},
		{"git version 2.38.0", 2, 38, true},
		{"git version 3.0", 3, 0, true},
		{"git version 2", 0, 0, false},
		{"git version x.y.z", 0, 0, false},
		{"hub version 2.39.5", 0, 0, false},
		{"git 2.39.5", 0, 0, false},
		{"", 0, 0, false},
		{"garbage", 0, 0, false},
	} {
		major, minor, ok := parseGitVersion(c.in)
		if ok != c.ok || ok && (major != c.major || minor != c.minor) {
			t.Errorf("parseGitVersion(%q) = %d, %d, %v; want %d, %d, %v", c.in, major, minor, ok, c.major, c.minor, c.ok)
		}
	}
}

// fakeGit puts a `git` that prints out on an otherwise empty PATH.
func fakeGit(t *testing.T, out string) string {
	t.Helper()
	bin := t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	return bin
}

func TestCheckGitMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	e := wantCode(t, checkGit(""), contracts.CodeMissingDep)
	if !strings.Contains(e.Msg, "not found") {
		t.Errorf("message %q does not say git was not found", e.Msg)
	}
}

func TestCheckGitTooOld(t *testing.T) {
	fakeGit(t, "git version 2.30.0")
	e := wantCode(t, checkGit(""), contracts.CodeMissingDep)
	if !strings.Contains(e.Msg, "too old") || !strings.Contains(e.Msg, "2.30") {
		t.Errorf("message %q does not say git 2.30 is too old", e.Msg)
	}
}

func TestCheckGitUnreadableVersion(t *testing.T) {
	fakeGit(t, "this is not git")
	wantCode(t, checkGit(""), contracts.CodeMissingDep)
}

func TestCheckGitNewEnough(t *testing.T) {
	for _, v := range []string{"git version 2.38.0", "git version 2.45.2.windows.1", "git version 3.1.0"} {
		fakeGit(t, v)
		if err := checkGit(""); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

func TestCheckGitCache(t *testing.T) {
	fakeGit(t, "git version 2.45.0")
	cache := t.TempDir()
	if err := checkGit(cache); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cache, "liza", "git-version"))
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(b)), " ok") {
		t.Fatalf("cache file %q, %v", b, err)
	}
	// A different git (another path) is checked again, not taken from the
	// cache.
	fakeGit(t, "git version 2.20.0")
	wantCode(t, checkGit(cache), contracts.CodeMissingDep)
}

// TestCheckGitCacheTwoGits: a repository used both as `git liza` (git
// found in git's exec path) and directly (git found on PATH) has two gits
// checked; both stay remembered, and neither runs `git version` again.
func TestCheckGitCacheTwoGits(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	counting := func() string {
		bin := t.TempDir()
		script := "#!/bin/sh\necho run >> '" + runs + "'\necho 'git version 2.45.0'\n"
		if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return bin
	}
	one, two := counting(), counting()
	cache := t.TempDir()
	for i := 0; i < 3; i++ {
		for _, bin := range []string{one, two} {
			t.Setenv("PATH", bin)
			if err := checkGit(cache); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b, _ := os.ReadFile(runs); strings.Count(string(b), "run") != 2 {
		t.Errorf("git version ran %d times for two gits checked three times each, want 2", strings.Count(string(b), "run"))
	}
}

func TestRunGitError(t *testing.T) {
	dir := newRepo(t)
	_, err := Run(context.Background(), dir, nil, "-c", "core.abbrev=12", "rev-parse", "--verify", "no-such-rev")
	var ge *GitError
	if !errors.As(err, &ge) {
		t.Fatalf("Run with a bad revision: %v (%T), want *GitError", err, err)
	}
	if ge.ExitCode != 128 || ge.Args[0] != "rev-parse" || !strings.Contains(ge.Stderr, "Needed a single revision") {
		t.Errorf("GitError = %+v", ge)
	}
	if msg := ge.Error(); !strings.HasPrefix(msg, "git rev-parse failed: ") || strings.Contains(msg, "\n") {
		t.Errorf("Error() = %q", msg)
	}
	if msg := (&GitError{Args: []string{"merge-tree"}, ExitCode: 1}).Error(); msg != "git merge-tree failed (exit 1)" {
		t.Errorf("Error() with no stderr = %q", msg)
	}

	out, err := Run(context.Background(), dir, []byte("hello\n"), "hash-object", "--stdin")
	if err != nil || strings.TrimSpace(string(out)) != git(t, dir, "hash-object", "README") {
		t.Errorf("Run with stdin = %q, %v", out, err)
	}
}

// RunIn works on the checkout it is given, whatever GIT_DIR and
// GIT_WORK_TREE say: a reset there must not reach the checkout they name.
func TestRunInIgnoresLocatingVariables(t *testing.T) {
	dir := newRepo(t)
	other := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	writeFile(t, filepath.Join(other, "README"), "theirs, not committed\n")
	out, err := RunIn(context.Background(), dir, "rev-parse", "--show-toplevel")
	if err != nil || strings.TrimSpace(string(out)) != dir {
		t.Fatalf("RunIn rev-parse --show-toplevel = %q, %v; want %s", out, err, dir)
	}
	if _, err := RunIn(context.Background(), dir, "reset", "--quiet", "--hard"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "README")); string(b) != "theirs, not committed\n" {
		t.Errorf("a reset in %s reached the checkout GIT_WORK_TREE names: README is %q", dir, b)
	}
}

// TestGitKilledSaysSo: a git killed by a signal (kill -9, an out-of-memory
// kill) fails with the signal named, not "exit -1".
func TestGitKilledSaysSo(t *testing.T) {
	_, err := Run(context.Background(), t.TempDir(), nil, "-c", "alias.boom=!kill -9 $PPID", "boom")
	if err == nil || !strings.HasSuffix(err.Error(), " failed: signal: killed") {
		t.Fatalf("a killed git failed with %v, want its signal named", err)
	}
}

// TestRemoteErrorKilledGit: a fetch or push whose git was killed here is
// a failed git command, not an unreachable remote (whose message advises
// --offline).
func TestRemoteErrorKilledGit(t *testing.T) {
	killed := &GitError{Args: []string{"fetch"}, ExitCode: -1, Stderr: "signal: killed"}
	err := remoteError("origin", killed, false)
	var u *ErrUnreachable
	if errors.As(err, &u) || err.Error() != "git fetch failed: signal: killed" {
		t.Errorf("a killed fetch = %v, want git's own failure", err)
	}
	down := &GitError{Args: []string{"fetch"}, ExitCode: 128, Stderr: "fatal: unable to connect to 127.0.0.1:\n"}
	if !errors.As(remoteError("origin", down, false), &u) {
		t.Error("a fetch that could not connect is no longer an unreachable remote")
	}
}
