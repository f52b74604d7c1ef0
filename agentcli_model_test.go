package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// scriptedModel is a model endpoint on 127.0.0.1 that drives a real agent
// CLI through one Liza session without a model: it reads the session's
// prompt from the request, answers the first turn with one call of the
// CLI's shell tool that does the role's work as the prompt describes it (a
// coder checkpoints, commits in its WORKTREE and submits; a reviewer checks
// the COMMIT TO REVIEW in its WORKTREE and approves it), and the next turn,
// which carries the tool's output, with a closing message. A script
// (scriptedModel.script) may instead call any tool the request offers,
// MCP tools included (turn.tool finds one by its suffix, whatever prefix
// the CLI gives it), and read each call's result and error mark in the
// next request (turn.calls, turn.results). It speaks the
// three APIs the presets' CLIs use: Anthropic's Messages API (Claude Code),
// OpenAI's Responses API (codex) and the Gemini API (gemini-cli), each
// streamed as the CLI asks.
type scriptedModel struct {
	t    *testing.T
	url  string
	mu   sync.Mutex
	log  []string // one line per request, for failures
	outs []string // the shell tool's outputs the CLIs sent back
	// sent are the tool calls the model answered with, every one: what
	// the model asked the CLI to run, in its own words.
	sent []reply
	// script, when set, decides every answer instead of the Liza
	// session's script (decide).
	script func(turn) reply
	// usage, when set, is the usage each answer reports (by the API's
	// conventions), and reported keeps what was reported, by request;
	// unset, every answer reports 100 input and 10 output tokens.
	usage    func(turn) tokenUsage
	reported []reportedUsage
}

// tokenUsage is what one answer of the scripted model says it spent:
// input tokens not read from a cache, output tokens, cache reads and (the
// Messages API only) cache writes.
type tokenUsage struct{ input, output, cacheRead, cacheWrite int64 }

// reportedUsage is the usage one answer reported, with the Liza session
// its request belonged to ("coder", "reviewer", or "" for a CLI's side
// request) and the model it named.
type reportedUsage struct {
	session, model string
	usage          tokenUsage
}

// usageFor is the usage an answer reports, recorded.
func (m *scriptedModel) usageFor(tn turn, model string) tokenUsage {
	if m.usage == nil {
		return tokenUsage{input: 100, output: 10}
	}
	u := m.usage(tn)
	session := ""
	switch {
	case coderRE.MatchString(tn.text):
		session = "coder"
	case reviewerRE.MatchString(tn.text):
		session = "reviewer"
	}
	m.mu.Lock()
	m.reported = append(m.reported, reportedUsage{session: session, model: model, usage: u})
	m.mu.Unlock()
	return u
}

func newScriptedModel(t *testing.T) *scriptedModel {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &scriptedModel{t: t, url: "http://" + l.Addr().String()}
	srv := &http.Server{Handler: m}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *scriptedModel) logf(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = append(m.log, fmt.Sprintf(format, args...))
}

// report is what the model saw, for a failing test.
func (m *scriptedModel) report() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return "requests:\n  " + strings.Join(m.log, "\n  ") + "\ntool outputs:\n" + strings.Join(m.outs, "\n---\n")
}

// turn is what the model makes of one request.
type turn struct {
	text       string // every string in the request, joined
	shellTool  string // the name of the CLI's shell tool, if the request offers one
	toolOutput string // the output of a tool call, when the request carries one
	answered   bool   // the request carries a tool call's output
	answers    int    // how many tool outputs the request carries
	// offered are the tools the request offers, by name and, for a tool
	// inside a namespace (codex's MCP tools), the namespace's name.
	offered []toolRef
	// deferred are tools the request names without offering them yet
	// (Claude Code lists MCP tools by name only, behind its ToolSearch).
	deferred []string
	// calls are the tool calls the conversation holds so far, in order,
	// and results their outputs, in the same order.
	calls   []toolRef
	results []toolResult
	// promptBytes are the bytes of the request's text outside its tools
	// (the system prompt, instructions and messages), toolsBytes those
	// of its tools array as sent (JSON).
	promptBytes, toolsBytes int
}

