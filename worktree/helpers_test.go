package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

// testRepo is a repository with one commit on branch integration, and the
// way a test drives git in it.
type testRepo struct {
	t    *testing.T
	root string
	repo *refstore.Repo
	base refstore.Hash
}

func newRepo(t *testing.T) *testRepo {
	t.Helper()
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, []byte("[advice]\n\tdetachedHead = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": global,
		"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
	} {
		t.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &testRepo{t: t, root: root}
	r.git("init", "-q", "-b", "integration")
	r.write("README", "hello\n")
	r.git("add", "README")
	r.git("commit", "-q", "-m", "first")
	r.repo, err = refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	r.base = r.ref("refs/heads/integration")
	return r
}

// git runs git in the repository and returns its output; failing fails
// the test.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	out, err := r.try(args...)
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (r *testRepo) try(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.root
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (r *testRepo) write(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) ref(name string) refstore.Hash {
	r.t.Helper()
	h, ok, err := r.repo.ReadRef(name)
	if err != nil || !ok {
		r.t.Fatalf("ref %s: %v %v", name, ok, err)
	}
	return h
}

func (r *testRepo) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(r.root, rel))
	return err == nil
}

// admin is the registration directory of the worktree at rel.
func (r *testRepo) admin(rel string) string {
	r.t.Helper()
	entries, err := scan(r.repo)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, e := range entries {
		if e.path == filepath.Join(r.root, rel) {
			return e.admin
		}
	}
	r.t.Fatalf("no registration of %s", rel)
	return ""
}

// sound checks that git can read every worktree and the repository.
func (r *testRepo) sound() {
	r.t.Helper()
	r.git("worktree", "list", "--porcelain")
	r.git("fsck", "--no-progress")
}

// deadOwner is the owner string of a process of this host that is gone.
func deadOwner(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	o := proc.Me()
	o.PID = cmd.Process.Pid
	// A start long gone: should the busy machine (pids wrap at 32768)
	// give the pid to a new process meanwhile, that one started later, and
	// the owner is still gone.
	o.Start = time.Now().Add(-24 * time.Hour).Truncate(time.Second)
	return o.String()
}

// lock writes a lock reason into a registration, as git worktree add
// --lock --reason does.
func lock(t *testing.T, admin, reason string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(admin, "locked"), []byte(reason), 0o644); err != nil {
		t.Fatal(err)
	}
}

// holds is a Recovery whose board holds the given tasks' worktrees.
func holds(integration string, ids ...string) Recovery {
	return Recovery{
		Holds: func(id string) (bool, error) {
			for _, h := range ids {
				if h == id {
					return true, nil
				}
			}
			return false, nil
		},
		Integration: func() (string, error) { return integration, nil },
	}
}

func recoverOK(t *testing.T, r *testRepo, rec Recovery) []Repair {
	t.Helper()
	got, err := Recover(context.Background(), r.repo, rec)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func whats(rs []Repair) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.String())
	}
	return strings.Join(s, "\n")
}

// timeAgo dates a path back past refstore.StaleLockAge.
func timeAgo(t *testing.T, p string) time.Time {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	return old
}
