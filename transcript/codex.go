package transcript

import (
	"encoding/json"
	"strings"
	"time"
)

// codexEvent is a line of `codex exec --json`: thread.started,
// turn.started, turn.completed (with the turn's usage), turn.failed,
// item.started, item.updated, item.completed and error.
type codexEvent struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Message  string     `json:"message"`
	Error    *codexErr  `json:"error"`
	Usage    *codexUse  `json:"usage"`
	Item     *codexItem `json:"item"`
}

type codexErr struct {
	Message string `json:"message"`
}

type codexUse struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
}

// codexItem is a thread item: agent_message, reasoning,
// command_execution, file_change, mcp_tool_call, web_search, todo_list or
// error.
type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Message          string          `json:"message"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          json.RawMessage `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            *codexErr       `json:"error"`
	Query            string          `json:"query"`
}

func (p *Parser) codex(t time.Time, raw json.RawMessage) []Step {
	var ev codexEvent
	if json.Unmarshal(raw, &ev) != nil {
		return []Step{textStep(t, KindOutput, string(raw), 0)}
	}
	switch ev.Type {
	case "thread.started":
		p.sessionID = ev.ThreadID
		return []Step{{T: t, Kind: KindStart, SessionID: ev.ThreadID}}
	case "turn.completed":
		if ev.Usage == nil {
			return nil
		}
		// Each turn reports its own usage; the steps carry the session's.
		// codex's input tokens include the cached ones (OpenAI's
		// convention): the board counts them apart.
		cached := min(max(ev.Usage.CachedInputTokens, 0), max(ev.Usage.InputTokens, 0))
		p.usage.InputTokens += ev.Usage.InputTokens - cached
		p.usage.CacheReadTokens += cached
		p.usage.OutputTokens += ev.Usage.OutputTokens
		u := p.usage
		return []Step{{T: t, Kind: KindUsage, Usage: &u}}
	case "turn.failed", "error":
		msg := ev.Message
		if ev.Error != nil && ev.Error.Message != "" {
			msg = ev.Error.Message
		}
		// codex names no kind of error: its event type says whether the
		// turn failed ("turn.failed") or it reports and goes on ("error",
		// as while it reconnects).
		st := textStep(t, KindError, msg, 0)
		st.Error, st.Code = true, ev.Type
		return []Step{st}
	case "item.started":
		if ev.Item == nil {
			return nil
		}
		if tool, input, ok := codexCall(ev.Item); ok {
			p.tools[ev.Item.ID] = tool
			st := toolStep(t, tool, nil)
			st.Input, st.Bytes = cutText(input)
			return []Step{st}
		}
	case "item.completed":
		if ev.Item == nil {
			return nil
		}
		return p.codexDone(t, ev.Item)
	}
	return nil
}

// codexCall names the tool call an item is, and its input.
func codexCall(it *codexItem) (tool, input string, ok bool) {
	switch it.Type {
	case "command_execution":
		return "shell", it.Command, true
	case "file_change":
		return "edit", codexChanges(it.Changes), true
	case "mcp_tool_call":
		return it.Server + "." + it.Tool, compact(it.Arguments), true
	case "web_search":
		return "web_search", it.Query, true
	}
	return "", "", false
}

// codexDone is the steps of a completed item: a call's result (and the
// call itself when it was not seen starting), the model's text, an error.
func (p *Parser) codexDone(t time.Time, it *codexItem) []Step {
	switch it.Type {
	case "agent_message":
		if strings.TrimSpace(it.Text) == "" {
			return nil
		}
		return []Step{textStep(t, KindText, it.Text, 0)}
	case "error":
		// An error item is a warning the session goes on after (codex
		// 0.169.0: "Model metadata for `scripted` not found..."); what
		// stops a session is an error event or turn.failed.
		return []Step{textStep(t, KindError, it.Message, 0)}
	}
	tool, input, ok := codexCall(it)
	if !ok {
		return nil // reasoning, todo_list
	}
	var out []Step
	if _, started := p.tools[it.ID]; !started {
		st := toolStep(t, tool, nil)
		st.Input, st.Bytes = cutText(input)
		out = append(out, st)
	}
	delete(p.tools, it.ID)
	failed := it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
	var text string
	switch it.Type {
	case "command_execution":
		text = it.AggregatedOutput
		if it.ExitCode != nil && *it.ExitCode != 0 && strings.TrimSpace(text) == "" {
			text = "exit status " + itoa(*it.ExitCode)
		}
	case "mcp_tool_call":
		text = compact(it.Result)
		if it.Error != nil && it.Error.Message != "" {
			text, failed = it.Error.Message, true
		}
	case "file_change":
		text = it.Status
	}
	if text == "" && it.Status == "declined" {
		text = "declined"
	}
	return append(out, resultStep(t, tool, text, failed))
}

// codexChanges lists a file_change's paths with their kinds.
func codexChanges(raw json.RawMessage) string {
	var changes []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	}
	if json.Unmarshal(raw, &changes) != nil {
		return compact(raw)
	}
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		parts = append(parts, c.Kind+" "+c.Path)
	}
	return strings.Join(parts, ", ")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
