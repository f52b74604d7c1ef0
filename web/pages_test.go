package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
)

func get(t *testing.T, b *board, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", b.ts.URL+path, nil)
	res, body := do(t, req)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d\n%s", path, res.StatusCode, body)
	}
	return body
}

// A task's page shows its history with reasons, its questions, the tasks
// it waits on, and its sessions; a session's page shows the agent's steps
// as transcript renders them, escaped.
func TestTaskPage(t *testing.T) {
	b := newBoard(t, Options{})
	ctx := context.Background()
	if _, err := b.human.As("coder-1", 0).Block(ctx, ops.BlockRequest{Task: "a", Reason: "the spec is silent", Questions: []string{"How many retries?"}}); err != nil {
		t.Fatal(err)
	}
	// A session log of coder-1 on task a, as its supervisor writes one.
	dir := filepath.Join(b.root, ".git", "liza", "logs", "sessions", "coder-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	var lines []string
	for _, r := range []transcript.Record{
		{T: at, Header: &transcript.Header{Agent: "coder-1", Task: "a", Label: "a", Session: 1, CLI: "sh", Format: "text", Started: at}},
		{T: at.Add(time.Second), Out: "running <b>tests</b>\x1b]0;pwned\x07"},
		{T: at.Add(2 * time.Second), End: &transcript.End{Outcome: "blocked", Exit: 0, Seconds: 2}},
	} {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(data))
	}
	if err := os.WriteFile(filepath.Join(dir, "20260117T100000Z-1.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := get(t, b, "/task/a")
	for _, want := range []string{"BLOCKED", "the spec is silent", "How many retries?", `/task/a/session/1`, "blocked</strong> by coder-1"} {
		if !strings.Contains(body, want) {
			t.Errorf("/task/a lacks %q:\n%s", want, body)
		}
	}
	body = get(t, b, "/task/a/session/1")
	if !strings.Contains(body, `running &lt;b&gt;tests&lt;/b&gt;\x1b]0;pwned\x07`) || strings.Contains(body, "\x1b") {
		t.Errorf("the session's output is not shown escaped:\n%s", body)
	}
	req, _ := http.NewRequest("GET", b.ts.URL+"/task/b/session/1", nil)
	if res, _ := do(t, req); res.StatusCode != http.StatusConflict {
		t.Errorf("another task's session: %d, want 409", res.StatusCode)
	}
	req, _ = http.NewRequest("GET", b.ts.URL+"/task/..%2f..%2fetc/session/1", nil)
	if res, _ := do(t, req); res.StatusCode == http.StatusOK {
		t.Errorf("a task id with a path: %d", res.StatusCode)
	}

	// The operator unblocks it from its page.
	res, text := post(t, b, "/lever/unblock", url.Values{"task": {"a"}}, map[string]string{"X-Liza-Token": testToken, "Accept": "text/plain"})
	if res.StatusCode != http.StatusOK || !strings.Contains(text, "UNCLAIMED") || b.lastOp(t).Op != "unblock" {
		t.Errorf("unblock: %d %s", res.StatusCode, text)
	}
	// A refused operation says why, with the status of its class.
	res, text = post(t, b, "/lever/unblock", url.Values{"task": {"b"}}, map[string]string{"X-Liza-Token": testToken, "Accept": "text/plain"})
	if res.StatusCode != http.StatusConflict || !strings.Contains(text, "not BLOCKED") {
		t.Errorf("unblock of an UNCLAIMED task: %d %s", res.StatusCode, text)
	}
}

// The log shows what each operation changed, field by field.
func TestLogPage(t *testing.T) {
	b := newBoard(t, Options{})
	body := get(t, b, "/log?task=a")
	for _, want := range []string{"claim a (coder-1)", "status: <del>UNCLAIMED</del> → <ins>CLAIMED</ins>", "<ins>+ assigned_to: coder-1</ins>"} {
		if !strings.Contains(body, want) {
			t.Errorf("/log?task=a lacks %q:\n%s", want, body)
		}
	}
	if body := get(t, b, "/log?task=b"); strings.Contains(body, "claim a") {
		t.Errorf("/log?task=b shows task a's claim")
	}
}

// The board marks a task that waits on an unmerged one.
func TestBoardWaitsOn(t *testing.T) {
	b := newBoard(t, Options{})
	task := ops.AddTaskRequest{}
	task.Task.ID, task.Task.Description, task.Task.SpecRef = "c", "after a", "specs/vision.md"
	task.Task.DoneWhen, task.Task.Scope, task.Task.Priority, task.Task.DependsOn = "c.txt exists", "IN: c.txt", 2, []string{"a"}
	task.Task.Status = "UNCLAIMED"
	if _, err := b.human.AddTask(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	body := get(t, b, "/")
	i := strings.Index(body, `id="task-c"`)
	if i < 0 || !strings.Contains(body[i:], "waits on a (CLAIMED)") {
		t.Errorf("task c does not wait on a:\n%s", body)
	}
	if j := strings.Index(body, `id="task-b"`); j < 0 || strings.Contains(body[j:j+300], "waits on") {
		t.Errorf("task b waits on something")
	}
}

// A task's patch: its lines marked, an agent's code shown as text, and no
// program the repository's configuration names is run to make it.
func TestDiffPage(t *testing.T) {
	b := newBoard(t, Options{})
	gitIn := b.onTaskA(t)
	// A diff driver the project's configuration names: it must not run.
	marker := filepath.Join(t.TempDir(), "ran")
	gitIn("config", "diff.evil.command", "touch "+marker)
	if err := os.WriteFile(filepath.Join(b.root, ".gitattributes"), []byte("*.txt diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.root, "a.txt"), []byte("<script>alert(1)</script>\x1b[2J\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("add", "a.txt", ".gitattributes")
	gitIn("commit", "-q", "-m", "a")
	if body := get(t, b, "/task/a"); !strings.Contains(body, `href="/task/a/diff"`) || !strings.Contains(body, "a.txt") {
		t.Errorf("/task/a does not list a.txt with a link to its patch:\n%s", body)
	}
	body := get(t, b, "/task/a/diff")
	if !strings.Contains(body, `<span class="add">&#43;&lt;script&gt;alert(1)&lt;/script&gt;\x1b[2J</span>`) {
		t.Errorf("the patch does not show the added line escaped:\n%s", body)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the diff ran the repository's diff driver")
	}
}
