package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// claudeEvent is a line of Claude Code's stream-json output (-p
// --output-format stream-json --verbose): system/init, assistant and user
// messages, and the final result.
type claudeEvent struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Message   struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *claudeUsage    `json:"usage"`
	} `json:"message"`
	// The result event.
	IsError      bool         `json:"is_error"`
	Result       string       `json:"result"`
	TotalCostUSD *float64     `json:"total_cost_usd"`
	Usage        *claudeUsage `json:"usage"`
	Errors       []string     `json:"errors"`
	// An assistant message the CLI made itself for a failed request
	// ("authentication_failed", "rate_limit", ...).
	Error string `json:"error"`
	// The result of a failed session: why it ended ("api_error") and the
	// HTTP status of the failed request, if any.
	TerminalReason string          `json:"terminal_reason"`
	APIErrorStatus json.RawMessage `json:"api_error_status"`
}

// claudeRetry is a system/api_retry event.
type claudeRetry struct {
	Attempt      int             `json:"attempt"`
	MaxRetries   int             `json:"max_retries"`
	RetryDelayMS int             `json:"retry_delay_ms"`
	ErrorStatus  json.RawMessage `json:"error_status"`
	Error        string          `json:"error"`
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// claudeBlock is a block of a message's content.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (p *Parser) claude(t time.Time, raw json.RawMessage) []Step {
	var ev claudeEvent
	if json.Unmarshal(raw, &ev) != nil {
		return []Step{textStep(t, KindOutput, string(raw), 0)}
	}
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			p.sessionID = ev.SessionID
			return []Step{{T: t, Kind: KindStart, SessionID: ev.SessionID, Model: ev.Model}}
		case "api_retry":
			// A failed request the CLI tries again: the endpoint
			// unreachable, overloaded, limited. Quoted unless the session
			// recovers.
			var r claudeRetry
			_ = json.Unmarshal(raw, &r)
			status := "no status"
			if n := httpStatus(r.ErrorStatus); n != 0 {
				status = fmt.Sprintf("status %d", n)
			}
			p.lastErr = fmt.Sprintf("API request failed (%s, %s): retry %d of %d in %d ms",
				r.Error, status, r.Attempt, r.MaxRetries, r.RetryDelayMS)
			return []Step{{T: t, Kind: KindError, Text: p.lastErr, Error: true, Code: r.Error, Status: httpStatus(r.ErrorStatus)}}
		}
	case "assistant", "user":
		p.claudeTurn(&ev)
		var out []Step
		for _, b := range claudeBlocks(ev.Message.Content) {
			switch b.Type {
			case "text":
				if strings.TrimSpace(b.Text) == "" {
					continue
				}
				st := textStep(t, KindText, b.Text, 0)
				if ev.Type == "user" {
					st.Kind = KindOutput // text the CLI passed as the user's
				}
				if ev.Error != "" {
					st.Kind, st.Error, st.Code = KindError, true, ev.Error
					p.lastErr = b.Text
				} else if st.Kind == KindText {
					p.lastErr = ""
				}
				out = append(out, st)
			case "tool_use":
				p.tools[b.ID] = b.Name
				out = append(out, toolStep(t, b.Name, b.Input))
			case "tool_result":
				if !b.IsError {
					p.lastErr = ""
				}
				out = append(out, resultStep(t, p.tools[b.ToolUseID], claudeResultText(b.Content), b.IsError))
				delete(p.tools, b.ToolUseID)
			}
		}
		return out
	case "result":
		var out []Step
		// A failed session's result repeats the error already shown, or
		// (stopped by SIGINT, at a timebox) gives only its subtype and
		// diagnostics: then it is a warning, and the error before it
		// stays the one quoted.
		if ev.IsError && (ev.Result == "" || ev.Result != p.lastErr) {
			text := ev.Result
			if text == "" {
				text = strings.TrimSpace(ev.Subtype + ": " + strings.Join(ev.Errors, "; "))
			}
			st := textStep(t, KindError, text, 0)
			st.Error = ev.Result != "" || p.lastErr == ""
			st.Code, st.Status = ev.TerminalReason, httpStatus(ev.APIErrorStatus)
			if st.Code == "" {
				st.Code = ev.Subtype
			}
			out = append(out, st)
		}
		var u Usage
		if ev.TotalCostUSD != nil {
			u.CostUSD, u.CostSource = *ev.TotalCostUSD, contracts.CostReported
		}
		if ev.Usage != nil {
			u.InputTokens, u.OutputTokens = ev.Usage.InputTokens, ev.Usage.OutputTokens
			u.CacheReadTokens, u.CacheWriteTokens = ev.Usage.CacheReadInputTokens, ev.Usage.CacheCreationInputTokens
		}
		return append(out, Step{T: t, Kind: KindUsage, SessionID: ev.SessionID, Usage: &u})
	}
	return nil
}

// httpStatus is a status number, or 0 (null, absent, not a number).
func httpStatus(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) != nil {
		return 0
	}
	return n
}

// claudeBlocks reads a message's content: a list of blocks, or a string.
func claudeBlocks(raw json.RawMessage) []claudeBlock {
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) == nil {
		return blocks
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return []claudeBlock{{Type: "text", Text: s}}
	}
	return nil
}

// claudeResultText is a tool result's content: a string, or text blocks.
func claudeResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	for _, b := range claudeBlocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else if b.Type != "" {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}
