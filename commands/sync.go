package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
)

func (e *Env) syncCmd() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "bring the blackboard up to date with REMOTE (default: liza.remote) and publish what is only here",
		ArgsUsage: "[REMOTE]",
		Action: e.action(0, 1, "sync [REMOTE]", func(ctx context.Context, s *session, a []string) error {
			remote := ""
			if len(a) == 1 {
				remote = a[0]
			}
			rep, err := s.ops.Sync(ctx, remote)
			if rep == nil {
				return err
			}
			if s.json {
				if perr := s.printJSON(rep); perr != nil {
					return perr
				}
				return err
			}
			fmt.Fprintf(s.Stdout, "%s: %s (%s)\n", rep.Remote, rep.Action, short(rep.State))
			for _, r := range rep.Replayed {
				fmt.Fprintf(s.Stdout, "  replayed: %s\n", r)
			}
			for _, r := range rep.Refused {
				fmt.Fprintf(s.Stdout, "  refused:  %s\n", r)
			}
			if rep.Backup != "" {
				fmt.Fprintf(s.Stdout, "  the local operations as they were: %s\n", rep.Backup)
			}
			return err
		}),
	}
}
