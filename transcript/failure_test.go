package transcript

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// steps writes a captured session (its stdout, and its stderr when one
// was kept) through a Writer, as a supervisor does, and returns its steps.
func steps(t *testing.T, format, name string) []Step {
	t.Helper()
	out, err := os.ReadFile("testdata/envfail-" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	w := NewWriter(&log, Header{Agent: "coder-1", Task: "a"}, format)
	w.Stdout().Write(out)
	if errb, err := os.ReadFile("testdata/envfail-" + name + ".stderr"); err == nil {
		w.Stderr().Write(errb)
	}
	return w.Steps()
}

// The real sessions of the installed CLIs that failed for their
// environment (claude 2.1.328, codex 0.169.0, gemini 0.61.0, run against
// an endpoint on 127.0.0.1 that answered as each API does, or against no
// endpoint at all) are told apart: not logged in or a bad key, an
// endpoint that does not answer, a rate limit, a quota, an unknown model;
// each with the CLI's own words and a fix that names what to set.
func TestClassifyCapturedFailures(t *testing.T) {
	for _, tc := range []struct {
		format, name string
		exit         int
		kind, msg    string
		fix          string
	}{
		// claude's own error code on its synthetic assistant message
		// ("error": "authentication_failed", ...).
		{"claude", "claude-nokey", 1, "auth", "Not logged in · Please run /login", "ANTHROPIC_API_KEY"},
		{"claude", "claude-401", 1, "auth", "Invalid API key · Fix external API key", "ANTHROPIC_API_KEY"},
		{"claude", "claude-429", 1, "rate_limit", "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit", "wait"},
		{"claude", "claude-404", 1, "model", "There's an issue with the selected model (claude-opus-5-5). It may not exist or you may not have access to it. Run --model to pick a different model.", "ANTHROPIC_MODEL"},
		{"claude", "claude-refused", 1, "unreachable", "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", "ANTHROPIC_BASE_URL"},
		{"claude", "claude-dns", 1, "unreachable", "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)", "ANTHROPIC_BASE_URL"},
		// codex exec --json gives its failures as text alone: its own fixed
		// messages.
		{"codex", "codex-401", 1, "auth", "unexpected status 401 Unauthorized: Incorrect API key provided: sk-x., url: http://127.0.0.1:18401/v1/responses", "CODEX_API_KEY"},
		{"codex", "codex-envkey", 1, "auth", "Missing environment variable: `MY_KEY`.", "set MY_KEY"},
		{"codex", "codex-429", 1, "rate_limit", "exceeded retry limit, last status: 429 Too Many Requests", "wait"},
		{"codex", "codex-quota", 1, "quota", "Quota exceeded. Check your plan and billing details.", "credits"},
		{"codex", "codex-404", 1, "model", "The model `nosuch` does not exist or you do not have access to it.", "config.toml"},
		// Stopped: codex waits for the network without end.
		{"codex", "codex-refused", -1, "unreachable", "Reconnecting... waiting for network (Connection failed: error sending request)", "base_url"},
		// gemini: its exit code 41 (FatalAuthenticationError), and the API's
		// own error object quoted in its result event.
		{"gemini", "gemini-nokey", 41, "auth", "Please set an Auth method in your /var/tmp/ef/hg-nokey/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA", "GEMINI_API_KEY"},
		{"gemini", "gemini-401", 1, "auth", `[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}]`, "GEMINI_API_KEY"},
		{"gemini", "gemini-404", 1, "model", "[API Error: models/nosuch is not found for API version v1beta, or is not supported for generateContent.]", "GEMINI_MODEL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Classify(tc.format, steps(t, tc.format, tc.name), tc.exit)
			if f == nil {
				t.Fatalf("not classified")
			}
			if f.Kind != tc.kind || f.Message != tc.msg || !strings.Contains(f.Fix, tc.fix) {
				t.Errorf("got %+v\nwant kind %s, message %q, a fix naming %q", *f, tc.kind, tc.msg, tc.fix)
			}
			if strings.ContainsAny(f.Message+f.Fix, "\n\r") {
				t.Errorf("not one line: %+v", *f)
			}
		})
	}
}

// A session that did its work, or failed at its task, is not an
// environment failure: the captured streams of a shell call that failed,
// an exit 0 after a retried rate limit, a forged error line the model
// printed as text, a plain-text command's output.
func TestClassifyNotEnvironment(t *testing.T) {
	for _, format := range []string{"claude", "codex", "gemini"} {
		b, err := os.ReadFile("testdata/" + format + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		w := NewWriter(&log, Header{}, format)
		w.Stdout().Write(b)
		for _, exit := range []int{0, 1} {
			if f := Classify(format, w.Steps(), exit); f != nil {
				t.Errorf("%s exit %d: %+v", format, exit, *f)
			}
		}
	}
	// The rate limit the CLI retried past, then a session that exited 0.
	if f := Classify("claude", steps(t, "claude", "claude-429"), 0); f != nil {
		t.Errorf("exit 0: %+v", *f)
	}
	// The model's own text that looks like an error, and a tool's output.
	forged := []Step{
		{Kind: KindText, Text: "Not logged in · Please run /login"},
		{Kind: KindResult, Tool: "Bash", Text: "unexpected status 401 Unauthorized", Error: true},
	}
	for _, format := range []string{"claude", "codex", "gemini", "text"} {
		if f := Classify(format, forged, 1); f != nil {
			t.Errorf("%s forged: %+v", format, *f)
		}
	}
	// A command of one's own prints what it likes: never classified.
	text := []Step{{Kind: KindOutput, Text: `{"type":"error","message":"unexpected status 401"}`}, {Kind: KindStderr, Text: "Not logged in"}}
	if f := Classify("text", text, 41); f != nil {
		t.Errorf("text: %+v", *f)
	}
}

// Claude Code's error codes, as its stream names them, map to the kinds;
// a billing error is a quota.
func TestClaudeFailureCodes(t *testing.T) {
	for code, kind := range map[string]string{
		"authentication_failed": "auth", "oauth_org_not_allowed": "auth", "billing_error": "quota",
		"rate_limit": "rate_limit", "overloaded": "rate_limit", "model_not_found": "model",
		"invalid_request": "", "max_output_tokens": "", "server_error": "", "unknown": "",
	} {
		got := ""
		if f := claudeFailure(code, "API Error: 500"); f != nil {
			got = f.Kind
		}
		if got != kind {
			t.Errorf("%s: %q, want %q", code, got, kind)
		}
	}
}

// The fixtures package transcript's own tests read, captured from the
// installed CLIs, classify the same way. (Its claude-unreachable is a
// session interrupted while Claude Code still retried: only retries, no
// failure yet; left out.)
func TestClassifyStreamFixtures(t *testing.T) {
	for _, tc := range []struct{ format, file, kind string }{
		{"claude", "claude-not-logged-in", "auth"},
		{"codex", "codex-offline", "unreachable"},
	} {
		b, err := os.ReadFile("testdata/" + tc.file + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		w := NewWriter(&log, Header{}, tc.format)
		w.Stdout().Write(b)
		f := Classify(tc.format, w.Steps(), 1)
		if f == nil || f.Kind != tc.kind {
			t.Errorf("%s: %+v, want %s", tc.file, f, tc.kind)
		}
	}
}
