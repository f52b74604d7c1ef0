package mcpserver_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// TestToolsGiveTheSyncHint: in a fresh clone of a repository whose origin
// has a board, a tool call says how to join it (git liza sync origin), as
// every command does, rather than that there is no board.
func TestToolsGiveTheSyncHint(t *testing.T) {
	b := newBoard(t)
	clone := filepath.Join(filepath.Dir(b.root), "clone")
	git(t, filepath.Dir(b.root), "clone", "-q", b.root, clone)
	repo, err := refstore.Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ops.New(repo, ops.Options{Clock: func() time.Time { return testNow }, Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fresh := &board{root: clone, human: svc}
	human := fresh.session(t, map[string]string{}, true)
	coder := fresh.session(t, map[string]string{"LIZA_AGENT_ID": "coder-1", "LIZA_ROLE": "coder", "LIZA_TASK": "a",
		"LIZA_PROJECT_ROOT": clone, "LIZA_WORKTREE": filepath.Join(clone, ".worktrees", "a")}, false)
	for _, c := range []struct {
		cs         *mcp.ClientSession
		tool, args string
	}{
		{human, "status", `{}`}, {human, "show_task", `{"task":"a"}`}, {human, "log_task", `{"task":"a"}`},
		{human, "validate", `{}`}, {human, "note", `{"message":"hello"}`}, {human, "pause", `{"reason":"lunch"}`},
		{coder, "checkpoint", `{"intent":"x","validation":"y","files_to_modify":["a.txt"]}`}, {coder, "submit", `{}`},
		{coder, "block", `{"blocked_reason":"stuck","blocked_questions":["why?"]}`},
	} {
		res := call(t, c.cs, c.tool, c.args)
		if !res.IsError {
			t.Errorf("%s in a clone with no board answered %s", c.tool, text(res))
			continue
		}
		if got := text(res); !strings.Contains(got, "origin has one: run `git liza sync origin` to join it") {
			t.Errorf("%s in a fresh clone: %s", c.tool, got)
		}
	}
}
