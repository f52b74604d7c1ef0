package transcript

import (
	"encoding/json"
	"time"
)

// geminiEvent is a line of gemini's stream-json output (--output-format
// stream-json): init, message (the user's, and the assistant's in pieces),
// tool_use, tool_result, error and the final result with its stats.
type geminiEvent struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Stats    *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
		// Models is the usage by model: gemini-cli's init names "auto"
		// when it routes, the stats the models that answered.
		Models map[string]geminiModelStats `json:"models"`
	} `json:"stats"`
}

func (p *Parser) gemini(t time.Time, raw json.RawMessage) []Step {
	var ev geminiEvent
	if json.Unmarshal(raw, &ev) != nil {
		return append(p.flush(nil), textStep(t, KindOutput, string(raw), 0))
	}
	if ev.Type == "message" && ev.Role == "assistant" {
		// The model's text comes in pieces: one step for the run of them.
		if p.pending.Len() == 0 {
			p.pendingT = t
		}
		if p.pending.Len() < MaxText+1 {
			p.pending.WriteString(ev.Content)
		}
		return nil
	}
	out := p.flush(nil)
	switch ev.Type {
	case "init":
		p.sessionID = ev.SessionID
		return append(out, Step{T: t, Kind: KindStart, SessionID: ev.SessionID, Model: ev.Model})
	case "tool_use":
		p.tools[ev.ToolID] = ev.ToolName
		return append(out, toolStep(t, ev.ToolName, ev.Parameters))
	case "tool_result":
		text, failed := ev.Output, ev.Status != "success"
		code := ""
		if ev.Error != nil && ev.Error.Message != "" {
			text, failed, code = ev.Error.Message, true, ev.Error.Type
		}
		tool := p.tools[ev.ToolID]
		delete(p.tools, ev.ToolID)
		st := resultStep(t, tool, text, failed)
		st.Code = code
		return append(out, st)
	case "error":
		st := textStep(t, KindError, ev.Message, 0)
		st.Error = ev.Severity != "warning"
		return append(out, st)
	case "result":
		if ev.Error != nil && ev.Error.Message != "" {
			st := textStep(t, KindError, ev.Error.Message, 0)
			st.Error, st.Code = true, ev.Error.Type
			out = append(out, st)
		} else if ev.Status == "error" {
			st := textStep(t, KindError, "the session failed", 0)
			st.Error, st.Code = true, "error"
			out = append(out, st)
		}
		if ev.Stats != nil {
			// gemini's input tokens include the cached ones.
			cached := min(max(ev.Stats.Cached, 0), max(ev.Stats.InputTokens, 0))
			u := Usage{InputTokens: ev.Stats.InputTokens - cached, OutputTokens: ev.Stats.OutputTokens, CacheReadTokens: cached,
				Model: geminiModel(ev.Stats.Models)}
			out = append(out, Step{T: t, Kind: KindUsage, Usage: &u})
		}
	}
	return out
}

// geminiModelStats is one model's part of a gemini session's stats.
type geminiModelStats struct {
	TotalTokens int64 `json:"total_tokens"`
}

// geminiModel is the model that spent the most of a session's tokens (the
// one its usage is priced at), or "" when the stats name none.
func geminiModel(models map[string]geminiModelStats) string {
	best, most := "", int64(-1)
	for name, m := range models {
		if m.TotalTokens > most || m.TotalTokens == most && name < best {
			best, most = name, m.TotalTokens
		}
	}
	return best
}
