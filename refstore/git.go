// Package refstore is the only package that talks to git. It finds the
// repository, reads git's formats itself (loose and packed objects with
// SHA-1 or SHA-256 ids, refs, config), writes loose objects, and moves refs
// only with git's own update-ref, so that lock files, packed refs and
// reflogs are honoured exactly as every other git command honours them. A
// repository whose format it does not know it reads through git's plumbing
// (format.go); the objects a partial clone lacks it asks git for, which
// fetches them (clones.go).
package refstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// MinGitMajor and MinGitMinor name the oldest git that has everything
// git-liza uses (merge-tree --write-tree arrived in 2.38).
const (
	MinGitMajor = 2
	MinGitMinor = 38
)

// GitError is a git command that failed: its arguments, exit code and
// standard error.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	name := "git"
	if len(e.Args) > 0 {
		name = "git " + e.Args[0]
	}
	if msg == "" {
		return fmt.Sprintf("%s failed (exit %d)", name, e.ExitCode)
	}
	return fmt.Sprintf("%s failed: %s", name, msg)
}

// Run runs git with args in dir. stdin may be nil. It returns standard
// output; a failure comes back as *GitError.
func Run(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return run(ctx, dir, nil, stdin, args)
}

// RunIn runs git with args in the checkout at dir, for that checkout
// alone: without the variables that point git at another repository, work
// tree or index (GIT_DIR and the like, set for a hook or by a person), so
// that a command that rewrites the checkout cannot rewrite theirs.
func RunIn(ctx context.Context, dir string, args ...string) ([]byte, error) {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(locatingVars, k)
	})
	return run(ctx, dir, env, nil, args)
}

// RunPinned is RunIn with the repository named rather than found: git
// reads gitDir as the checkout's git directory and commonDir as the
// repository's, whatever the checkout's .git file or its registration's
// commondir file say (an agent writes both: its worktree, and its
// checkout's git directory). Containment scanned commonDir's config and
// its registrations' config.worktree; a git directory found anew through
// those files would have a config nobody scanned.
func RunPinned(ctx context.Context, dir, gitDir, commonDir string, args ...string) ([]byte, error) {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(locatingVars, k)
	})
	env = append(env, "GIT_DIR="+gitDir, "GIT_COMMON_DIR="+commonDir, "GIT_WORK_TREE="+dir)
	return run(ctx, dir, env, nil, args)
}

// locatingVars are the variables that tell git which repository, work
// tree and index to use.
var locatingVars = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"}

func run(ctx context.Context, dir string, env []string, stdin []byte, args []string) ([]byte, error) {
	return execGit(ctx, dir, containGit(env, args), stdin, args)
}

// execGit runs git with exactly the environment env (the process's when
// nil).
func execGit(ctx context.Context, dir string, env []string, stdin []byte, args []string) ([]byte, error) {
	out, _, err := execGitMax(ctx, dir, env, stdin, args, -1)
	return out, err
}

// execGitMax is execGit keeping at most max bytes of git's output (all of
// it when max is negative): past them git is stopped, and cut is true
// with no error.
func execGitMax(ctx context.Context, dir string, env []string, stdin []byte, args []string, max int) (out []byte, cut bool, err error) {
	return execGitOpts(ctx, gitRun{dir: dir, env: env, stdin: stdin, args: args, max: max})
}

// gitRun is one git command: execGitMax's arguments, and group, which
// puts git in a process group of its own, stopped whole when ctx ends, so
// that what it started (ssh, a remote helper) goes with it and cannot hold
// its output open. With group, the temporary files its processes hold
// open in the object directory objects go with them (stopGroup).
type gitRun struct {
	dir     string
	env     []string
	stdin   []byte
	args    []string
	max     int
	group   bool
	objects string
}

func execGitOpts(ctx context.Context, g gitRun) (out []byte, cut bool, err error) {
	dir, env, stdin, args, max := g.dir, g.env, g.stdin, g.args, g.max
	if err := CheckGit(); err != nil {
		return nil, false, err
	}
	// Whatever git is asked may name an object this process holds.
	if err := flushAllHeld(); err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, inEnglish(env)
	if g.group {
		ownGroup(cmd)
		cmd.Cancel = func() error { return stopGroup(cmd, g.objects) }
		cmd.WaitDelay = 2 * time.Second
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	stdout := &prefixWriter{max: max, stop: cancel}
	var stderr bytes.Buffer
	cmd.Stdout = stdout
	if max < 0 {
		cmd.Stdout = &stdout.buf // read whole, through its ReadFrom
	}
	cmd.Stderr = &stderr
	err = cmd.Run()
	if stdout.cut {
		return stdout.Bytes(), true, nil
	}
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code < 0 && stderr.Len() == 0 {
			// Not an exit: git could not start, or was killed ("signal:
			// killed"), which its error says better than "exit -1".
			stderr.WriteString(err.Error())
		}
		return stdout.Bytes(), false, &GitError{Args: stripConfig(args), ExitCode: code, Stderr: stderr.String()}
	}
	return stdout.Bytes(), false, nil
}

// prefixWriter keeps the first max bytes written to it (all, when max is
// negative) and calls stop at the first byte past them. (The buffer is a
// field, not embedded: io.Copy would read through an embedded buffer's
// ReadFrom, past any bound.)
type prefixWriter struct {
	buf  bytes.Buffer
	max  int
	cut  bool
	stop func()
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if w.max < 0 || w.buf.Len()+len(p) <= w.max {
		return w.buf.Write(p)
	}
	if !w.cut {
		w.buf.Write(p[:w.max-w.buf.Len()])
		w.cut = true
		w.stop()
	}
	return len(p), nil
}

