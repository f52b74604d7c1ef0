package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

const stamp = "2026-01-17T10:00:00Z"

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestReferenceTransactionHandler(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	for _, tc := range []struct {
		name, state, input string
		env                map[string]string
		refused            string
	}{
		{"moved by hand", "prepared", z + " " + a + " refs/heads/x\n" + z + " " + a + " refs/liza/state\n", nil,
			"refusing to move refs/liza/state to aaaaaaaaaaaa by hand: it moves only through git liza commands (git liza hooks uninstall removes this guard)"},
		{"deleted by hand", "prepared", a + " " + z + " refs/liza/state\n", nil, "refusing to delete refs/liza/state by hand"},
		{"git-liza's own", "prepared", z + " " + a + " refs/liza/state\n", map[string]string{refstore.RefUpdateEnv: "1"}, ""},
		{"committed", "committed", z + " " + a + " refs/liza/state\n", nil, ""},
		{"other refs", "prepared", z + " " + a + " refs/liza/remotes/origin/state\n", nil, ""},
	} {
		h := &Handler{Dir: dir, Stdin: strings.NewReader(tc.input), Getenv: env(tc.env)}
		err := h.Run(context.Background(), ReferenceTransaction, []string{tc.state})
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.refused != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.refused)):
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.refused)
		}
	}
}

func TestEmptyMessage(t *testing.T) {
	for msg, want := range map[string]bool{
		"":                        true,
		"\n\n# Please enter\n#\n": true,
		"fix it\n# comment\n":     false,
		"# only\n# ------------------------ >8 ------------------------\ndiff --git a b\n": true,
		"  \n  body\n": false,
	} {
		if got := emptyMessage(msg, ""); got != want {
			t.Errorf("emptyMessage(%q) = %v", msg, got)
		}
	}
	if emptyMessage("; a comment\n", ";") != true || emptyMessage("# not one\n", ";") != false {
		t.Error("core.commentChar not honoured")
	}
}

