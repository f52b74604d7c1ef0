package worktree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// SetupScript is the project's setup step: it runs in each new worktree
// (a claim's, a review checkout, a merge's test worktree) after the
// checkout, from the worktree's top, as the integration test does.
const SetupScript = "scripts/worktree-setup.sh"

// The outcomes of a setup.
const (
	SetupOK      = "ok"
	SetupFailure = "failed"
	SetupTimeout = "timeout"
)

// Setup is one run of the setup step.
type Setup struct {
	Dir  string // the new worktree's top
	Kind string // KindTask, KindReview or KindMerge (LIZA_SETUP_KIND)
	Task string
	Role string // as spelled in ids: coder, code-reviewer; empty for a merge by hand
	// Source is the commit whose script runs: the integration tip, which
	// holds reviewed and merged code. The worktree's own copy never runs:
	// a coder's branch, or the commit under review, could have changed it,
	// and the supervisor runs the setup outside any agent's sandbox.
	Source  refstore.Hash
	Timeout time.Duration // 0: contracts.DefaultSetupTimeout
}

// SetupResult is what a setup did.
type SetupResult struct {
	Outcome string        // SetupOK, SetupFailure or SetupTimeout
	Exit    int           // the script's exit status (-1 when killed)
	Took    time.Duration // how long it ran
	Log     string        // its output, under .git/liza/logs/setup/
	Tail    []string      // the output's last lines, for a failure
}

// Seconds is how long the setup ran, to the millisecond (a setup with
// nothing to install takes a few).
func (r *SetupResult) Seconds() float64 {
	return float64(r.Took.Round(time.Millisecond)) / float64(time.Second)
}

// SetupFailed is a setup that failed or ran out of time: a failure of the
// environment the agents would work in, not of any task. No task is
// charged for it: a claim does not happen, a review is given back, a
// merge's task stays APPROVED. Its exit code is 5 (a missing dependency).
type SetupFailed struct {
	Kind, Task string
	Timeout    time.Duration // the bound it ran under
	*SetupResult
}

func (e *SetupFailed) Error() string {
	what := fmt.Sprintf("exit %d", e.Exit)
	if e.Outcome == SetupTimeout {
		what = fmt.Sprintf("killed at its timeout of %s", e.Timeout)
	}
	return fmt.Sprintf("%s failed in the %s worktree of %s (%s); log: %s", SetupScript, e.Kind, e.Task, what, e.Log)
}

// Unwrap gives the error its exit code.
func (e *SetupFailed) Unwrap() error {
	return &contracts.Error{Code: contracts.CodeMissingDep, Msg: e.Error()}
}

// Details are the last lines of the setup's output.
func (e *SetupFailed) Details() []string { return e.Tail }

// Bounds of a setup's log (a CappedLog); setupLogs logs are kept, the
// oldest going first.
const (
	setupLogs      = 100
	setupTailLines = 15
	maxScript      = 1 << 20
)

// SetupScriptAt returns the setup script that runs for commit: its blob,
// and whether there is one. Anything but a regular file there (a symbolic
// link, which could name a file outside the repository, a directory, a
// submodule) is refused.
func SetupScriptAt(repo *refstore.Repo, commit refstore.Hash) (refstore.Hash, bool, error) {
	e, ok, err := entryAt(repo, commit, SetupScript)
	if err != nil || !ok {
		return refstore.Hash{}, false, err
	}
	if e.Mode != "100644" && e.Mode != "100755" {
		return refstore.Hash{}, false, contracts.Invalidf("%s at %s is not a file (mode %s)", SetupScript, commit.String()[:12], e.Mode)
	}
	return e.ID, true, nil
}

// entryAt finds path in the tree of commit.
func entryAt(repo *refstore.Repo, commit refstore.Hash, path string) (refstore.TreeEntry, bool, error) {
	c, err := repo.ReadCommit(commit)
	if err != nil {
		return refstore.TreeEntry{}, false, err
	}
	e := refstore.TreeEntry{ID: c.Tree, Mode: refstore.ModeTree}
	for _, p := range strings.Split(path, "/") {
		if !e.IsTree() {
			return refstore.TreeEntry{}, false, nil
		}
		entries, err := repo.ReadTree(e.ID)
		if err != nil {
			return refstore.TreeEntry{}, false, err
		}
		i := slices.IndexFunc(entries, func(x refstore.TreeEntry) bool { return x.Name == p })
		if i < 0 {
			return refstore.TreeEntry{}, false, nil
		}
		e = entries[i]
	}
	return e, true, nil
}

// CacheDir is the directory the setup scripts of a repository share for
// package managers' download caches (LIZA_CACHE_DIR), made 0700.
func CacheDir(repo *refstore.Repo) (string, error) {
	dir := filepath.Join(repo.CommonDir, "liza", "cache", "setup")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o700)
}

