package commands

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
)

// superviseCmd holds the blackboard steps of a supervisor's own life:
// registration, stopping and completing the goal. git liza agent calls the
// same operations directly; these commands are for scripts and people.
func (e *Env) superviseCmd() *cli.Command {
	return &cli.Command{
		Name:   "supervise",
		Usage:  "a supervisor's own steps (used by git liza agent)",
		Hidden: true,
		Commands: []*cli.Command{
			{
				Name:  "register",
				Usage: "register the agent id for a supervisor and print its generation",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "replace", Usage: "take the id from a supervisor that still holds it"}},
				Action: e.action(0, 0, "supervise register [--replace]", func(ctx context.Context, s *session, _ []string) error {
					out, err := s.ops.Register(ctx, ops.RegisterRequest{Call: s.call(), Replace: s.cmd.Bool("replace")})
					if err != nil {
						return err
					}
					if s.json {
						return s.printJSON(out)
					}
					fmt.Fprintf(s.Stdout, "%s registered, generation %d\n", out.Agent, out.Generation)
					return nil
				}),
			},
			{
				Name:  "exit",
				Usage: "end a supervisor's registration, releasing what it holds",
				Action: e.action(0, 0, "supervise exit", func(ctx context.Context, s *session, _ []string) error {
					out, err := s.ops.Unregister(ctx, ops.UnregisterRequest{Call: s.call()})
					if err != nil {
						return err
					}
					if s.json {
						b, err := json.Marshal(out)
						if err != nil {
							return err
						}
						_, err = s.Stdout.Write(append(b, '\n'))
						return err
					}
					fmt.Fprintf(s.Stdout, "%s unregistered\n", out.Agent)
					return nil
				}),
			},
			{
				Name:  "complete",
				Usage: "mark the goal and the sprint COMPLETED once every task is terminal",
				Action: e.action(0, 0, "supervise complete", func(ctx context.Context, s *session, _ []string) error {
					if _, err := s.ops.Complete(ctx, s.call()); err != nil {
						return err
					}
					fmt.Fprintln(s.Stdout, "goal completed")
					return nil
				}),
			},
		},
	}
}
