package transcript

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

// replay writes a captured stream through a Writer, as a supervisor does,
// and returns its steps rendered and its summary.
func replay(t *testing.T, format, file string) ([]string, Summary) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	w := NewWriter(&log, Header{Agent: "coder-1", Task: "a"}, format)
	w.Stdout().Write(b)
	w.End(End{Outcome: "idle"})
	var lines []string
	for _, st := range w.Steps() {
		lines = append(lines, Render(st, 100))
	}
	return lines, w.Summary()
}

// The real streams of the installed CLIs (captured by
// TestAgentCLIStreams against a scripted model: a shell call that
// succeeds, one that fails, closing text) read as the steps a person
// would list, with the CLI's session id and usage.
func TestParseCapturedStreams(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   []string
		sum    Summary
	}{
		{"claude", []string{
			"start  session aeb73ff3-e149-41f5-8b56-2f435083860d, model claude-opus-5-5",
			`tool   Bash {"command":"echo LIZA-STREAM-OK","description":"do the Liza session's work"}`,
			"result LIZA-STREAM-OK",
			`tool   Bash {"command":"ls /liza-no-such-widget","description":"do the Liza session's work"}`,
			`error  Bash: Exit code 2\nls: cannot access '/liza-no-such-widget': No such file or directory`,
			"text   The widget is missing: LIZA-STREAM-END.",
			"usage  300 in, 30 out, $0.0018",
			"end    idle",
		}, Summary{LastToolError: "Bash: Exit code 2 ls: cannot access '/liza-no-such-widget': No such file or directory",
			LastText: "The widget is missing: LIZA-STREAM-END.", Model: "claude-opus-5-5", Usage: Usage{Model: "claude-opus-5-5", InputTokens: 300, OutputTokens: 30, CostUSD: 0.0018000000000000002, CostSource: "reported"}, Steps: 8}},
		{"codex", []string{
			"start  session 01a2178f-6fd2-7123-b49c-3b4596e04286",
			"warn   Model metadata for `scripted` not found. Defaulting to fallback metadata; this can degrade performan… (120 bytes)",
			"tool   shell /bin/bash -c 'echo LIZA-STREAM-OK'",
			`result LIZA-STREAM-OK\n`,
			"tool   shell /bin/bash -c 'ls /liza-no-such-widget'",
			`error  shell: ls: cannot access '/liza-no-such-widget': No such file or directory\n`,
			"text   The widget is missing: LIZA-STREAM-END.",
			"usage  300 in, 30 out",
			"end    idle",
		}, Summary{LastToolError: "shell: ls: cannot access '/liza-no-such-widget': No such file or directory",
			LastText: "The widget is missing: LIZA-STREAM-END.", Usage: Usage{InputTokens: 300, OutputTokens: 30}, Steps: 9}},
		{"gemini", []string{
			"start  session 346794b4-a44a-4f37-acc5-1b5794f6450c, model auto",
			`tool   run_shell_command {"command":"echo LIZA-STREAM-OK"}`,
			"result LIZA-STREAM-OK",
			`tool   run_shell_command {"command":"ls /liza-no-such-widget"}`,
			// gemini 0.61.0 reports a shell command that exits 2 as a
			// success, with no exit code in its stream.
			"result ls: cannot access '/liza-no-such-widget': No such file or directory",
			`tool   read_file {"file_path":"/liza-no-such-widget"}`,
			`error  read_file: Path not in workspace: Attempted path "/liza-no-such-widget" resolves outside the allowed… (253 bytes)`,
			"text   The widget is missing: LIZA-STREAM-END.",
			"usage  500 in, 50 out",
			"end    idle",
		}, Summary{LastText: "The widget is missing: LIZA-STREAM-END.", Model: "auto", Usage: Usage{Model: "scripted", InputTokens: 500, OutputTokens: 50}, Steps: 10}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			got, sum := replay(t, tc.format, "testdata/"+tc.format+".jsonl")
			if g, w := strings.Join(got, "\n"), strings.Join(tc.want, "\n"); g != w {
				t.Errorf("steps:\n%s\nwant:\n%s", g, w)
			}
			if sum.SessionID == "" || !strings.HasPrefix(tc.want[0], "start  session "+sum.SessionID) {
				t.Errorf("session id %q", sum.SessionID)
			}
			sum.SessionID = ""
			if tc.format == "gemini" {
				if !strings.HasPrefix(sum.LastToolError, `read_file: Path not in workspace: Attempted path "/liza-no-such-widget"`) {
					t.Errorf("last tool error %q", sum.LastToolError)
				}
				sum.LastToolError = ""
			}
			if sum != tc.sum {
				t.Errorf("summary:\n got %+v\nwant %+v", sum, tc.sum)
			}
		})
	}
}

