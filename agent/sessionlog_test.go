package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
)

// fakeClaudeStream is what a Claude Code session prints with the claude
// preset's flags, cut down: a Bash call that fails, then a closing text,
// and the session ends without a submit.
const fakeClaudeStream = `{"type":"system","subtype":"init","session_id":"sess-1","model":"claude-test","tools":["Bash"]}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"make widget"}}]},"session_id":"sess-1"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Exit code 2\nmake: *** No rule to make target 'widget'.  Stop.","is_error":true}]},"session_id":"sess-1"}
{"type":"assistant","message":{"content":[{"type":"text","text":"I could not build the widget."}]},"session_id":"sess-1"}
{"type":"result","subtype":"success","is_error":false,"result":"I could not build the widget.","total_cost_usd":0.01,"usage":{"input_tokens":200,"output_tokens":20},"session_id":"sess-1"}
`

// syncBuffer is a bytes.Buffer written by the supervisor while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A session of a CLI with a stream format is kept whole in its .jsonl
// log; when such sessions end without progress, the task's block reason
// quotes the last tool error, not the raw last lines; the supervisor's
// terminal gets the steps rendered, not the raw JSON.
func TestIdleQuotesToolError(t *testing.T) {
	task, logDir, agentOut := runFakeClaude(t, 0)
	want := "3 agent sessions in a row ended without progress, the last: exited 0 but a is still CLAIMED and held: no submit, block or handoff; " +
		"last tool error: Bash: Exit code 2 make: *** No rule to make target 'widget'. Stop."
	if task.BlockedReason != want {
		t.Errorf("blocked reason:\n got %q\nwant %q", task.BlockedReason, want)
	}

	// The session logs: .jsonl files, a header first, every line of the
	// agent's output as a record, an End last.
	logs, _ := filepath.Glob(filepath.Join(logDir, "coder-1", "*-a.jsonl"))
	if len(logs) != 3 {
		t.Fatalf("session logs: %v, want 3 .jsonl files", logs)
	}
	h, recs, err := transcript.ReadFile(logs[2])
	if err != nil {
		t.Fatal(err)
	}
	if h.Agent != "coder-1" || h.Task != "a" || h.Format != "claude" || h.CLI != "fake" || h.Session != 3 || !strings.HasPrefix(h.Prompt, "../") && !strings.Contains(h.Prompt, "prompts") {
		t.Errorf("header: %+v", h)
	}
	var jsonLines, errLines int
	for _, r := range recs {
		if r.JSON != nil {
			jsonLines++
		}
		if r.Err == "a warning" {
			errLines++
		}
	}
	last := recs[len(recs)-1]
	if jsonLines != 5 || errLines != 1 || last.End == nil || last.End.Outcome != ops.SessionIdle || last.End.Exit != 0 {
		t.Errorf("records: %d JSON, %d stderr, last %+v; want 5, 1 and an idle End", jsonLines, errLines, last)
	}

	// The terminal: steps, one line each, not the agent's JSON.
	for _, want := range []string{"tool   Bash {\"command\":\"make widget\"}\n", "error  Bash: Exit code 2\\nmake: *** No rule to make target 'widget'.  Stop.\n", "text   I could not build the widget.\n", "stderr a warning\n"} {
		if !strings.Contains(agentOut, want) {
			t.Errorf("the agent's output on the terminal lacks %q:\n%s", want, agentOut)
		}
	}
	if strings.Contains(agentOut, `"type":`) {
		t.Errorf("raw JSON reached the terminal:\n%s", agentOut)
	}
}

// A crash loop's blocked reason and anomaly quote the stream's last tool
// error too.
func TestCrashQuotesToolError(t *testing.T) {
	task, _, _, st := runFakeClaudeState(t, 3)
	const quote = "last tool error: Bash: Exit code 2 make: *** No rule to make target 'widget'. Stop."
	if !strings.HasPrefix(task.BlockedReason, "agent crash loop: exit status 3 after ") || !strings.HasSuffix(task.BlockedReason, "; "+quote) {
		t.Errorf("blocked reason %q", task.BlockedReason)
	}
	var found bool
	for _, an := range st.Anomalies {
		if an.Type == "retry_loop" && an.TaskID == "a" {
			found = an.Details["last_output"] == quote
			if !found {
				t.Errorf("the anomaly's last_output: %v", an.Details["last_output"])
			}
		}
	}
	if !found {
		t.Errorf("no retry_loop anomaly quoting %q", quote)
	}
}

// runFakeClaude runs a coder supervisor on task a with a fake CLI of the
// claude format that prints fakeClaudeStream and exits with exit, until
// the task is blocked; it returns the task, the log directory and what
// reached the supervisor's terminal from the agent.
func runFakeClaude(t *testing.T, exit int) (*contracts.Task, string, string) {
	task, logDir, out, _ := runFakeClaudeState(t, exit)
	return task, logDir, out
}

func runFakeClaudeState(t *testing.T, exit int) (*contracts.Task, string, string, *contracts.State) {
	t.Helper()
	dir := t.TempDir()
	stream := filepath.Join(dir, "stream.jsonl")
	if err := os.WriteFile(stream, []byte(fakeClaudeStream), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startFake(t, fmt.Sprintf("cat %s\necho 'a warning' >&2\nexit %d", stream, exit), transcript.FormatClaude, 0)
	svc, cfg, logDir := r.svc, r.cfg, r.logDir
	agentOut := r.agentOut
	var task *contracts.Task
	var st *contracts.State
	for deadline := time.Now().Add(60 * time.Second); ; {
		var err error
		st, err = svc.State(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if task = st.Task("a"); task != nil && task.Status == contracts.Blocked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task a not blocked; the supervisor said:\n%s", cfg.Log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if exit != 0 {
		// A crash loop blocks the task, then logs its anomaly, then stops
		// the supervisor: wait for that stop, so that the anomaly is read
		// (and not cancelled half-way).
		r.wait(t, "after the crash loop")
		var err error
		if st, err = svc.State(context.Background(), ""); err != nil {
			t.Fatal(err)
		}
		task = st.Task("a")
	}
	r.cancel()
	r.wait(t, "when cancelled")
	return task, logDir, agentOut.String(), st
}
