package transcript

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// A supervisor reads what a Claude Code session has spent while it runs,
// before its result event: each model request's usage once, however many
// events its message comes in; then the result's figures.
func TestSpentWhileRunning(t *testing.T) {
	var log bytes.Buffer
	w := NewWriter(&log, Header{Agent: "coder-1", Task: "a"}, FormatClaude)
	if got := tokens(w.Spent()); got != 0 {
		t.Fatalf("spent %d tokens before any output", got)
	}
	turn := func(n int) string {
		// One message in two events (text, then a tool call), both with
		// the request's usage, then the tool's result.
		u := `"usage":{"input_tokens":` + strings.Repeat("1", n) + `00,"output_tokens":10,"cache_read_input_tokens":5}`
		return `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"working"}],` + u + `}}` + "\n" +
			`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],` + u + `}}` + "\n" +
			`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}` + "\n"
	}
	w.Stdout().Write([]byte(turn(1)))
	if got := w.Spent(); got.InputTokens != 100 || got.OutputTokens != 10 || got.CacheReadTokens != 5 {
		t.Fatalf("after one request: %+v, want 100 in, 10 out, 5 cache read", got)
	}
	// The scripted model gives every message the same id: a new turn
	// after a tool's result counts again.
	w.Stdout().Write([]byte(turn(2)))
	if got := tokens(w.Spent()); got != 115+1115 {
		t.Fatalf("after two requests: %d tokens, want %d", got, 115+1115)
	}
	w.Stdout().Write([]byte(`{"type":"result","subtype":"success","total_cost_usd":0.5,"usage":{"input_tokens":2000,"output_tokens":20}}` + "\n"))
	if got := w.Spent(); tokens(got) != 2020 || got.CostUSD != 0.5 {
		t.Fatalf("after the result: %+v, want the result's 2,020 tokens and $0.5", got)
	}
}

// A captured stream's turns add up to what its result reports.
func TestSpentCapturedClaude(t *testing.T) {
	_, sum := replay(t, "claude", "testdata/claude.jsonl")
	var log bytes.Buffer
	w := NewWriter(&log, Header{}, FormatClaude)
	b := mustRead(t, "testdata/claude.jsonl")
	i := bytes.Index(b, []byte(`"type":"result"`))
	w.Stdout().Write(b[:bytes.LastIndexByte(b[:i], '\n')+1])
	if got, want := tokens(w.Spent()), tokens(sum.Usage); got != want {
		t.Fatalf("the turns before the result add up to %d tokens, the result says %d", got, want)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// OnSpent is called when what the session spent grows, and only then.
func TestOnSpent(t *testing.T) {
	var log bytes.Buffer
	w := NewWriter(&log, Header{}, FormatClaude)
	calls := 0
	w.OnSpent(func() { calls++ })
	msg := `{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":10}}}` + "\n"
	w.Stdout().Write([]byte(msg + msg)) // one request in two events
	if calls != 1 {
		t.Fatalf("%d calls after one request, want 1", calls)
	}
	w.Stdout().Write([]byte(`{"type":"user","message":{"content":"ok"}}` + "\n" + msg))
	if calls != 2 {
		t.Fatalf("%d calls after two requests, want 2", calls)
	}
}
