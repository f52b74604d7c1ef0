package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMCPCall runs `git-liza mcp [--human]` as an agent CLI would, a client
// on its stdin and stdout, in the script's directory and environment, and
// sends it the requests of FILE, one per line: `list` (the tools offered)
// or `call NAME JSON` (a tool call). It prints one line per request:
// `tools: a b c`, `NAME: ok JSON` (the structured result, its commit left
// out since hashes are not the point) or `NAME: error TEXT (exit_code N,
// class C)`. It fails when the server does not start.
func cmdMCPCall(ts *testscript.TestScript, neg bool, args []string) {
	human := len(args) == 2 && args[0] == "--human"
	if neg || len(args) != 1 && !human {
		ts.Fatalf("usage: mcpcall [--human] FILE")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := []string{"mcp"}
	if human {
		argv = append(argv, "--human")
	}
	path, err := exec.LookPath("git-liza")
	ts.Check(err)
	cmd := exec.Command(path, argv...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "LIZA_NOW", "TZ",
		"LIZA_AGENT_ID", "LIZA_AGENT_GENERATION", "LIZA_ROLE", "LIZA_TASK", "LIZA_WORKTREE", "LIZA_PROJECT_ROOT", "LIZA_PROMPT_FILE"} {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "script", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		ts.Fatalf("git-liza mcp did not start: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile(args[len(args)-1])), "\n") {
		verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch verb {
		case "list":
			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				ts.Check(err)
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			fmt.Fprintf(ts.Stdout(), "tools: %s\n", strings.Join(names, " "))
		case "call":
			name, raw, _ := strings.Cut(rest, " ")
			var in map[string]any
			if err := json.Unmarshal([]byte(raw), &in); err != nil {
				ts.Fatalf("call %s: bad JSON %s: %v", name, raw, err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: in})
			ts.Check(err)
			fmt.Fprintf(ts.Stdout(), "%s: %s\n", name, renderResult(res))
		case "", "#":
		default:
			ts.Fatalf("mcpcall: unknown request %q (list, call NAME JSON)", line)
		}
	}
	// Closed, the server has exited and its stderr is whole: what it
	// told there (what a tool repaired or replaced) is the script's.
	cs.Close()
	fmt.Fprint(ts.Stderr(), stderr.String())
}

// renderResult is one line for a tool's result.
func renderResult(res *mcp.CallToolResult) string {
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		return fmt.Sprintf("error %s (exit_code %v, class %v)", strings.Join(text, " "), res.Meta["exit_code"], res.Meta["class"])
	}
	out, _ := res.StructuredContent.(map[string]any)
	delete(out, "commit")
	b, _ := json.Marshal(out)
	return "ok " + string(b)
}