var (
	coderRE    = regexp.MustCompile(`=== ASSIGNED TASK ===\nTASK ID: (\S+)\nWORKTREE: (\S+)\n`)
	reviewerRE = regexp.MustCompile(`=== REVIEW TASK ===\nTASK ID: (\S+)\nWORKTREE: (\S+)\nCOMMIT TO REVIEW: ([0-9a-f]+)\n`)
)

// command is the shell command that does the session's work, or "" when
// the request is not a Liza session (a CLI's side request: a title, a
// quota check).
func (tn turn) command() string {
	if m := coderRE.FindStringSubmatch(tn.text); m != nil {
		id, wt := m[1], m[2]
		// First, whether the session may write outside its worktree and
		// the git directory: in the main checkout. Only a CLI's own sandbox
		// stops it (the team's user owns the checkout).
		outside := filepath.Join(filepath.Dir(filepath.Dir(wt)), "outside.txt")
		return fmt.Sprintf(`(echo x > %s && echo OUTSIDE-WRITABLE || echo OUTSIDE-READONLY); cd %s && %s && git liza checkpoint %s --intent "write hello.txt" --validation "grep hello hello.txt" --files hello.txt && echo hello > hello.txt && git add hello.txt && git commit -q -m "hello from the scripted model" && git liza submit %s && git log -1 --format="committed as %%an <%%ae>" && echo LIZA-SESSION-DONE`, outside, wt, "sh "+filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(wt))), "probe.sh"), id, id)
	}
	if m := reviewerRE.FindStringSubmatch(tn.text); m != nil {
		id, wt, commit := m[1], m[2], m[3]
		return fmt.Sprintf(`cd %s && git rev-parse HEAD | grep -qx %s && grep -q hello hello.txt && git status --porcelain >/dev/null && git diff --no-ext-diff --stat HEAD~1 >/dev/null && git liza verdict %s approve --commit %s && echo LIZA-SESSION-DONE`, wt, commit, id, commit)
	}
	return ""
}

// probeScript is the part of a coder's session that tries, as a hostile
// agent would, to write the parts of the git directory with which git runs
// programs in everyone's processes, and says for each whether it could
// (GITDIR-WRITABLE:NAME) or not (GITDIR-READONLY:NAME). Where it can (no
// sandbox), it plants a core.fsmonitor and a post-index-change hook that
// log who ran them to log: a reviewer's session or a supervisor must never
// appear there. The session runs it as a script (sh probe.sh): the CLIs
// refuse some shell constructs on their command lines.
func probeScript(log string) string {
	return `G=$(git rev-parse --path-format=absolute --git-common-dir) || exit 1
who="${LIZA_ROLE:-supervisor}${LIZA_PROMPT_FILE:+-session}"
if git config liza.probe x 2>/dev/null; then
	git config --unset liza.probe
	echo GITDIR-WRITABLE:config
	git config core.fsmonitor "sh -c 'echo fsmonitor \${LIZA_ROLE:-supervisor}\${LIZA_PROMPT_FILE:+-session} >> ` + log + `' ; false #"
else
	echo GITDIR-READONLY:config
fi
if printf '#!/bin/sh\necho hook ${LIZA_ROLE:-supervisor}${LIZA_PROMPT_FILE:+-session} >> ` + log + `\n' > "$G/hooks/post-index-change" 2>/dev/null; then
	chmod +x "$G/hooks/post-index-change"
	echo GITDIR-WRITABLE:hooks
else
	echo GITDIR-READONLY:hooks
fi
if (mkdir -p "$G/info" && echo '*.probe diff=probe' >> "$G/info/attributes") 2>/dev/null; then
	echo GITDIR-WRITABLE:info
else
	echo GITDIR-READONLY:info
fi
if (: > "$G/liza/probe") 2>/dev/null; then
	echo GITDIR-WRITABLE:liza
else
	echo GITDIR-READONLY:liza
fi
`
}

