package web

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// testToken is the token of every test server.
const testToken = "0123456789abcdef0123456789abcdef"

// board is a test repository with a blackboard (tasks a and b, a claimed
// by coder-1) and a web board serving it.
type board struct {
	root  string
	human *ops.Service
	srv   *Server
	ts    *httptest.Server
}

func newBoard(t *testing.T, o Options) *board {
	t.Helper()
	root := testrepo.New(t, nil)
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	human, err := ops.New(repo, ops.Options{Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := human.Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		task := contracts.Task{ID: id, Description: "do " + id, SpecRef: "specs/vision.md", DoneWhen: id + ".txt exists",
			Scope: "IN: " + id + ".txt", Priority: 3, Status: contracts.Unclaimed}
		if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	// The server reads through a Service of its own, as the program does.
	svc, err := ops.New(repo, ops.Options{Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o.Service = svc
	if o.Token == "" {
		o.Token = testToken
	}
	b := &board{root: root, human: human}
	ts := httptest.NewUnstartedServer(nil)
	if o.Hosts == nil {
		o.Hosts = []string{ts.Listener.Addr().String()}
	}
	b.srv, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = b.srv.Handler()
	ts.Start()
	b.ts = ts
	sctx, cancel := context.WithCancel(context.Background())
	go b.srv.Watch(sctx)
	t.Cleanup(func() { cancel(); ts.Close() })
	return b
}

// lastOp is the subject of the newest state commit.
func (b *board) lastOp(t *testing.T) ops.LogEntry {
	t.Helper()
	log, err := b.human.Log(context.Background(), ops.LogRequest{Max: 1})
	if err != nil || len(log) == 0 {
		t.Fatalf("log: %v", err)
	}
	return log[0]
}

// onTaskA checks out task a's branch, from its base commit, in the board's
// repository, and returns a runner of git there (its output, trimmed).
func (b *board) onTaskA(t *testing.T) func(args ...string) string {
	t.Helper()
	task, err := b.human.Task(context.Background(), "", "a")
	if err != nil || task.BaseCommit == "" {
		t.Fatalf("task a has no base commit: %v", err)
	}
	gitIn := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = b.root
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("checkout", "-q", "-b", "task/a", task.BaseCommit)
	return gitIn
}
