package main

import (
	"encoding/json"
	"regexp"
	"strings"
)

// What the scripted model reads of the tools a request offers, the calls
// it holds and their results, for a script that calls MCP tools; and the
// sizes of a request.

// toolRef names a tool: its name, and the namespace it is offered in
// (codex's Responses API tools), if any.
type toolRef struct{ namespace, name string }

// full is the name the model knows the tool by: the namespace's name
// joined to the tool's, as codex names MCP tools (mcp__liza__checkpoint).
func (r toolRef) full() string {
	if r.namespace == "" {
		return r.name
	}
	return strings.TrimSuffix(r.namespace, "__") + "__" + r.name
}

// toolResult is a tool's output as the CLI gave it back to the model: the
// text, and whether the CLI marked it as an error.
type toolResult struct {
	text    string
	isError bool
}

// mcpToolRE is a tool of the MCP server "liza", as Claude Code and codex
// name it.
var mcpToolRE = regexp.MustCompile(`\bmcp__liza__[a-z_]+\b`)

// tool is the offered tool whose name is name or ends in "_"+name within
// the liza server's tools (mcp__liza__NAME in Claude Code and codex,
// whatever the CLI prefixes), if the request offers it.
func (tn turn) tool(name string) (toolRef, bool) {
	for _, r := range tn.offered {
		full := r.full()
		if full == name || strings.HasSuffix(full, "_"+name) && strings.Contains(full, "liza") {
			return r, true
		}
	}
	return toolRef{}, false
}

// requestSizes measures a decoded request: the bytes of every string
// outside its "tools", and the bytes of its "tools" as JSON.
func requestSizes(v any) (prompt, tools int) {
	top, _ := v.(map[string]any)
	if t, ok := top["tools"]; ok {
		b, _ := json.Marshal(t)
		tools = len(b)
	}
	var count func(x any)
	count = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for _, e := range x {
				count(e)
			}
		case []any:
			for _, e := range x {
				count(e)
			}
		case string:
			prompt += len(x)
		}
	}
	for k, e := range top {
		if k != "tools" {
			count(e)
		}
	}
	return prompt, tools
}
