package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// teamFixture is a project with a board and tasks a and b, for a team that
// git liza run starts with agent.sh as its agent: a coder's session
// writes its pid to marks/TASK (whole, by a rename), then works until it
// is stopped. It returns the project, the marks directory, the agent
// script, the environment of every command (bin's git-liza first on PATH,
// nothing of the caller's git or Liza settings) and a runner of commands
// in the project that fails the test on an error.
type teamFixture struct {
	proj, marks, agent string
	env                []string
	must               func(name string, args ...string) string
}

func newTeamFixture(t *testing.T, bin, goal string) *teamFixture {
	t.Helper()
	work, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(work, "home")
	f := &teamFixture{proj: filepath.Join(work, "proj"), marks: filepath.Join(work, "marks"), agent: filepath.Join(work, "agent.sh")}
	for _, d := range []string{home, filepath.Join(f.proj, "specs"), f.marks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, content := range map[string]string{
		filepath.Join(home, ".gitconfig"):           "[init]\n\tdefaultBranch = main\n",
		filepath.Join(f.proj, "specs", "vision.md"): "vision\n",
		f.agent: "[ \"$LIZA_ROLE\" = coder ] && echo $$ > \"" + f.marks + "/$LIZA_TASK.tmp\" && mv \"" + f.marks + "/$LIZA_TASK.tmp\" \"" + f.marks + "/$LIZA_TASK\"\nexec sleep 300\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "GIT_") && !strings.HasPrefix(k, "LIZA_") && k != "HOME" && k != "PATH" {
			f.env = append(f.env, kv)
		}
	}
	f.env = append(f.env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com",
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	f.must = func(name string, args ...string) string {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir, c.Env = f.proj, f.env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	f.must("git", "init", "-q", "-b", "main")
	f.must("git", "add", ".")
	f.must("git", "commit", "-q", "-m", "start")
	f.must("git-liza", "init", goal)
	for _, id := range []string{"a", "b"} {
		f.must("git-liza", "task", "add", "--id", id, "--desc", "task "+id, "--spec", "specs/vision.md", "--done", "d", "--scope", "s/"+id)
	}
	return f
}
