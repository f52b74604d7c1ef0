package refstore

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if templates != "" {
		os.RemoveAll(templates)
	}
	os.Exit(code)
}

// templates holds repositories built once and copied by the tests that
// use them; TestMain removes it.
var templates string

func templateDir(t *testing.T) string {
	t.Helper()
	if templates == "" {
		d, err := os.MkdirTemp("", "refstore-test-")
		if err != nil {
			t.Fatal(err)
		}
		templates = realpath(t, d)
	}
	return templates
}

// gitEnv pins everything that would make git's answers depend on the
// machine: no system config, an empty global config, a fixed identity, and
// none of the variables that redirect repository discovery.
func gitEnv(t testing.TB) {
	t.Helper()
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_AUTHOR_NAME", "Ada Operator")
	t.Setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "Ada Operator")
	t.Setenv("GIT_COMMITTER_EMAIL", "ada@example.com")
	for _, k := range []string{
		"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
		"GIT_OBJECT_DIRECTORY", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
		"GIT_CEILING_DIRECTORIES", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE",
	} {
		unsetenv(t, k)
	}
	if mode.plumbing {
		// As `git -c liza.readThroughGit=true liza ...` passes it down.
		t.Setenv("GIT_CONFIG_PARAMETERS", "'"+PlumbingKey+"'='true'")
	}
}

// repoMode is how this package's tests make and open repositories: the
// object format newRepo gives them, and whether Open reads them through
// git's plumbing (PlumbingKey, set by gitEnv).
type repoMode struct {
	name     string
	format   string
	plumbing bool
}

// mode is the mode of the test running; eachMode changes it.
var mode = repoMode{name: "sha1", format: "sha1"}

var (
	fileModes = []repoMode{{"sha1", "sha1", false}, {"sha256", "sha256", false}}
	allModes  = append(fileModes, repoMode{"sha1-plumbing", "sha1", true}, repoMode{"sha256-plumbing", "sha256", true})
)

// eachMode runs test once in each of modes, as a subtest named after it.
// The tests of this package cannot run in parallel (they set the
// environment), so a package variable holds the mode.
func eachMode(t *testing.T, modes []repoMode, test func(t *testing.T)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			old := mode
			mode = m
			defer func() { mode = old }()
			test(t)
		})
	}
}

// missingID is an id in the mode's format that no repository has.
func missingID() Hash {
	h, _ := ParseHash(strings.Repeat("1", 2*algoOf(mode.format).size()))
	return h
}

func algoOf(format string) hashAlgo {
	a, _ := parseAlgo(format)
	return a
}

// unsetenv removes k for the duration of the test.
func unsetenv(t testing.TB, k string) {
	t.Helper()
	t.Setenv(k, "")
	os.Unsetenv(k)
}

// git runs git in dir and returns its trimmed standard output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gitIn(t, dir, nil, args...)
}

// gitIn is git with standard input.
func gitIn(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	out, err := runGit(dir, stdin, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// runGit runs git with extra environment and returns its output or an error
// that carries standard error.
func runGit(dir string, stdin []byte, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(err.Error() + ": " + stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// newRepo makes a repository with one commit on main that holds README and
// dir/file.txt, and returns its top directory (symlinks resolved).
func newRepo(t *testing.T) string {
	t.Helper()
	gitEnv(t)
	dir := realpath(t, t.TempDir())
	git(t, dir, "init", "-q", "-b", "main", "--object-format="+mode.format)
	writeFile(t, filepath.Join(dir, "README"), "hello\n")
	writeFile(t, filepath.Join(dir, "dir", "file.txt"), "in a dir\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// open is Open that fails the test on error.
func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { r.Close() })
	if got := r.Plumbing() != ""; got != mode.plumbing {
		t.Fatalf("Open(%s): read through git %v (%q), want %v", dir, got, r.Plumbing(), mode.plumbing)
	}
	if got := r.ObjectFormat(); got != mode.format {
		t.Fatalf("Open(%s): object format %s, want %s", dir, got, mode.format)
	}
	return r
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func realpath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hashOf(t *testing.T, s string) Hash {
	t.Helper()
	h, ok := ParseHash(s)
	if !ok {
		t.Fatalf("%q is not an object id", s)
	}
	return h
}

// wantCode fails unless err is a *contracts.Error with code.
func wantCode(t *testing.T, err error, code contracts.Code) *contracts.Error {
	t.Helper()
	var e *contracts.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *contracts.Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("error %q has code %d, want %d", e, e.Code, code)
	}
	return e
}