// Quote gives the last tool error, else the last error the CLI reported,
// else the model's last text; a warning is not an error.
func TestQuote(t *testing.T) {
	var s Summary
	if s.Quote() != "" {
		t.Errorf("empty summary quotes %q", s.Quote())
	}
	s.Add(Step{Kind: KindText, Text: "Let me\nlook."})
	s.Add(Step{Kind: KindError, Text: "just a warning"})
	if got := s.Quote(); got != "last model text: Let me look." {
		t.Errorf("after text: %q", got)
	}
	s.Add(Step{Kind: KindError, Text: "API Error: 529 overloaded", Error: true})
	if got := s.Quote(); got != "last error: API Error: 529 overloaded" {
		t.Errorf("after an error: %q", got)
	}
	// The session recovered: the model's text after the error is quoted.
	s.Add(Step{Kind: KindText, Text: "Retried, fine now."})
	if got := s.Quote(); got != "last model text: Retried, fine now." {
		t.Errorf("after recovering: %q", got)
	}
	s.Add(Step{Kind: KindResult, Tool: "Bash", Text: "<tool_use_error>Blocked: rm -rf /</tool_use_error>", Error: true})
	s.Add(Step{Kind: KindResult, Tool: "Bash", Text: "fine"})
	s.Add(Step{Kind: KindText, Text: "Done."})
	if got := s.Quote(); got != "last tool error: Bash: <tool_use_error>Blocked: rm -rf /</tool_use_error>" {
		t.Errorf("after a tool error: %q", got)
	}
	s.Add(Step{Kind: KindResult, Tool: "Bash", Text: strings.Repeat("x", 5000), Error: true})
	if n := len(s.Quote()); n > 700 {
		t.Errorf("a quote of %d bytes", n)
	}
}

// gemini's text arrives in pieces: one step for a run of them.
func TestGeminiDeltas(t *testing.T) {
	p := NewParser(FormatGemini)
	var steps []Step
	for _, l := range []string{
		`{"type":"message","role":"assistant","content":"The wid","delta":true}`,
		`{"type":"message","role":"assistant","content":"get is missing.","delta":true}`,
		`{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}`,
		`{"type":"message","role":"assistant","content":"Bye.","delta":true}`,
	} {
		steps = append(steps, p.Record(Record{JSON: []byte(l)})...)
	}
	steps = append(steps, p.Record(Record{End: &End{Outcome: "done"}})...)
	var got []string
	for _, st := range steps {
		got = append(got, Render(st, 0))
	}
	want := "text   The widget is missing.\ntool   run_shell_command {\"command\":\"ls\"}\ntext   Bye.\nend    done"
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("steps:\n%s\nwant:\n%s", g, want)
	}
}

// Render: one line, escaped, long text cut with its full size.
func TestRender(t *testing.T) {
	for _, tc := range []struct {
		st    Step
		width int
		want  string
	}{
		{Step{Kind: KindText, Text: "\x1b]0;pwned\x07\x1b[2Jred\u202e\nnext"}, 0, `text   \x1b]0;pwned\x07\x1b[2Jred\u202e\nnext`},
		{Step{Kind: KindResult, Tool: "Read", Text: strings.Repeat("a", 4312)}, 10, "result aaaaaaaaaa… (4,312 bytes)"},
		{Step{Kind: KindResult, Text: "short", Bytes: 2 << 20}, 0, "result short… (2,097,152 bytes)"},
		{Step{Kind: KindResult, Tool: "Bash", Text: "exit 1", Error: true}, 0, "error  Bash: exit 1"},
		{Step{Kind: KindUsage, Usage: &Usage{InputTokens: 12000, OutputTokens: 345, CacheReadTokens: 1000, CostUSD: 0.25}}, 0, "usage  12,000 in, 345 out, cache 1,000 read, 0 written, $0.2500"},
		{Step{Kind: KindText, Text: "\x1b\x1b\x1b\x1b"}, 6, `text   \x1b\x… (4 bytes)`},
	} {
		if got := Render(tc.st, tc.width); got != tc.want {
			t.Errorf("Render(%+v, %d)\n got %q\nwant %q", tc.st, tc.width, got, tc.want)
		}
		if strings.ContainsAny(Render(tc.st, tc.width), "\x1b\n\u202e") {
			t.Errorf("Render(%+v) is not one escaped line", tc.st)
		}
	}
}