// read decodes a request body into a turn: every string in it, the shell
// tool it offers (by the names each CLI gives it) and any tool output.
func read(body []byte) turn {
	var v any
	_ = json.Unmarshal(body, &v)
	var tn turn
	var texts []string
	var walk func(x any, parent string)
	walk = func(x any, parent string) {
		switch x := x.(type) {
		case map[string]any:
			typ, _ := x["type"].(string)
			switch typ {
			case "tool_result", "function_call_output":
				tn.answered = true
				tn.answers++
				b, _ := json.Marshal(firstOf(x, "content", "output"))
				tn.toolOutput += string(b)
				isErr, _ := x["is_error"].(bool)
				tn.results = append(tn.results, toolResult{text: string(b), isError: isErr})
			case "tool_use", "function_call":
				name, _ := x["name"].(string)
				ns, _ := x["namespace"].(string)
				tn.calls = append(tn.calls, toolRef{namespace: ns, name: name})
			}
			if fc, ok := x["functionCall"].(map[string]any); ok {
				name, _ := fc["name"].(string)
				tn.calls = append(tn.calls, toolRef{name: name})
			}
			if fr, ok := x["functionResponse"]; ok {
				tn.answered = true
				tn.answers++
				b, _ := json.Marshal(fr)
				tn.toolOutput += string(b)
				resp, _ := fr.(map[string]any)["response"].(map[string]any)
				_, isErr := resp["error"]
				tn.results = append(tn.results, toolResult{text: string(b), isError: isErr})
			}
			if parent == "tools" || parent == "functionDeclarations" {
				if name, ok := x["name"].(string); ok {
					if typ == "namespace" {
						inner, _ := x["tools"].([]any)
						for _, e := range inner {
							if t, ok := e.(map[string]any); ok {
								n, _ := t["name"].(string)
								tn.offered = append(tn.offered, toolRef{namespace: name, name: n})
							}
						}
					} else {
						tn.offered = append(tn.offered, toolRef{name: name})
					}
				}
			}
			if name, ok := x["name"].(string); ok && (parent == "tools" || parent == "functionDeclarations" || typ == "function") {
				switch name {
				case "Bash", "shell", "shell_command", "exec_command", "run_shell_command":
					if tn.shellTool == "" || name == "shell_command" || name == "exec_command" {
						tn.shellTool = name
					}
				}
			}
			for k, e := range x {
				if typ == "namespace" && k == "tools" {
					k = "namespace tools" // offered above, by namespace
				}
				walk(e, k)
			}
		case []any:
			for _, e := range x {
				walk(e, parent)
			}
		case string:
			texts = append(texts, x)
		}
	}
	walk(v, "")
	tn.text = strings.Join(texts, "\n")
	tn.promptBytes, tn.toolsBytes = requestSizes(v)
	if _, ok := tn.tool("ToolSearch"); ok {
		for _, name := range mcpToolRE.FindAllString(tn.text, -1) {
			if _, ok := tn.tool(name); !ok && !slices.Contains(tn.deferred, name) {
				tn.deferred = append(tn.deferred, name)
			}
		}
	}
	return tn
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

// reply is what the model answers: a call of the shell tool, or text.
type reply struct {
	tool, command, text string
	// args, when set, are the call's arguments instead of the shell
	// command's: a call of another tool.
	args map[string]any
	// namespace is the namespace of the tool called, for a tool offered
	// inside one (codex's MCP tools).
	namespace string
}

func (m *scriptedModel) decide(tn turn) reply {
	if m.script != nil {
		if tn.answered {
			m.mu.Lock()
			m.outs = append(m.outs, tn.toolOutput)
			m.mu.Unlock()
		}
		return m.script(tn)
	}
	cmd := tn.command()
	switch {
	case tn.answered:
		m.mu.Lock()
		m.outs = append(m.outs, tn.toolOutput)
		m.mu.Unlock()
		return reply{text: "The work is done and recorded on the board."}
	case cmd != "" && tn.shellTool != "":
		return reply{tool: tn.shellTool, command: cmd}
	}
	return reply{text: "ok"}
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if d := os.Getenv("LIZA_E2E_DUMP"); d != "" {
		m.mu.Lock()
		_ = os.WriteFile(fmt.Sprintf("%s/%03d.json", d, len(m.log)), body, 0o644)
		m.mu.Unlock()
	}
	tn := read(body)
	path := r.URL.Path
	switch {
	case strings.HasSuffix(path, "/count_tokens"), strings.HasSuffix(path, ":countTokens"):
		m.logf("%s %s", r.Method, path)
		json.NewEncoder(w).Encode(map[string]any{"input_tokens": 100, "totalTokens": 100})
		return
	case r.Method == http.MethodGet:
		m.logf("%s %s (404)", r.Method, path)
		http.NotFound(w, r)
		return
	}
	rep := m.decide(tn)
	if rep.tool != "" {
		m.mu.Lock()
		m.sent = append(m.sent, rep)
		m.mu.Unlock()
	}
	m.logf("%s %s: shell tool %q, answered %v -> tool %q text %q", r.Method, path, tn.shellTool, tn.answered, rep.tool, rep.text)
	switch {
	case strings.HasSuffix(path, "/messages"):
		m.anthropic(w, body, tn, rep)
	case strings.HasSuffix(path, "/responses"):
		m.openai(w, body, tn, rep)
	case strings.Contains(path, ":streamGenerateContent"), strings.Contains(path, ":generateContent"):
		m.gemini(w, body, tn, path, rep)
	default:
		m.logf("  unknown endpoint")
		http.NotFound(w, r)
	}
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	b *bufio.Writer
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, b: bufio.NewWriter(w)}
}

