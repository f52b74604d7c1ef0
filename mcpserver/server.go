// Package mcpserver is git liza mcp: a Model Context Protocol server over
// stdio, on the official Go SDK, that gives an agent's session the board's
// operations as typed tools. It acts as the agent whose supervisor started
// the session (Identity, from the environment), offers only that role's
// tools, and calls package ops directly: a tool call is the same operation,
// checked the same way and recorded in the same state commit, as the
// git liza command of the same name. A refusal comes back as a tool error
// that carries its exit-code class and the one-line reason.
//
// The program git-liza-mcp runs it (Main), so that the SDK is linked into
// that program only and no short command pays for it at start-up.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// Name is the server's name, as the presets register it: Claude Code calls
// its tools mcp__liza__NAME.
const Name = contracts.MCPServer

// Server is the MCP server of one session.
type Server struct {
	id  Identity
	svc *ops.Service
	// mu serialises the tool calls: an ops.Service is not safe for
	// concurrent use, and a client may send calls concurrently.
	mu  sync.Mutex
	mcp *mcp.Server
}

// New is the server for the session id, acting through svc (whose agent
// and generation must be id's). It offers the tools of id's role, or the
// operator's with a human identity.
func New(svc *ops.Service, id Identity, version string) (*Server, error) {
	if svc.Agent != id.Agent || id.Agent != "" && svc.Generation != id.Generation {
		return nil, fmt.Errorf("mcpserver: the service acts as %q generation %d, the session is %q generation %d", svc.Agent, svc.Generation, id.Agent, id.Generation)
	}
	s := &Server{id: id, svc: svc}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: Name, Title: "git-liza", Version: version}, &mcp.ServerOptions{
		Instructions: s.instructions(),
	})
	s.mcp.AddReceivingMiddleware(refusalMeta)
	for _, add := range s.toolSets() {
		add(s)
	}
	s.addResources()
	return s, nil
}

// MCP is the SDK's server, to run on a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// toolSets are the groups of tools the session's identity is given.
func (s *Server) toolSets() []func(*Server) {
	sets := []func(*Server){everyoneTools}
	switch {
	case s.id.Human():
		sets = append(sets, humanTools)
	case s.id.Role == contracts.RoleCoder:
		sets = append(sets, coderTools)
	case s.id.Role == contracts.RoleReviewer:
		sets = append(sets, reviewerTools)
	case s.id.Role == contracts.RolePlanner:
		sets = append(sets, plannerTools)
	}
	return sets
}

// instructions is what the server tells the client about itself.
func (s *Server) instructions() string {
	if s.id.Human() {
		return "git-liza's board for the human operator: read the team's state and use the operator's levers (notes, pause, resume, abort, unblock, tasks). Every call is a recorded operation."
	}
	who := fmt.Sprintf("You are %s (%s)", s.id.Agent, s.id.Role.IDPrefix())
	if s.id.Task != "" {
		who += ", working on task " + s.id.Task
	}
	return who + fmt.Sprintf(". These tools are the git liza commands of the same names, bound to you: each call is checked against the Liza contract and recorded on the blackboard. A result past %d characters comes cut, with a note of what was cut.", resultMax) + " A refusal says its exit code: 1 fix the input or stop, 2 retry in a few seconds, 3 a git failure, 4 the board is inconsistent (stop, exit 4)."
}

// addTool adds a tool whose calls run one at a time and whose errors are
// refusals (see Refusal).
func addTool[In, Out any](s *Server, name, description string, run func(ctx context.Context, in In) (Out, error)) {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: name, Description: description}, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var zero Out
		out, err := run(ctx, in)
		if err != nil {
			// A "no blackboard here" becomes the command that joins a
			// remote's board, as on the command line.
			return nil, zero, refuse(s.svc.JoinHint(ctx, err))
		}
		res, out, err := fitted(out, wholeOf(name))
		if err != nil {
			return nil, zero, refuse(err)
		}
		return res, out, nil
	})
}

// fitted is out within resultMax (see fit): as it is, with no result of
// its own, when it fits; else cut, with a result whose text is the cut
// JSON and a note of what was cut.
func fitted[Out any](out Out, whole string) (*mcp.CallToolResult, Out, error) {
	var zero Out
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, zero, err
	}
	cut, note, err := fit(raw, whole)
	if err != nil || note == "" {
		return nil, out, err
	}
	var o Out
	if _, open := any(&o).(*any); open {
		// An open document (show_task): kept in its own order.
		cut = withCut(cut, note)
		o = any(json.RawMessage(cut)).(Out)
	} else if err := json.Unmarshal(cut, &o); err != nil {
		return nil, zero, err
	} else if n, ok := any(o).(cutNoter); ok {
		n.noteCut(note)
		if cut, err = json.Marshal(o); err != nil {
			return nil, zero, err
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(cut)}, &mcp.TextContent{Text: note}}}, o, nil
}

// taskOf is the task a tool of a coder or reviewer acts on: the session's
// own. A tool's task argument may repeat it but not change it; an agent
// run without a supervisor (no LIZA_TASK) names the task in each call.
func (s *Server) taskOf(given string) (string, error) {
	switch {
	case s.id.Task == "" && given == "":
		return "", contracts.Invalidf("name the task: this session has none of its own (LIZA_TASK)")
	case s.id.Task == "":
		return given, contracts.ValidTaskID(given)
	case given != "" && given != s.id.Task:
		return "", contracts.Invalidf("this session of %s works on task %s, not %s: its tools act on its own task only", s.id.Agent, s.id.Task, given)
	}
	return s.id.Task, nil
}

// call is what every write takes: a request id, when the tool was given one.
func call(requestID string) ops.Call { return ops.Call{RequestID: requestID} }

// TaskOut is what a write on one task reports.
type TaskOut struct {
	Task   string `json:"task" jsonschema:"the task"`
	Status string `json:"status" jsonschema:"its status after the operation"`
	Verb   string `json:"verb" jsonschema:"what was done"`
	Commit string `json:"commit" jsonschema:"the state commit on refs/liza/state that records it"`
	// Replayed: the request id had been applied already.
	Replayed bool `json:"replayed,omitempty" jsonschema:"the request id had been applied already: nothing new was written"`
}

func taskOut(r *ops.TaskResult) *TaskOut {
	return &TaskOut{Task: r.ID, Status: string(r.Status), Verb: r.Verb, Commit: r.Commit.String(), Replayed: r.Replayed}
}
