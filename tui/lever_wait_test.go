package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// A task's detail runs git diff --stat on the task's branch, which its
// coder makes: 30,000 new files took 2.3 s, and more take the whole 5 s
// the detail gives git. A lever pulled meanwhile (pause, abort) must not
// wait for it. git is slowed here, for the diff stat only.
func TestLeverDoesNotWaitForTheDiffStat(t *testing.T) {
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
	task := contracts.Task{ID: "a", Description: "do a", SpecRef: "specs/vision.md", DoneWhen: "a.txt exists",
		Scope: "IN: a.txt", Priority: 3, Status: contracts.Unclaimed}
	if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a", NoWorktree: true}); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "branch", "task/a").CombinedOutput(); err != nil {
		t.Fatalf("git branch: %v\n%s", err, out)
	}
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, mark := t.TempDir(), filepath.Join(t.TempDir(), "diffing")
	script := "#!/bin/sh\ncase \"$*\" in *--stat=200*) : > " + mark + "; sleep 4;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	svc, err := ops.New(repo, ops.Options{Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(ctx, Options{Service: svc})
	read := m.loadDetail("a")
	go read()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the detail never ran git diff --stat")
		}
	}
	done := make(chan leverMsg, 1)
	pull := m.pull(pauseLever(), "lunch")
	start := time.Now()
	go func() { done <- pull().(leverMsg) }()
	select {
	case msg := <-done:
		if msg.err {
			t.Fatalf("pause refused: %s", msg.text)
		}
		t.Logf("pause pulled in %v during the diff stat: %s", time.Since(start), msg.text)
	case <-time.After(2 * time.Second):
		t.Fatal("the pause waited over 2 s for the task's diff stat")
	}
}
