package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// session is what a command that works on the blackboard needs: the
// operations for the caller's agent, and how to print.
type session struct {
	*Env
	cmd  *cli.Command
	ops  *ops.Service
	repo *refstore.Repo
	json bool
}

// action is the Action of a command that takes min to max positional
// arguments (max -1: any number) and works on the blackboard for the
// caller's agent.
func (e *Env) action(min, max int, usage string, run func(ctx context.Context, s *session, a []string) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		a, err := args(cmd, min, max, usage)
		if err != nil {
			return err
		}
		s, err := e.open(cmd)
		if err != nil {
			return err
		}
		return run(ctx, s, a)
	}
}

// open finds the repository and checks git and the agent id.
func (e *Env) open(cmd *cli.Command) (*session, error) {
	return e.openAs(cmd, cmd.String("agent"))
}

// openAs is open for a given agent id.
func (e *Env) openAs(cmd *cli.Command, agent string) (*session, error) {
	repo, err := refstore.Open(e.Dir)
	if gerr := refstore.CheckGit(); gerr != nil {
		return nil, gerr
	}
	if err != nil {
		return nil, err
	}
	if _, err := contracts.ParseAgentID(agent); err != nil {
		return nil, err
	}
	clock, err := e.clock()
	if err != nil {
		return nil, err
	}
	gen := 0
	if agent != "" {
		gen = int(cmd.Int("generation"))
	}
	svc, err := ops.New(repo, ops.Options{
		Agent: agent, Generation: gen, Clock: clock, Budget: cmd.Duration("retry-budget"),
		Author: identity(repo, e.Getenv), Offline: cmd.Bool("offline"), Replay: e.replay,
		Progress: e.progress(),
	})
	if err != nil {
		return nil, err
	}
	return &session{Env: e, cmd: cmd, ops: svc, repo: repo, json: cmd.Bool("json")}, nil
}

// progress is where operations say what a long step is doing: a line on
// stderr, when stdout is a terminal (a person is watching); nowhere when
// it is not, so that scripts read only results.
func (e *Env) progress() func(string) {
	if !e.terminal() {
		return nil
	}
	return func(msg string) { fmt.Fprintf(e.Stderr, "git-liza: %s...\n", msg) }
}

// clock is the one source of time (see cas.ClockFromEnv).
func (e *Env) clock() (func() time.Time, error) { return cas.ClockFromEnv(e.Getenv) }

// identity is the author of commits made for the human operator: git's
// author identity when there is one, else a fixed one.
func identity(repo *refstore.Repo, getenv func(string) string) refstore.Signature {
	name, email := getenv("GIT_AUTHOR_NAME"), getenv("GIT_AUTHOR_EMAIL")
	if name == "" {
		name, _ = repo.Config("user.name")
	}
	if email == "" {
		email, _ = repo.Config("user.email")
	}
	if name == "" {
		return refstore.Signature{}
	}
	if email == "" {
		email = "unknown"
	}
	return refstore.Signature{Name: name, Email: email}
}

// replay runs a command line an operation recorded again, for sync: as
// agent, in this process, on the state as it is now. Its error is the
// command's one-line message.
func (e *Env) replay(ctx context.Context, agent string, argv []string) error {
	full := []string{"git-liza"}
	if agent != "" {
		full = append(full, "--agent", agent)
	}
	full = append(full, argv...)
	var stderr strings.Builder
	child := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Dir: e.Dir, Getenv: e.Getenv}
	if code := child.Run(ctx, full); code != 0 {
		return errors.New(strings.TrimPrefix(firstLine(stderr.String()), "git-liza: "))
	}
	return nil
}

// call is what every write takes from the command line: the request id and
// the command line to record.
func (s *session) call() ops.Call {
	return ops.Call{RequestID: s.cmd.String("request-id"), Command: s.command()}
}

// command is the command line to record with an operation, so that sync
// can run it again on the remote's state: without the program name and
// without --offline.
func (s *session) command() []string {
	if len(s.argv) < 2 {
		return nil
	}
	out := make([]string, 0, len(s.argv)-1)
	for _, a := range s.argv[1:] {
		if a != "--offline" && a != "--offline=true" {
			out = append(out, a)
		}
	}
	return out
}

// printJSON writes v as indented JSON.
func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
