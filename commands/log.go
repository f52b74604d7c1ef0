package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) logCmd() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "the audit log: every change of the blackboard, newest first, with its reason",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "patch", Aliases: []string{"p"}, Usage: "show what each operation changed, field by field"},
			&cli.StringFlag{Name: "task", Usage: "only changes of task `ID`"},
			&cli.StringFlag{Name: "agent", Local: true, Usage: "only changes made by agent `ID` (or human)"},
			&cli.IntFlag{Name: "n", Usage: "at most `N` entries"},
			atFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "log [-p] [--task ID] [--agent ID] [-n N]"); err != nil {
				return err
			}
			// --agent here filters the log; it does not say who acts.
			s, err := e.openAs(cmd, "")
			if err != nil {
				return err
			}
			out, err := s.ops.Log(ctx, ops.LogRequest{Rev: cmd.String("at"), Task: cmd.String("task"), Agent: cmd.String("agent"),
				Max: int(cmd.Int("n")), Patch: cmd.Bool("patch")})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(out)
			}
			for i, e := range out {
				fmt.Fprintln(s.Stdout, logLine(e))
				if cmd.Bool("patch") {
					writeChanges(s.Stdout, e.Changes, "    ")
					if i < len(out)-1 {
						fmt.Fprintln(s.Stdout)
					}
				}
			}
			return nil
		},
	}
}

// logLine is one entry of the log for people: commit, time, agent, subject
// and reason. A state commit's subject, author and reason come from
// whoever wrote it, an agent too: each is made printable.
func logLine(e ops.LogEntry) string {
	p := contracts.Printable
	line := fmt.Sprintf("%s %s %-16s %s", p(e.Commit[:min(12, len(e.Commit))]), p(e.Time), p(e.Agent), p(e.Subject))
	if e.Reason != "" {
		line += ": " + p(contracts.OneLine(e.Reason))
	}
	if e.Signed != "" {
		line += "  [signed: " + p(e.Signed) + "]"
	}
	return line
}

func (e *Env) diffCmd() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "what changed on the blackboard from REV to REV (default: the tip), field by field",
		ArgsUsage: "REV [REV]",
		Action: e.action(1, 2, "diff REV [REV]", func(ctx context.Context, s *session, a []string) error {
			to := ""
			if len(a) == 2 {
				to = a[1]
			}
			d, err := s.ops.Diff(ctx, a[0], to)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(d)
			}
			fmt.Fprintf(s.Stdout, "from %s to %s\n", contracts.Printable(short(d.From)), contracts.Printable(short(d.To)))
			if len(d.Entities) == 0 {
				fmt.Fprintln(s.Stdout, "no change")
			}
			writeChanges(s.Stdout, d.Entities, "")
			return nil
		}),
	}
}

// writeChanges writes what changed, entity by entity, field by field.
func writeChanges(w io.Writer, changes []ops.EntityDiff, indent string) {
	for _, c := range changes {
		head := c.Kind
		if c.ID != "" {
			head += " " + c.ID
		}
		fmt.Fprintf(w, "%s%s %s\n", indent, contracts.Printable(head), contracts.Printable(c.Change))
		if c.Change == "removed" {
			continue
		}
		for _, f := range c.Fields {
			fmt.Fprintf(w, "%s  %s\n", indent, ops.FieldLine(f))
		}
	}
}
