package cas

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// now is the clock of every test store.
var now = time.Date(2025, 1, 10, 9, 0, 0, 0, time.UTC)

const stamp = "2025-01-10T09:00:00Z"

// gitEnv pins git's configuration and identity for the test.
func gitEnv(t testing.TB) {
	t.Helper()
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_AUTHOR_NAME", "Ada Operator")
	t.Setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "Ada Operator")
	t.Setenv("GIT_COMMITTER_EMAIL", "ada@example.com")
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// git runs git in dir and returns its trimmed output.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gitIn(t, dir, nil, args...)
}

func gitIn(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// newRepoDir makes a repository with one commit.
func newRepoDir(t testing.TB) string {
	t.Helper()
	gitEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// newStore opens a store on a fresh repository with no state yet.
func newStore(t testing.TB) *Store {
	t.Helper()
	return openStore(t, newRepoDir(t))
}

func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	repo, err := refstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Store{
		Repo:   repo,
		Clock:  func() time.Time { return now },
		Budget: 10 * time.Second,
		Author: refstore.Signature{Name: "Ada Operator", Email: "ada@example.com"},
	}
}

func validMeta() *Meta {
	return &Meta{
		Version: 1,
		Goal:    contracts.Goal{ID: "goal-1", Description: "build it", Status: "IN_PROGRESS", Created: stamp},
		Config:  contracts.DefaultConfig(),
		Sprint: contracts.Sprint{
			ID: "sprint-1", GoalRef: "goal-1", Status: "IN_PROGRESS",
			Scope:    contracts.SprintScope{Planned: contracts.StringList{}, Stretch: contracts.StringList{}},
			Timeline: contracts.SprintTimeline{Started: stamp},
		},
	}
}

func initOp() Op {
	return Op{
		Name:         contracts.OpInit,
		AllowMissing: true,
		Apply: func(tx *Tx) (any, error) {
			if tx.Snap.Exists() {
				return nil, contracts.Invalidf("a blackboard already exists")
			}
			tx.PutMeta(validMeta())
			tx.Describe("init: build it", "")
			return map[string]string{"goal": "goal-1"}, nil
		},
	}
}

// initStore makes a store with a freshly initialised blackboard.
func initStore(t testing.TB) *Store {
	t.Helper()
	s := newStore(t)
	mustUpdate(t, s, initOp())
	return s
}

func mustUpdate(t testing.TB, s *Store, op Op) *Result {
	t.Helper()
	res, err := s.Update(context.Background(), op)
	if err != nil {
		t.Fatalf("%s: %v", op.Name, err)
	}
	return res
}

// task is a valid UNCLAIMED task.
func task(id string, deps ...string) *contracts.Task {
	return &contracts.Task{
		ID: id, Description: "do " + id, Status: contracts.Unclaimed, Priority: 2,
		Created: stamp, SpecRef: "specs/x.md#" + id, DoneWhen: "tests for " + id + " pass",
		DependsOn: contracts.StringList(deps),
		History:   []*contracts.HistoryEvent{{Time: stamp, Event: "created", Agent: "planner-1"}},
	}
}

// claimed is a valid CLAIMED task held by coder.
func claimed(id, coder string) *contracts.Task {
	t := task(id)
	t.Status, t.AssignedTo = contracts.Claimed, coder
	t.Worktree, t.LeaseExpires, t.BaseCommit = ".worktrees/"+id, "2025-01-10T10:00:00Z", "abc123"
	return t
}

// putTasks is an op that puts tasks as the planner.
func putTasks(ts ...*contracts.Task) Op {
	return Op{
		Name:  contracts.OpAdd,
		Agent: "planner-1",
		Apply: func(tx *Tx) (any, error) {
			for _, t := range ts {
				tx.PutTask(t)
			}
			tx.Describe("add "+ts[0].ID, ts[0].ID)
			return nil, nil
		},
	}
}

// tip returns the state ref, zero when absent.
func tip(t testing.TB, s *Store) refstore.Hash {
	t.Helper()
	h, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		t.Fatal(err)
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

// gitTree builds a tree of files (path -> content) with git's own plumbing
// (hash-object, mktree) and returns its id.
func gitTree(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	blobs := map[string]string{}
	subs := map[string]map[string]string{}
	for p, content := range files {
		if i := strings.IndexByte(p, '/'); i >= 0 {
			if subs[p[:i]] == nil {
				subs[p[:i]] = map[string]string{}
			}
			subs[p[:i]][p[i+1:]] = content
			continue
		}
		blobs[p] = gitIn(t, dir, []byte(content), "hash-object", "-w", "--stdin")
	}
	var lines []string
	for name, id := range blobs {
		lines = append(lines, "100644 blob "+id+"\t"+name)
	}
	for name, group := range subs {
		lines = append(lines, "040000 tree "+gitTree(t, dir, group)+"\t"+name)
	}
	sort.Strings(lines)
	return gitIn(t, dir, []byte(strings.Join(lines, "\n")+"\n"), "mktree")
}

// gitCommitState commits files on top of the state ref with git's plumbing
// and moves the ref there with git update-ref, as a person editing the state
// by hand would. It returns the new commit.
func gitCommitState(t *testing.T, s *Store, files map[string]string) refstore.Hash {
	t.Helper()
	dir := s.Repo.Dir()
	tree := gitTree(t, dir, files)
	args := []string{"commit-tree", tree, "-m", "edited by hand"}
	old := tip(t, s)
	if !old.IsZero() {
		args = append(args, "-p", old.String())
	}
	c := git(t, dir, args...)
	git(t, dir, "update-ref", refstore.StateRef, c, old.String())
	return hashOf(c)
}

// tipFile reads one file of the state at the ref.
func tipFile(t *testing.T, s *Store, path string) string {
	t.Helper()
	snap, err := ReadSnapshot(s.Repo, tip(t, s))
	if err != nil {
		t.Fatal(err)
	}
	b, ok, err := snap.ReadFile(path)
	if err != nil || !ok {
		t.Fatalf("%s at the tip: %v, %v", path, ok, err)
	}
	return string(b)
}

// lsTree lists the files of a tree, recursively, as git does.
func lsTree(t *testing.T, s *Store, tree refstore.Hash) []string {
	t.Helper()
	out := git(t, s.Repo.Dir(), "ls-tree", "-r", "--name-only", tree.String())
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// hashOf reads an object id that git printed.
func hashOf(s string) refstore.Hash {
	h, _ := refstore.ParseHash(strings.TrimSpace(s))
	return h
}