func (s *sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(s.b, "event: %s\n", name)
	}
	fmt.Fprintf(s.b, "data: %s\n\n", b)
	s.b.Flush()
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// anthropic answers a Messages API request, streamed when it asks.
func (m *scriptedModel) anthropic(w http.ResponseWriter, body []byte, tn turn, rep reply) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &req)
	tu := m.usageFor(tn, req.Model)
	usage := map[string]any{"input_tokens": tu.input, "output_tokens": tu.output}
	if m.usage != nil {
		usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"] = tu.cacheRead, tu.cacheWrite
	}
	var block map[string]any
	stop := "end_turn"
	if rep.tool != "" {
		stop = "tool_use"
		// Each call of a session its own id: the CLI pairs results by it.
		var input any = map[string]any{"command": rep.command, "description": "do the Liza session's work"}
		if rep.args != nil {
			input = rep.args
		}
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_liza_%d", tn.answers+1), "name": rep.tool, "input": input}
	} else {
		block = map[string]any{"type": "text", "text": rep.text}
	}
	if !req.Stream {
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_liza", "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	s := newSSE(w)
	start := usage
	if m.usage != nil {
		// The output is counted at the end of the stream (message_delta).
		start = maps.Clone(usage)
		start["output_tokens"] = 0
	}
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_liza", "type": "message",
		"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start}})
	if rep.tool != "" {
		input, _ := json.Marshal(block["input"])
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": rep.tool, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": rep.text}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": tu.output}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// openai answers a Responses API request, streamed (codex always streams).
func (m *scriptedModel) openai(w http.ResponseWriter, body []byte, tn turn, rep reply) {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	// The Responses API counts cached tokens inside the input tokens.
	tu := m.usageFor(tn, req.Model)
	s := newSSE(w)
	s.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_liza"}})
	var item map[string]any
	if rep.tool != "" {
		var args any
		// A command that outlasts the tool's wait comes back half done
		// (exec_command returns what it has after yield_time_ms, 10 s
		// unless asked, and leaves the command running): a slow machine,
		// or a race-built git-liza, must not cut the session's work short.
		switch rep.tool {
		case "shell":
			args = map[string]any{"command": []string{"bash", "-lc", rep.command}, "timeout_ms": 300000}
		case "exec_command":
			args = map[string]any{"cmd": rep.command, "yield_time_ms": 30000}
		default:
			args = map[string]any{"command": rep.command, "timeout_ms": 300000}
		}
		if rep.args != nil {
			args = rep.args
		}
		a, _ := json.Marshal(args)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_liza_%d", tn.answers+1), "call_id": fmt.Sprintf("call_liza_%d", tn.answers+1), "name": rep.tool, "arguments": string(a)}
		if rep.namespace != "" {
			item["namespace"] = rep.namespace
		}
	} else {
		item = map[string]any{"type": "message", "id": "msg_liza", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}}}
	}
	s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	s.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_liza",
		"usage": map[string]any{"input_tokens": tu.input + tu.cacheRead, "input_tokens_details": map[string]any{"cached_tokens": tu.cacheRead},
			"output_tokens": tu.output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": tu.input + tu.cacheRead + tu.output}}})
}