// Sessions that failed for their environment, as the installed CLIs
// report it (captured by hand: claude with no API key; claude with its
// endpoint on a closed port, stopped by SIGINT as a timebox stops it;
// codex offline, stopped): what a block reason would quote.
func TestParseFailedSessions(t *testing.T) {
	for file, want := range map[string]string{
		"claude-not-logged-in": "last error: Not logged in · Please run /login",
		"claude-unreachable":   "last error: API request failed (unknown, no status): retry 4 of 10 in 4952 ms",
		"codex-offline":        "last error: Reconnecting... waiting for network (Connection failed: error sending request)",
	} {
		format, _, _ := strings.Cut(file, "-")
		lines, sum := replay(t, format, "testdata/"+file+".jsonl")
		if got := sum.Quote(); got != want {
			t.Errorf("%s: quote %q, want %q\n%s", file, got, want, strings.Join(lines, "\n"))
		}
	}
	// Stopped by SIGINT, claude's result says only that it was stopped:
	// a warning, not the error quoted.
	lines, _ := replay(t, "claude", "testdata/claude-unreachable.jsonl")
	if !slices.Contains(lines, "warn   error_during_execution: [ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null") {
		t.Errorf("claude's interrupted result:\n%s", strings.Join(lines, "\n"))
	}
	// Not logged in: the error once, not again from the result.
	lines, _ = replay(t, "claude", "testdata/claude-not-logged-in.jsonl")
	if n := strings.Count(strings.Join(lines, "\n"), "Not logged in"); n != 1 {
		t.Errorf("not logged in shown %d times:\n%s", n, strings.Join(lines, "\n"))
	}
}

// A rejected API key (an endpoint on 127.0.0.1 answering 401, as
// Anthropic, OpenAI and Google word it), as each installed CLI reports
// it: the error steps carry the CLI's own code and the HTTP status where
// its stream has them, so that Classify need not read prose.
func TestParseRejectedKey(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		want         Step // the last error step's Kind, Error, Code, Status
		quote        string
	}{
		// claude 2.1.328 retries even a 401 (stopped here by timeout
		// after 7 retries): system/api_retry, error and status.
		{"claude-401", "claude", Step{Kind: KindError, Error: true, Code: "authentication_failed", Status: 401},
			"last error: API request failed (authentication_failed, status 401): retry 7 of 10 in "},
		// codex 0.169.0: five reconnections, an error, turn.failed; the
		// status only in its prose; exit 1.
		{"codex-401", "codex", Step{Kind: KindError, Error: true, Code: "turn.failed"},
			"last error: unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:43917/v1/responses"},
		// gemini 0.61.0: a result of status error, type "unknown", the
		// API's own error JSON in its message; exit 145.
		{"gemini-401", "gemini", Step{Kind: KindError, Error: true, Code: "unknown"},
			`last error: [API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}]`},
	} {
		b, err := os.ReadFile("testdata/" + tc.file + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(&bytes.Buffer{}, Header{}, tc.format)
		w.Stdout().Write(b)
		var last Step
		for _, st := range w.Steps() {
			if st.Kind == KindError && st.Error {
				last = st
			}
		}
		if last.Kind != tc.want.Kind || last.Error != tc.want.Error || last.Code != tc.want.Code || last.Status != tc.want.Status {
			t.Errorf("%s: last error step %+v, want code %q status %d", tc.file, last, tc.want.Code, tc.want.Status)
		}
		if q := w.Summary().Quote(); !strings.HasPrefix(q, tc.quote) {
			t.Errorf("%s: quote %q, want %q", tc.file, q, tc.quote)
		}
	}
}
