package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v3"

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
		Author: ops.OperatorAuthor(repo, e.Getenv), Offline: cmd.Bool("offline"),
		Progress: e.progress(), Notice: e.notice,
	})
	if err != nil {
		return nil, err
	}
	e.svc = svc
	return &session{Env: e, cmd: cmd, ops: svc, repo: repo, json: cmd.Bool("json")}, nil
}

// progress is where operations say what a long step is doing: a line on
// stderr, when stdout is a terminal (a person is watching); nowhere when
// it is not, so that scripts read only results.
func (e *Env) progress() func(string) {
	if !e.terminal() {
		return nil
	}
	return func(msg string) { fmt.Fprintf(e.Stderr, "git-liza: %s...\n", contracts.Printable(msg)) }
}

// notice is where operations say what they repaired on the way (the
// leftovers of killed processes): a line on stderr, always, for people
// and scripts alike. It quotes what the leftover held (a worktree's lock
// reason, its path), which an agent can write: escapes are spelled out.
func (e *Env) notice(msg string) {
	fmt.Fprintf(e.Stderr, "git-liza: %s\n", contracts.Printable(msg))
}

// clock is the one source of time: Env.Clock, else the wall clock. The
// shipped binary reads no clock override from its environment (an agent
// could set one and date its operations as it liked).
func (e *Env) clock() (func() time.Time, error) {
	if e.Clock != nil {
		return e.Clock, nil
	}
	return time.Now, nil
}

// call is what every write takes from the command line: the request id.
func (s *session) call() ops.Call {
	return ops.Call{RequestID: s.cmd.String("request-id")}
}

// printJSON writes v as indented JSON.
func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