// Bytes is what was kept.
func (w *prefixWriter) Bytes() []byte { return w.buf.Bytes() }

// GitPrefix runs git in this repository as Git does, keeping at most max
// bytes of its output: past them git is stopped and cut is true. What a
// command prints in proportion to an agent's content (the diff of a small
// object that unpacks to gigabytes) then costs max bytes, not its size.
func (r *Repo) GitPrefix(ctx context.Context, max int, args ...string) (out []byte, cut bool, err error) {
	return execGitMax(ctx, r.Dir(), containGit(nil, args), nil, args, max)
}

// runUncontained runs git without the containment settings (contain.go),
// for the few questions whose answer those settings would change and that
// run no program: what the repository's config says, where git run by an
// agent looks for hooks.
func runUncontained(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return execGit(ctx, dir, nil, nil, args)
}

// AgentHooksDir is where git run by a person or an agent in the worktree
// at dir looks for hooks: git's own answer, which takes a relative
// core.hooksPath from that worktree. (git-liza's own git processes run
// none from there.)
func AgentHooksDir(ctx context.Context, dir string) (string, error) {
	out, err := runUncontained(ctx, dir, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return "", err
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p, nil
}

// stripConfig drops leading "-c key=value" pairs so that errors name the
// git subcommand.
func stripConfig(args []string) []string {
	for len(args) >= 2 && args[0] == "-c" {
		args = args[2:]
	}
	return args
}

var (
	gitOnce sync.Once
	gitErr  error
)

// CheckGit verifies, once per process, that git is on PATH and new enough.
// The error is a *contracts.Error with exit code 5.
func CheckGit() error {
	gitOnce.Do(func() { gitErr = checkGit("") })
	return gitErr
}

// checkGitCached is CheckGit with the answer remembered in cacheDir, keyed
// by the git binary's path, size and modification time, so that a command
// does not pay for a `git version` process on every run. A few gits are
// remembered (gitVersionsKept): run as `git liza`, git-liza finds git in
// git's exec path first (/usr/lib/git-core/git), run directly, on PATH
// (/usr/bin/git), and a repository used both ways ran `git version` each
// time the other way had last written the answer.
func checkGitCached(cacheDir string) {
	gitOnce.Do(func() { gitErr = checkGit(cacheDir) })
}

// gitVersionsKept is how many gits the cache of checkGitCached names.
const gitVersionsKept = 4

func checkGit(cacheDir string) error {
	path, err := exec.LookPath("git")
	if err != nil {
		return contracts.Errorf(contracts.CodeMissingDep, "git not found on PATH: git-liza needs git %d.%d or newer", MinGitMajor, MinGitMinor)
	}
	var key, cache string
	var known []string // other gits found good, kept in the cache beside this one
	if fi, err := os.Stat(path); err == nil && cacheDir != "" {
		key = fmt.Sprintf("%s %d %d", path, fi.Size(), fi.ModTime().UnixNano())
		cache = filepath.Join(cacheDir, "liza", "git-version")
		if b, err := ReadFile(cache); err == nil && len(b) < 4096 {
			for _, line := range strings.Split(string(b), "\n") {
				if line == key+" ok" {
					return nil
				}
				if line != "" && len(known) < gitVersionsKept-1 {
					known = append(known, line)
				}
			}
		}
	}
	out, err := exec.Command(path, "version").Output()
	if err != nil {
		return contracts.Errorf(contracts.CodeMissingDep, "cannot run %s version: %v", path, err)
	}
	major, minor, ok := parseGitVersion(string(out))
	if !ok {
		return contracts.Errorf(contracts.CodeMissingDep, "cannot read the git version from %q", strings.TrimSpace(string(out)))
	}
	if major < MinGitMajor || major == MinGitMajor && minor < MinGitMinor {
		return contracts.Errorf(contracts.CodeMissingDep, "git %d.%d is too old: git-liza needs git %d.%d or newer", major, minor, MinGitMajor, MinGitMinor)
	}
	if cache != "" && os.MkdirAll(filepath.Dir(cache), 0o755) == nil {
		tmp := fmt.Sprintf("%s.%d", cache, os.Getpid())
		if os.WriteFile(tmp, []byte(strings.Join(append([]string{key + " ok"}, known...), "\n")+"\n"), 0o644) == nil {
			_ = os.Rename(tmp, cache)
		}
	}
	return nil
}

// parseGitVersion reads "git version 2.39.5" (and vendor suffixes such as
// "2.39.5.windows.1" or "2.37.1 (Apple Git-137.1)").
func parseGitVersion(s string) (major, minor int, ok bool) {
	f := strings.Fields(s)
	if len(f) < 3 || f[0] != "git" || f[1] != "version" {
		return 0, 0, false
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

// inEnglish is env (the process's own when nil) with git's messages in
// English. git-liza reads what git says on stderr (a ref the remote lacks,
// a race lost, a lock held, a push the remote could not store), and git
// says it in the user's language where its translations are installed:
// with German ones, a task's first submit in remote mode failed on
// "Schwerwiegend: Konnte Remote-Referenz ... nicht finden". LANGUAGE=C
// sets the language of messages alone, not how characters are read:
// gettext reads it before LC_ALL, LC_MESSAGES and LANG, and has no
// catalog for C. Only git gets it (and what git runs, such as hooks); an
// agent's session and the project's own scripts keep the user's.
func inEnglish(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append(slices.Clip(env), "LANGUAGE=C")
}
