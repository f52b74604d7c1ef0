package mcpserver

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Program is the program that git liza mcp runs.
const Program = "git-liza-mcp"

// Main is the program git-liza-mcp: the server of one session over stdio
// (newline-delimited JSON-RPC on stdin and stdout, each message bounded
// by the SDK's line limit), until the client closes stdin. Diagnostics go
// to stderr, which the agent CLIs keep in their logs. It returns the exit
// code: 0 when the client hung up, 1 when the session cannot be served.
// clock is the one source of time (nil: the wall clock; only test
// harnesses pass another).
func Main(ctx context.Context, clock func() time.Time, args []string, getenv func(string) string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	fs := flag.NewFlagSet(Program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	human := fs.Bool("human", false, "act for the human operator (no agent id): the operator's levers")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "git-liza: mcp takes no arguments (usage: git liza mcp [--human])\n")
		return 1
	}
	// What an operation repairs or replaces on the way (a stale lock, a
	// task branch planted on the remote) is told on stderr, in the agent
	// CLI's log, as the commands tell it.
	notice := func(msg string) { fmt.Fprintf(stderr, "git-liza: %s\n", contracts.Printable(msg)) }
	srv, err := open(getenv, *human, clock, notice)
	if err != nil {
		fmt.Fprintf(stderr, "git-liza: %s\n", refuse(err).Reason)
		return 1
	}
	if err := srv.MCP().Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "git-liza: mcp: %v\n", err)
		return 1
	}
	return 0
}

// Open is the server of the session getenv describes, on the repository
// of the session's directory (LIZA_PROJECT_ROOT, else LIZA_WORKTREE, else
// the working directory), with clock as its one source of time (nil: the
// wall clock).
func Open(getenv func(string) string, human bool, clock func() time.Time) (*Server, error) {
	return open(getenv, human, clock, nil)
}

// open is Open, telling notice what operations repair or replace.
func open(getenv func(string) string, human bool, clock func() time.Time, notice func(string)) (*Server, error) {
	id, err := FromEnv(getenv, human)
	if err != nil {
		return nil, err
	}
	dir := id.Root
	if dir == "" {
		dir = id.Worktree
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if err := refstore.CheckGit(); err != nil {
		return nil, err
	}
	repo, err := refstore.Open(dir)
	if err != nil {
		return nil, err
	}
	o := ops.Options{Agent: id.Agent, Generation: id.Generation, Clock: clock, Notice: notice}
	if id.Human() {
		o.Author = ops.OperatorAuthor(repo, getenv)
	}
	svc, err := ops.New(repo, o)
	if err != nil {
		return nil, err
	}
	return New(svc, id, version())
}

// version is the module's version of the running program.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
