package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// controlCmds are the kill switches: pause, resume and abort.
func (e *Env) controlCmds() []*cli.Command {
	reason := &cli.StringFlag{Name: "reason", Usage: "why, for the agents and the audit log"}
	return []*cli.Command{
		{
			Name:   "pause",
			Usage:  "pause the team: supervisors start no agent until resume",
			Flags:  []cli.Flag{reason},
			Action: e.action(0, 0, "pause [--reason TEXT]", setMode(contracts.ModePaused)),
		},
		{
			Name:   "resume",
			Usage:  "lift a pause, a checkpoint or an abort (and the seed's .liza files here)",
			Action: e.action(0, 0, "resume", setMode(contracts.ModeRunning)),
		},
		{
			Name:   "abort",
			Usage:  "stop the team: supervisors kill their agents and exit",
			Flags:  []cli.Flag{reason},
			Action: e.action(0, 0, "abort [--reason TEXT]", setMode(contracts.ModeAborted)),
		},
	}
}

// setMode records a kill-switch mode in the state, where every clone and
// every supervisor sees it.
func setMode(mode string) func(context.Context, *session, []string) error {
	return func(ctx context.Context, s *session, _ []string) error {
		out, err := s.ops.SetMode(ctx, ops.ModeRequest{Call: s.call(), Mode: mode, Reason: s.cmd.String("reason")})
		if err != nil {
			return err
		}
		if s.json {
			return s.printJSON(out)
		}
		switch {
		case !out.Changed && mode == contracts.ModeRunning && len(out.Removed) == 0:
			fmt.Fprintln(s.Stdout, "the team is running; nothing to resume")
		case !out.Changed && mode != contracts.ModeRunning:
			fmt.Fprintf(s.Stdout, "already %s since %s by %s\n", mode, out.Since, contracts.Printable(out.By))
		case mode == contracts.ModeRunning:
			fmt.Fprintf(s.Stdout, "resumed (was %s)\n", out.From)
		default:
			fmt.Fprintf(s.Stdout, "%s by %s at %s\n", mode, contracts.Printable(out.By), out.Since)
		}
		for _, p := range out.Removed {
			fmt.Fprintf(s.Stdout, "removed %s\n", p)
		}
		for _, p := range out.Files {
			fmt.Fprintf(s.Stdout, "%s is still present in %s and keeps this checkout %s\n", p, out.Root, contracts.SwitchFiles[p])
		}
		return nil
	}
}
