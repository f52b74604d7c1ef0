package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// Refusal is a tool call that did not happen: the operation's exit-code
// class (as the git liza command of the same name exits) and its one-line
// reason. Its text, which the model reads, starts with both; the result's
// _meta carries them as exit_code and class for a program to read.
type Refusal struct {
	Code   contracts.Code
	Reason string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("exit %d (%s): %s", r.Code, Class(r.Code), r.Reason)
}

// Class names an exit code's class, with what to do about it.
func Class(c contracts.Code) string {
	switch c {
	case contracts.CodeInvalid:
		return "refused: fix the input, or stop"
	case contracts.CodeContention:
		return "contention: retry in a few seconds"
	case contracts.CodeGit:
		return "git failure: look with git status"
	case contracts.CodeInconsistent:
		return "inconsistent board: stop, and end the session with exit 4"
	case contracts.CodeMissingDep:
		return "missing dependency"
	}
	return "failed"
}

// className is the short name of a class, for _meta.
func className(c contracts.Code) string {
	switch c {
	case contracts.CodeInvalid:
		return "refused"
	case contracts.CodeContention:
		return "contention"
	case contracts.CodeGit:
		return "git"
	case contracts.CodeInconsistent:
		return "inconsistent"
	case contracts.CodeMissingDep:
		return "missing_dependency"
	}
	return "failed"
}

// refuse makes an operation's error a Refusal.
func refuse(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return &Refusal{Code: ops.Class(err), Reason: reason(err.Error())}
}

// maxReason bounds a refusal's reason: an operation's error may quote the
// input it refuses (an unknown revision, as given), and the model that
// sent megabytes should not read them back.
const maxReason = 1024

// reason is the first line of an error's text, cut to maxReason bytes on
// a character's boundary.
func reason(text string) string {
	line := contracts.FirstLine(text)
	if len(line) <= maxReason {
		return line
	}
	cut := maxReason
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes cut)", line[:cut], len(line)-cut)
}

// refusalMeta is the middleware that puts a refusal's class into the
// result's _meta, where a client program finds it without parsing text.
func refusalMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			var ref *Refusal
			if !errors.As(r.GetError(), &ref) {
				// The SDK refused the arguments against the tool's
				// schema (an unknown field, such as an agent id; a
				// missing one): a refusal of the input, said so.
				ref = &Refusal{Code: contracts.CodeInvalid, Reason: contentText(r)}
				r.Content = []mcp.Content{&mcp.TextContent{Text: ref.Error()}}
			}
			if r.Meta == nil {
				r.Meta = mcp.Meta{}
			}
			r.Meta["exit_code"] = int(ref.Code)
			r.Meta["class"] = className(ref.Code)
		}
		return res, err
	}
}

// contentText is the text of a result's content, on one line.
func contentText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return reason(strings.Join(parts, " "))
}
