package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/mcpserver"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// testNow is the clock of every test board.
var testNow = time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)

// board is a test repository with a blackboard: tasks a and b, a claimed
// by coder-1 into its worktree.
type board struct {
	root  string
	human *ops.Service
}

func newBoard(t *testing.T) *board {
	t.Helper()
	root := testrepo.New(t, nil)
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	human, err := ops.New(repo, ops.Options{Clock: func() time.Time { return testNow }, Budget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := human.Init(ctx, ops.InitRequest{Goal: "ship it", Spec: "specs/vision.md"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := human.AddTask(ctx, ops.AddTaskRequest{Task: task(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := human.As("coder-1", 0).Claim(ctx, ops.ClaimRequest{Task: "a"}); err != nil {
		t.Fatal(err)
	}
	return &board{root: root, human: human}
}

// checkpoint records coder-1's pre-execution checkpoint on task id, as the
// command line does; a submission needs one.
func (b *board) checkpoint(t *testing.T, id string) {
	t.Helper()
	cp := contracts.Checkpoint{Intent: "write " + id, Validation: "cat " + id + ".txt", FilesToModify: contracts.StringList{id + ".txt"}}
	if _, err := b.human.As("coder-1", 0).Checkpoint(context.Background(), ops.CheckpointRequest{Task: id, Checkpoint: cp}); err != nil {
		t.Fatal(err)
	}
}

// task is a task ready to add.
func task(id string) contracts.Task {
	return contracts.Task{ID: id, Description: "do " + id, SpecRef: "specs/vision.md", DoneWhen: id + ".txt exists",
		Scope: "IN: " + id + ".txt", Priority: 3, Status: contracts.Unclaimed}
}

// session is a client connected in-process to the server of a session
// whose supervisor set env (LIZA_AGENT_ID and the like).
func (b *board) session(t *testing.T, env map[string]string, human bool) *mcp.ClientSession {
	t.Helper()
	id, err := mcpserver.FromEnv(func(k string) string { return env[k] }, human)
	if err != nil {
		t.Fatal(err)
	}
	svc := b.human.As(id.Agent, id.Generation)
	srv, err := mcpserver.New(svc, id, "test")
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); cancel() })
	return cs
}

// coder is the session of coder-1 on task a.
func (b *board) coder(t *testing.T) *mcp.ClientSession {
	return b.session(t, map[string]string{"LIZA_AGENT_ID": "coder-1", "LIZA_ROLE": "coder", "LIZA_TASK": "a",
		"LIZA_PROJECT_ROOT": b.root, "LIZA_WORKTREE": filepath.Join(b.root, ".worktrees", "a")}, false)
}

// call calls a tool with args (a JSON object).
func call(t *testing.T, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("bad test args %s: %v", args, err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// refused checks that res is a refusal of exit code code whose text has
// want.
func refused(t *testing.T, res *mcp.CallToolResult, code contracts.Code, want string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("not refused: %s", text(res))
	}
	got := text(res)
	if !strings.HasPrefix(got, "exit "+string(rune('0'+code))+" (") || !strings.Contains(got, want) {
		t.Fatalf("refusal = %q, want exit %d and %q", got, code, want)
	}
	if res.Meta["exit_code"] != float64(code) {
		t.Fatalf("_meta = %v, want exit_code %d", res.Meta, code)
	}
}

// tools lists the names of the tools a session is offered.
func tools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// The coder's checkpoint is recorded on its task, as git liza checkpoint
// records it.
func TestCoderCheckpoint(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	res := call(t, cs, "checkpoint", `{"intent":"write a.txt","validation":"test -f a.txt prints nothing, exit 0","files_to_modify":["a.txt"]}`)
	if res.IsError {
		t.Fatalf("checkpoint refused: %s", text(res))
	}
	var out mcpserver.TaskOut
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &out); err != nil {
		t.Fatal(err)
	}
	if out.Task != "a" || out.Status != "CLAIMED" || len(out.Commit) != 40 {
		t.Fatalf("checkpoint = %+v", out)
	}
	tk, err := b.human.Task(context.Background(), "", "a")
	if err != nil {
		t.Fatal(err)
	}
	last := tk.History[len(tk.History)-1]
	if last.Checkpoint == nil || last.Checkpoint.Intent != "write a.txt" || last.Agent != "coder-1" {
		t.Fatalf("last history event = %+v", last)
	}
}

// No tool takes an agent id, and a coder's tools act on its own task only.
func TestCoderBoundToItself(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	cp := `"intent":"x","validation":"y","files_to_modify":["b.txt"]`
	refused(t, call(t, cs, "checkpoint", `{`+cp+`,"agent":"coder-2"}`), contracts.CodeInvalid, "agent")
	refused(t, call(t, cs, "checkpoint", `{`+cp+`,"task":"b"}`), contracts.CodeInvalid, "works on task a, not b")
	refused(t, call(t, cs, "checkpoint", `{"intent":"x"}`), contracts.CodeInvalid, "validation")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Everyone reads the board; a coder's list has its own tools and no
// other role's.
func TestStatusAndToolList(t *testing.T) {
	b := newBoard(t)
	cs := b.coder(t)
	res := call(t, cs, "status", `{"mine":true}`)
	if res.IsError {
		t.Fatalf("status refused: %s", text(res))
	}
	var board ops.Board
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &board); err != nil {
		t.Fatal(err)
	}
	if len(board.Tasks) != 1 || board.Tasks[0].ID != "a" || board.Mode != "RUNNING" {
		t.Fatalf("status mine = %+v", board)
	}
	names := tools(t, cs)
	if !slices.Contains(names, "checkpoint") || slices.Contains(names, "verdict") || slices.Contains(names, "task_add") {
		t.Fatalf("coder tools = %v", names)
	}
}

// Each role's session is offered exactly the tools its prompt names
// (contracts.RoleTools, which CLI.md spells): a tool added to one and not
// the other fails here.
func TestToolsAsPromptsNameThem(t *testing.T) {
	b := newBoard(t)
	sessions := map[contracts.Role]map[string]string{
		contracts.RoleCoder:    {"LIZA_AGENT_ID": "coder-1", "LIZA_TASK": "a"},
		contracts.RoleReviewer: {"LIZA_AGENT_ID": "code-reviewer-1", "LIZA_TASK": "a"},
		contracts.RolePlanner:  {"LIZA_AGENT_ID": "planner-1"},
	}
	for role, env := range sessions {
		env["LIZA_PROJECT_ROOT"] = b.root
		want := contracts.RoleTools(role)
		slices.Sort(want)
		if got := tools(t, b.session(t, env, false)); !slices.Equal(got, want) {
			t.Errorf("%s is offered %v; its prompt names %v", role, got, want)
		}
	}
}