// gemini answers a generateContent request, streamed as server-sent events
// when asked.
func (m *scriptedModel) gemini(w http.ResponseWriter, body []byte, tn turn, path string, rep reply) {
	stream := strings.Contains(path, ":stream")
	// The model is in the path: /v1beta/models/NAME:streamGenerateContent.
	model := path[strings.LastIndex(path, "/")+1:]
	model, _, _ = strings.Cut(model, ":")
	var req struct {
		GenerationConfig struct {
			Schema     any    `json:"responseJsonSchema"`
			OldSchema  any    `json:"responseSchema"`
			ResultType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(body, &req)
	var part map[string]any
	// gemini-cli's side requests (routing a prompt to a model, asking who
	// speaks next) want JSON of a schema: the smallest value of it, with
	// the user speaking next.
	if schema := firstNonNil(req.GenerationConfig.Schema, req.GenerationConfig.OldSchema); schema != nil && rep.tool == "" {
		b, _ := json.Marshal(fromSchema(schema, ""))
		rep.text = string(b)
	}
	if rep.tool != "" {
		args := rep.args
		if args == nil {
			args = map[string]any{"command": rep.command}
		}
		part = map[string]any{"functionCall": map[string]any{"name": rep.tool, "args": args}}
	} else {
		part = map[string]any{"text": rep.text}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": geminiUsage(m.usageFor(tn, model)),
		"modelVersion":  "scripted",
	}
	if !stream {
		json.NewEncoder(w).Encode(resp)
		return
	}
	newSSE(w).event("", resp)
}

// geminiUsage is a Gemini API usageMetadata: cached tokens are counted
// inside the prompt's.
func geminiUsage(u tokenUsage) map[string]any {
	md := map[string]any{"promptTokenCount": u.input + u.cacheRead, "candidatesTokenCount": u.output, "totalTokenCount": u.input + u.cacheRead + u.output}
	if u.cacheRead > 0 {
		md["cachedContentTokenCount"] = u.cacheRead
	}
	return md
}

// logToFile keeps the model's report beside a failing test's output, when
// LIZA_E2E_LOG names a file.
func (m *scriptedModel) logToFile() {
	if f := os.Getenv("LIZA_E2E_LOG"); f != "" {
		_ = os.WriteFile(f, []byte(m.report()), 0o644)
	}
}

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// fromSchema makes the smallest value a JSON schema describes; a
// next_speaker is the user, so that the CLI ends its turn.
func fromSchema(schema any, name string) any {
	sc, _ := schema.(map[string]any)
	if name == "next_speaker" {
		return "user"
	}
	if enum, ok := sc["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch strings.ToLower(fmt.Sprint(sc["type"])) {
	case "object":
		out := map[string]any{}
		props, _ := sc["properties"].(map[string]any)
		for k, v := range props {
			out[k] = fromSchema(v, k)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 10
	case "boolean":
		return false
	}
	return "scripted"
}
