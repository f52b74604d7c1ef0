package commands

import (
	"context"

	"github.com/urfave/cli/v3"
)

func atFlag() cli.Flag {
	return &cli.StringFlag{Name: "at", Usage: "read the state at `REV` (a commit of refs/liza/state, e.g. refs/liza/state~3)"}
}

func (e *Env) showCmd() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the state as seed-format YAML (--json: JSON with the seed's field names), or one task",
		ArgsUsage: "[ID]",
		Flags:     []cli.Flag{atFlag(), &cli.BoolFlag{Name: "all", Usage: "include archived tasks"}},
		Action: e.action(0, 1, "show [--at REV] [--all] [ID]", func(ctx context.Context, s *session, a []string) error {
			if err := s.checkAt(ctx); err != nil {
				return err
			}
			if len(a) == 1 {
				t, err := s.ops.Task(ctx, s.cmd.String("at"), a[0])
				if err != nil {
					return err
				}
				return s.printDoc(t)
			}
			snap, err := s.ops.Snapshot(ctx, s.cmd.String("at"))
			if err != nil {
				return err
			}
			return writeState(s.Stdout, snap, s.ops.Trusted(ctx, snap, s.cmd.String("at") == ""), s.cmd.Bool("all"), s.json)
		}),
	}
}

func (e *Env) exportCmd() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "print the whole state, archive included, as a seed-format state.yaml",
		Flags: []cli.Flag{atFlag()},
		Action: e.action(0, 0, "export [--at REV]", func(ctx context.Context, s *session, _ []string) error {
			if err := s.checkAt(ctx); err != nil {
				return err
			}
			snap, err := s.ops.Snapshot(ctx, s.cmd.String("at"))
			if err != nil {
				return err
			}
			return writeState(s.Stdout, snap, s.ops.Trusted(ctx, snap, s.cmd.String("at") == ""), true, s.json)
		}),
	}
}

// checkAt refuses an --at revision that is not a commit of the state's
// history, before it is read as one.
func (s *session) checkAt(ctx context.Context) error {
	if at := s.cmd.String("at"); at != "" {
		_, err := s.ops.StateRev(ctx, at)
		return err
	}
	return nil
}

// printDoc prints v as YAML, or as JSON with the same field names.
func (s *session) printDoc(v any) error { return render(s.Stdout, v, s.json) }
