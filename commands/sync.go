package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) syncCmd() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "bring the blackboard up to date with REMOTE (default: liza.remote, else the only remote) and publish what is only here; sets liza.remote when it is unset",
		ArgsUsage: "[REMOTE]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "discard-local", Usage: "when the blackboard here and the remote's have no history in common, set this one aside (under refs/liza/offline/) and take the remote's"},
			&cli.BoolFlag{Name: "follow-rewind", Usage: "the remote's blackboard was rewound: follow it, applying again only the operations not published yet"},
		},
		Action: e.action(0, 1, "sync [--discard-local | --follow-rewind] [REMOTE]", func(ctx context.Context, s *session, a []string) error {
			var remote string
			if len(a) == 1 {
				remote = a[0]
			} else {
				var err error
				if remote, err = s.ops.SyncRemote(ctx); err != nil {
					return err
				}
			}
			rep, err := s.ops.SyncWith(ctx, remote, ops.SyncOptions{DiscardLocal: s.cmd.Bool("discard-local"), FollowRewind: s.cmd.Bool("follow-rewind"), SetRemote: true})
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
			if rep.RemoteSet {
				fmt.Fprintf(s.Stdout, "liza.remote set to %s: commands here now read and write %s's blackboard (git config --unset liza.remote to work on a copy here)\n", rep.Remote, rep.Remote)
			}
			return err
		}),
	}
}