// RunSetup runs the setup script of s.Source in s.Dir, if s.Source has
// one (nil, nil when it has none). A script that fails or outlives its
// timeout, killed then with its whole process group, is a *SetupFailed;
// a ctx cancelled meanwhile returns ctx's error.
func RunSetup(ctx context.Context, repo *refstore.Repo, s Setup) (*SetupResult, error) {
	blob, ok, err := SetupScriptAt(repo, s.Source)
	if err != nil || !ok {
		return nil, err
	}
	body, err := repo.ReadBlobMax(blob, maxScript)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", SetupScript, s.Source.String()[:12], err)
	}
	// The script runs from a copy of the blob in git-liza's own directory
	// (which agents' sandboxes keep read-only), never from the worktree.
	scripts := filepath.Join(repo.CommonDir, "liza", "setup")
	if err := os.MkdirAll(scripts, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(scripts, "worktree-setup-*.sh")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(body); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	cache, err := CacheDir(repo)
	if err != nil {
		return nil, err
	}
	logs := filepath.Join(repo.CommonDir, "liza", "logs", "setup")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	PruneLogs(logs, "*", setupLogs-1)
	name := fmt.Sprintf("%s-%s-%s-%d.log", time.Now().UTC().Format("20060102T150405.000Z"), s.Kind, s.Task, os.Getpid())
	logFile, err := os.OpenFile(filepath.Join(logs, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	out := NewCappedLog(logFile)

	timeout := s.Timeout
	if timeout <= 0 {
		timeout = contracts.DefaultSetupTimeout * time.Second
	}
	run, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(run, "sh", f.Name())
	cmd.Dir = s.Dir
	cmd.Env = refstore.ContainEnv(setupEnv(os.Environ(), s, repo.MainWorkTree(), cache))
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	// A process that left the group and kept the output open does not
	// hold the setup past its kill.
	cmd.WaitDelay = 2 * time.Second
	began := time.Now()
	err = cmd.Run()
	// Whatever the script left running in its group goes with it.
	killGroup(cmd)
	res := &SetupResult{Outcome: SetupOK, Took: time.Since(began), Log: logFile.Name(), Exit: -1}
	if cmd.ProcessState != nil {
		res.Exit = cmd.ProcessState.ExitCode()
	}
	out.Finish()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case run.Err() != nil:
		res.Outcome, res.Exit = SetupTimeout, -1
	case err != nil:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("run %s: %w", SetupScript, err)
		}
		res.Outcome = SetupFailure
	}
	if res.Outcome == SetupOK {
		return res, nil
	}
	res.Tail = logTail(res.Log, setupTailLines)
	return res, &SetupFailed{Kind: s.Kind, Task: s.Task, Timeout: timeout, SetupResult: res}
}

// setupEnv is the setup's environment: the process's, without what would
// point its git at another repository or pass for git-liza's agent
// variables, and with the setup's own.
func setupEnv(base []string, s Setup, root, cache string) []string {
	env := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX":
			return true
		}
		return strings.HasPrefix(k, "LIZA_")
	})
	return append(env, "LIZA_SETUP_KIND="+s.Kind, "LIZA_ROLE="+s.Role, "LIZA_TASK="+s.Task,
		"LIZA_WORKTREE="+s.Dir, "LIZA_PROJECT_ROOT="+root, "LIZA_CACHE_DIR="+cache)
}

// logTail returns the last n lines of a log.
func logTail(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	return lines[max(0, len(lines)-n):]
}

// setupInputs are the files at the top of a tree whose change makes a kept
// worktree run its setup again: the lockfiles of the package managers.
var setupInputs = []string{"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock",
	"poetry.lock", "uv.lock", "Pipfile.lock", "go.sum", "Cargo.lock"}

// SetupKey names what a setup of a worktree of tree commit depends on:
// the setup script of source, and the lockfiles (setupInputs and
// requirements*.txt) at the top of commit, by their blob ids. "" when
// source has no setup script.
func SetupKey(repo *refstore.Repo, source, commit refstore.Hash) (string, error) {
	blob, ok, err := SetupScriptAt(repo, source)
	if err != nil || !ok {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", SetupScript, blob)
	c, err := repo.ReadCommit(commit)
	if err != nil {
		return "", err
	}
	entries, err := repo.ReadTree(c.Tree)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		req := strings.HasPrefix(e.Name, "requirements") && strings.HasSuffix(e.Name, ".txt")
		if req || slices.Contains(setupInputs, e.Name) {
			fmt.Fprintf(h, "%s %s %s\n", e.Mode, e.ID, e.Name)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RunInGroup makes cmd run in a process group of its own that is killed,
// whole, when its context ends and once it has exited: what a project
// script started goes with it (the merge's integration test).
func RunInGroup(cmd *exec.Cmd) error {
	ownGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	killGroup(cmd)
	return err
}
