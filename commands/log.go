package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) logCmd() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "the audit log: every change of the blackboard, newest first",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "only changes of task `ID`"},
			&cli.StringFlag{Name: "agent", Local: true, Usage: "only changes made by agent `ID` (or human)"},
			&cli.IntFlag{Name: "n", Usage: "at most `N` entries"},
			atFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "log [--task ID] [--agent ID] [-n N]"); err != nil {
				return err
			}
			// --agent here filters the log; it does not say who acts.
			s, err := e.openAs(cmd, "")
			if err != nil {
				return err
			}
			out, err := s.ops.Log(ctx, ops.LogRequest{Rev: cmd.String("at"), Task: cmd.String("task"), Agent: cmd.String("agent"), Max: int(cmd.Int("n"))})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(out)
			}
			for _, e := range out {
				signed := ""
				if e.Signed != "" {
					signed = "  [signed: " + e.Signed + "]"
				}
				fmt.Fprintf(s.Stdout, "%s %s %-16s %s%s\n", e.Commit[:12], e.Time, e.Agent, e.Subject, signed)
			}
			return nil
		},
	}
}