// liveBoard is a repository with a blackboard made by git-liza's operations:
// init, then tasks a and b added by planner-1.
func liveBoard(t *testing.T) (string, *ops.Service) {
	t.Helper()
	dir := newRepo(t)
	writeFile(t, dir+"/specs/x.md", "# x\n", 0o644)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "spec")
	repo, err := refstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC) }
	svc, err := ops.New(repo, ops.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.Init(ctx, ops.InitRequest{Goal: "goal"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := svc.As("planner-1", 0).AddTask(ctx, ops.AddTaskRequest{Task: contracts.Task{ID: id, Description: "do " + id,
			SpecRef: "specs/x.md", DoneWhen: "done", Scope: "s", Priority: 3, Status: contracts.Unclaimed}}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, svc
}

// receive runs the pre-receive handler on one update of refs/liza/state.
func receive(t *testing.T, dir, old, new string) (string, error) {
	t.Helper()
	var stderr bytes.Buffer
	clock := func() time.Time { return time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC) }
	h := &Handler{Dir: dir, Stdin: strings.NewReader(old + " " + new + " " + stateRef + "\n"), Stderr: &stderr, Getenv: env(nil), Clock: clock}
	err := h.Run(context.Background(), PreReceive, nil)
	return stderr.String(), err
}

// TestPreReceive: commits git-liza made pass, alone or several at once;
// a rewind, a deletion, a merge, a commit without trailers, a role
// violation and a commit whose change is not what its label says are
// refused, each reported on its own line.
func TestPreReceive(t *testing.T) {
	dir, _ := liveBoard(t)
	t.Setenv("GIT_AUTHOR_DATE", "2026-01-17T10:00:00Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-17T10:00:00Z")
	z := refstore.ZeroID.String()
	tip := git(t, dir, "rev-parse", stateRef)
	first := git(t, dir, "rev-list", "--max-parents=0", stateRef)
	mid := git(t, dir, "rev-parse", stateRef+"~1")

	for _, u := range [][2]string{{z, first}, {first, tip}, {z, tip}, {mid, tip}} {
		if out, err := receive(t, dir, u[0], u[1]); err != nil {
			t.Errorf("%s..%s refused: %v\n%s", u[0][:7], u[1][:7], err, out)
		}
	}
	h := &Handler{Dir: dir, Stdin: strings.NewReader(tip + " " + z + " refs/heads/x\n"), Stderr: &bytes.Buffer{}, Getenv: env(nil)}
	if err := h.Run(context.Background(), PreReceive, nil); err != nil {
		t.Errorf("other ref: %v", err)
	}

	out, err := receive(t, dir, tip, mid)
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeInvalid || !strings.Contains(out, "is not a fast-forward of") {
		t.Errorf("rewind: %v\n%s", err, out)
	}
	if out, err := receive(t, dir, tip, z); err == nil || !strings.Contains(out, "may not be deleted") {
		t.Errorf("deletion: %v\n%s", err, out)
	}

	tree := git(t, dir, "rev-parse", tip+"^{tree}")
	midTree := git(t, dir, "rev-parse", mid+"^{tree}")
	commit := func(parent, tree, msg string) string {
		cmd := []string{"-c", "user.name=x", "-c", "user.email=x@y", "commit-tree", "-p", parent, "-m", msg, tree}
		return git(t, dir, cmd...)
	}
	side := commit(mid, tree, "side\n\nLiza-Op: note\nLiza-Agent: human")
	merge := git(t, dir, "commit-tree", "-p", tip, "-p", side, "-m", "merge\n\nLiza-Op: note\nLiza-Agent: human", tree)
	if out, err := receive(t, dir, tip, merge); err == nil || !strings.Contains(out, "a merge; state commits have one parent") {
		t.Errorf("merge: %v\n%s", err, out)
	}

	// A commit by hand; the change of add b relabelled as a heartbeat of
	// coder-1; the add itself claimed by a coder. All refused, each on its
	// own line with its commit.
	rulesTrailer := fmt.Sprintf("Liza-Rules: %d", contracts.Rules)
	bare := commit(mid, tree, "by hand")
	relabelled := commit(mid, tree, "heartbeat (coder-1)\n\nLiza-Op: heartbeat\nLiza-Agent: coder-1\nLiza-Kind: heartbeat\n"+rulesTrailer+"\nLiza-Input: {}")
	role := commit(mid, tree, "add b (coder-1)\n\nLiza-Op: add\nLiza-Agent: coder-1\nLiza-Kind: add\n"+rulesTrailer+"\nLiza-Input: {}")
	for _, c := range []struct{ commit, want string }{
		{bare, "lacks the Liza-Op and Liza-Agent trailers"},
		{relabelled, "its change is not what heartbeat by coder-1 makes: it differs in"},
		{role, "coder-1 (coder) may not add"},
	} {
		out, err := receive(t, dir, mid, c.commit)
		if err == nil || err.Error() != "refusing the push: 1 problem(s)" || !strings.Contains(out, "git-liza: commit "+c.commit[:12]+": ") || !strings.Contains(out, c.want) {
			t.Errorf("%s: %v\n%s", c.want, err, out)
		}
	}

	// An import may replace the state, but not lose a task.
	back := commit(tip, midTree, "import\n\nLiza-Op: import\nLiza-Agent: human\nLiza-Kind: import\n"+rulesTrailer+"\nLiza-Input: {}")
	if out, err := receive(t, dir, tip, back); err == nil || !strings.Contains(out, "the import deletes task b") {
		t.Errorf("import dropping a task: %v\n%s", err, out)
	}
	keep := commit(tip, tree, "import\n\nLiza-Op: import\nLiza-Agent: human\nLiza-Kind: import\n"+rulesTrailer+"\nLiza-Input: {}")
	if out, err := receive(t, dir, tip, keep); err != nil {
		t.Errorf("import keeping everything: %v\n%s", err, out)
	}
}
