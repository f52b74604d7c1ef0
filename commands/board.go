package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/tui"
)

func (e *Env) boardCmd() *cli.Command {
	return &cli.Command{
		Name:  "board",
		Usage: "a live, full-screen view of the team: tasks by what needs attention, agents and leases, alarms, the latest operations",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "how often to read the board even when refs/liza/state has not moved (leases run down; in remote mode: fetch)"},
		},
		Action: e.action(0, 0, "board [--interval DURATION]", func(ctx context.Context, s *session, _ []string) error {
			longLived()
			return tui.Run(ctx, tui.Options{Service: s.ops, Interval: s.cmd.Duration("interval"), Input: e.Stdin, Output: e.Stdout})
		}),
	}
}
