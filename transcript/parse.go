package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Parser turns a session's records into steps. It keeps state across the
// records of one session (the names of pending tool calls, text arriving
// in pieces, usage per turn): use one per session.
type Parser struct {
	format string
	tools  map[string]string // tool call id → tool name
	// pending is model text arriving in pieces (gemini's deltas), given
	// as one step at the next other record.
	pending   strings.Builder
	pendingT  time.Time
	usage     Usage // codex: the turns' usage so far
	live      liveUsage
	sessionID string
	// lastErr is the last error the CLI reported that nothing went right
	// after (claude).
	lastErr string
}

// NewParser reads records in one of the formats; an unknown format is
// read as text.
func NewParser(format string) *Parser {
	switch format {
	case FormatClaude, FormatCodex, FormatGemini:
	default:
		format = FormatText
	}
	return &Parser{format: format, tools: map[string]string{}}
}

// Record returns the steps one record holds (none for a header, or for
// an event that says nothing a person needs).
func (p *Parser) Record(r Record) []Step {
	var out []Step
	if r.JSON == nil || p.format != FormatGemini {
		out = p.flush(out)
	}
	switch {
	case r.Header != nil:
		return out
	case r.End != nil:
		out = p.flush(out)
		text := r.End.Outcome
		if r.End.Detail != "" {
			text += ": " + r.End.Detail
		}
		return append(out, Step{T: r.T, Kind: KindEnd, Text: text, Error: r.End.Outcome != "done" && r.End.Outcome != "restart"})
	case r.Err != "" || (r.Bytes > 0 && r.Out == "" && r.JSON == nil):
		return append(out, textStep(r.T, KindStderr, r.Err, r.Bytes))
	case r.Out != "":
		// A command's report of its usage (the text format only: a
		// CLI's stream has its own accounting).
		if p.format == FormatText && r.Bytes == 0 {
			if st, ok := usageLine(r.T, json.RawMessage(r.Out)); ok {
				return append(out, st)
			}
		}
		return append(out, textStep(r.T, KindOutput, r.Out, r.Bytes))
	case r.JSON != nil:
		var steps []Step
		switch p.format {
		case FormatClaude:
			steps = p.claude(r.T, r.JSON)
		case FormatCodex:
			steps = p.codex(r.T, r.JSON)
		case FormatGemini:
			steps = p.gemini(r.T, r.JSON)
		default:
			steps = []Step{textStep(r.T, KindOutput, string(r.JSON), 0)}
		}
		return append(out, steps...)
	}
	return out
}

// flush gives pending model text as a step.
func (p *Parser) flush(out []Step) []Step {
	if p.pending.Len() == 0 {
		return out
	}
	st := textStep(p.pendingT, KindText, p.pending.String(), 0)
	p.pending.Reset()
	return append(out, st)
}

// textStep makes a step of a text, cut at MaxText; full is the size of a
// text cut before (0 when whole).
func textStep(t time.Time, kind, text string, full int) Step {
	st := Step{T: t, Kind: kind}
	st.Text, st.Bytes = cutText(text)
	if full > st.Bytes {
		st.Bytes = full
	}
	return st
}

// cutText cuts s at MaxText on a character boundary, returning its full
// size when cut.
func cutText(s string) (string, int) {
	if len(s) <= MaxText {
		return s, 0
	}
	return cut(s, MaxText), len(s)
}

// cut keeps at most n bytes of s, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// oneLine joins the lines of s with spaces, trimmed.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// compact is a JSON value as compact text; a JSON string as its value.
func compact(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// toolStep is a tool call.
func toolStep(t time.Time, tool string, input json.RawMessage) Step {
	st := Step{T: t, Kind: KindTool, Tool: tool}
	st.Input, st.Bytes = cutText(compact(input))
	return st
}

// resultStep is a tool's result.
func resultStep(t time.Time, tool, text string, failed bool) Step {
	st := textStep(t, KindResult, text, 0)
	st.Tool, st.Error = tool, failed
	return st
}
