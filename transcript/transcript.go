// Package transcript keeps what an agent CLI did in a session: the
// supervisor wraps each line the agent prints into a Record of a JSON lines
// file (a Header first, an End last), and a Parser turns the records of
// the CLI's streaming format (Claude Code's stream-json, codex exec --json,
// gemini's stream-json, or plain text) into Steps: model text, tool calls
// with their input, their results and errors, the CLI's session id and
// what it spent. Render shows a Step on one line; a Summary keeps what a
// crash, an idle session or a timebox quotes.
package transcript

import (
	"encoding/json"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// The formats a session's output is read in.
const (
	FormatClaude = "claude" // claude -p --output-format stream-json --verbose
	FormatCodex  = "codex"  // codex exec --json
	FormatGemini = "gemini" // gemini --output-format stream-json
	FormatText   = "text"   // anything else: plain lines
)

// MaxLine is the longest line of agent output a record keeps; the rest of
// a longer line is dropped and its full size recorded (Record.Bytes).
const MaxLine = 1 << 20

// Usage is what a session spent, as the CLI reports it: the board's
// contracts.Usage, with the same field names. InputTokens counts the input
// not read from a cache, whatever the CLI's convention (codex and gemini
// count cached tokens inside their input tokens; Anthropic's API does
// not), so that Tokens adds up every token once. CostSource is "reported"
// when the CLI gave the cost (Claude Code's total_cost_usd), else empty:
// the board prices it.
type Usage = contracts.Usage

// Failure is a session that failed for its environment, not its task.
type Failure struct {
	Kind    string `json:"kind"`    // "auth", "unreachable", "rate_limit", "quota", "model"
	Message string `json:"message"` // the CLI's own words (one line)
	Fix     string `json:"fix"`     // one line naming the fix
}

// Header is the first record of a session log.
type Header struct {
	Agent   string    `json:"agent"`
	Task    string    `json:"task,omitempty"` // "" for a planner's session
	Label   string    `json:"label"`
	Session int       `json:"session"` // the supervisor's run number
	CLI     string    `json:"cli"`     // preset name or program
	Format  string    `json:"format"`  // "claude", "codex", "gemini", "text"
	Started time.Time `json:"started"`
	Prompt  string    `json:"prompt,omitempty"` // path relative to the project root
	// Prepared is what readied the session's worktree when it was made:
	// the ignored files copied into it, what was refused, the setup step.
	Prepared []string `json:"prepared,omitempty"`
}

// Record is one line of a session log, a JSON lines file (NAME.jsonl
// under .git/liza/logs/sessions/AGENT/). Exactly one of its fields besides
// T (and Bytes) is set. Only the supervisor writes Header and End: a line
// the agent prints, whatever it holds, becomes JSON, Out or Err.
type Record struct {
	T      time.Time       `json:"t"`
	Header *Header         `json:"header,omitempty"`
	JSON   json.RawMessage `json:"json,omitempty"` // a stdout line that is a JSON object (a stream event)
	Out    string          `json:"out,omitempty"`  // any other stdout line
	Err    string          `json:"err,omitempty"`  // a stderr line
	// Bytes is the full size of a line cut at MaxLine (its Out or Err
	// holds the start of it), or of a log line that could not be read.
	Bytes int  `json:"bytes,omitempty"`
	End   *End `json:"end,omitempty"` // the supervisor's last record: how the session ended
}

// End is how a session ended: its outcome as the task history records it
// (ops.Session*), its exit status (-1 when it was stopped), what the
// supervisor said of it and how long it ran.
type End struct {
	Outcome string `json:"outcome"`
	Exit    int    `json:"exit"`
	Detail  string `json:"detail,omitempty"`
	Seconds int    `json:"seconds"`
}

// The kinds of Step.
const (
	KindStart  = "start"  // the CLI's session began (SessionID, Model)
	KindText   = "text"   // the model's text
	KindTool   = "tool"   // a tool call: Tool, Input
	KindResult = "result" // a tool's result: Tool, Text; Error when it failed
	KindError  = "error"  // an error the CLI reported (not a tool's); a warning when not Error
	KindStderr = "stderr" // a line on stderr
	KindOutput = "output" // a stdout line that is no event of the format
	KindUsage  = "usage"  // what the session spent so far (Usage)
	KindEnd    = "end"    // the supervisor's end record (Text: outcome and detail)
)

// Step is one thing the agent did, as logs shows it.
type Step struct {
	T     time.Time `json:"t"`
	Kind  string    `json:"kind"`
	Tool  string    `json:"tool,omitempty"`
	Input string    `json:"input,omitempty"` // a tool call's input, as compact JSON or the command
	Text  string    `json:"text,omitempty"`
	// Bytes is the full size of a text cut at MaxText (0 when whole).
	Bytes int  `json:"bytes,omitempty"`
	Error bool `json:"error,omitempty"`
	// Code and Status are what the CLI's own event says of an error, for
	// telling its kind without reading its prose: Code the CLI's word
	// (claude's "authentication_failed", gemini's error type, codex's
	// event type "turn.failed" or "error"), Status an HTTP status when
	// the CLI gives one.
	Code      string   `json:"code,omitempty"`
	Status    int      `json:"status,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	Model     string   `json:"model,omitempty"`
	Usage     *Usage   `json:"usage,omitempty"`
	Failure   *Failure `json:"failure,omitempty"`
}

// MaxText is the most of one text (a tool's input or result, the model's
// text, a line) a Step keeps.
const MaxText = 64 << 10

// Summary is what a supervisor keeps of a session's steps.
type Summary struct {
	SessionID     string `json:"session_id,omitempty"`
	LastToolError string `json:"last_tool_error,omitempty"` // "TOOL: error text"
	LastText      string `json:"last_text,omitempty"`
	// LastError is the last error the CLI reported, unless the model
	// wrote text or a tool succeeded after it (the session recovered).
	LastError string `json:"last_error,omitempty"`
	// Model is the model the CLI named when its session began; a usage
	// that names none is taken to be its.
	Model   string   `json:"model,omitempty"`
	Usage   Usage    `json:"usage"`
	Steps   int      `json:"steps"`
	Failure *Failure `json:"failure,omitempty"`
}

// quoteMax is the most of a text Quote gives.
const quoteMax = 600

// Add takes one step into the summary.
func (s *Summary) Add(st Step) {
	s.Steps++
	if st.SessionID != "" {
		s.SessionID = st.SessionID
	}
	switch st.Kind {
	case KindText:
		if t := oneLine(st.Text); t != "" {
			s.LastText = cut(t, quoteMax)
			s.LastError = ""
		}
	case KindResult:
		if !st.Error {
			s.LastError = ""
		} else {
			t := oneLine(st.Text)
			if st.Tool != "" {
				t = st.Tool + ": " + t
			}
			s.LastToolError = cut(t, quoteMax)
		}
	case KindError:
		if st.Error { // not a warning
			s.LastError = cut(oneLine(st.Text), quoteMax)
		}
	}
	if st.Kind == KindStart && st.Model != "" {
		s.Model = st.Model
	}
	if st.Usage != nil {
		s.Usage = *st.Usage
	}
	if s.Usage.Model == "" && !s.Usage.IsZero() {
		s.Usage.Model = s.Model
	}
	if st.Failure != nil {
		s.Failure = st.Failure
	}
}

// Quote is what a crash, an idle give-up or a timebox reason quotes of
// the session: the last tool error, else the last error the CLI reported
// (when nothing went right after it), else the model's last text,
// labelled; "" when there is none. It is one
// line, cut to a few hundred bytes, and not escaped (printers escape).
func (s Summary) Quote() string {
	switch {
	case s.LastToolError != "":
		return "last tool error: " + s.LastToolError
	case s.LastError != "":
		return "last error: " + s.LastError
	case s.LastText != "":
		return "last model text: " + s.LastText
	}
	return ""
}
