package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) validateCmd() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check the state against the contract (exit 1 and every problem when invalid)",
		Flags: []cli.Flag{
			atFlag(),
			&cli.StringFlag{Name: "file", Usage: "validate a seed-format state.yaml at `PATH` instead"},
			&cli.BoolFlag{Name: "history", Usage: "check every commit of refs/liza/state and every transition between consecutive states"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "validate [--at REV | --file PATH] [--history]"); err != nil {
				return err
			}
			if cmd.IsSet("file") && (cmd.IsSet("at") || cmd.Bool("history")) {
				return contracts.Invalidf("--file cannot be combined with --at or --history")
			}
			if path := cmd.String("file"); path != "" {
				data, err := e.readInput(path)
				if err != nil {
					return err
				}
				v, err := ops.ValidateFile(data, path)
				if err != nil {
					return err
				}
				return e.verdict(cmd, v)
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			v, err := s.ops.Validate(ctx, ops.ValidateRequest{Rev: cmd.String("at"), History: cmd.Bool("history")})
			if err != nil {
				return err
			}
			return e.verdict(cmd, v)
		},
	}
}

// verdict prints VALID, or INVALID and every problem, with the warnings
// first, and fails with exit 1 when there are problems. A history check
// that stopped at a shallow clone's boundary says where.
func (e *Env) verdict(cmd *cli.Command, v *ops.Validation) error {
	problems := v.Problems
	texts := func(ps []contracts.Problem) []string {
		list := make([]string, len(ps))
		for i, p := range ps {
			list[i] = p.String()
		}
		return list
	}
	switch {
	case cmd.Bool("json"):
		out := map[string]any{"valid": len(problems) == 0, "states": v.States, "problems": texts(problems), "warnings": texts(v.Warnings)}
		if v.Shallow != "" {
			out["shallow"] = v.Shallow
		}
		s := &session{Env: e}
		if err := s.printJSON(out); err != nil {
			return err
		}
	default:
		if v.Shallow != "" {
			fmt.Fprintf(e.Stdout, "shallow clone: history checked from %s, whose parents this clone lacks\n", v.Shallow)
		}
		for _, w := range v.Warnings {
			fmt.Fprintf(e.Stdout, "WARNING: %s\n", w)
		}
		for _, p := range problems {
			fmt.Fprintf(e.Stdout, "INVALID: %s\n", p)
		}
		if len(problems) == 0 && v.States > 1 {
			fmt.Fprintf(e.Stdout, "VALID (%d states)\n", v.States)
		} else if len(problems) == 0 {
			fmt.Fprintln(e.Stdout, "VALID")
		}
	}
	if len(problems) > 0 {
		return contracts.Invalidf("%d problem(s): %s", len(problems), problems[0])
	}
	return nil
}
