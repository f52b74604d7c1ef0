package commands

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// controlCmds are the kill switches (pause, resume and abort) and the
// budgets that pause the team when the goal goes over its own.
func (e *Env) controlCmds() []*cli.Command {
	reason := &cli.StringFlag{Name: "reason", Usage: "why, for the agents and the audit log"}
	return []*cli.Command{
		{
			Name:  "pause",
			Usage: "pause the team: supervisors start no agent until resume (--stop-sessions: and stop those running)",
			Flags: []cli.Flag{reason, &cli.BoolFlag{Name: "stop-sessions",
				Usage: "also ask the supervisors to stop running sessions (SIGINT, then SIGTERM), a coder's with a handoff"}},
			Action: e.action(0, 0, "pause [--reason TEXT] [--stop-sessions]", setMode(contracts.ModePaused)),
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
		e.budgetCmd(),
	}
}

// stopping says that the supervisors stop running sessions.
func stopping(out *ops.ModeResult) string {
	if !out.StopSessions {
		return ""
	}
	return "; supervisors stop running sessions (SIGINT, then SIGTERM after the grace), a coder's with a handoff"
}

// writeInSession lists the agents the board shows in a session after a
// pause: a plain pause lets them go on, which it says, with how to stop
// them.
func writeInSession(w io.Writer, out *ops.ModeResult) {
	if len(out.InSession) == 0 {
		fmt.Fprintln(w, "no agent is in a session")
		return
	}
	if !out.StopSessions {
		fmt.Fprintln(w, "still in a session (its supervisor runs, the board has it at work); sessions go on until they end:")
	}
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, a := range out.InSession {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", contracts.Printable(a.ID), contracts.Printable(a.Status), contracts.Printable(a.Task))
	}
	tw.Flush()
	if !out.StopSessions {
		fmt.Fprintln(w, "stop them now: git liza pause --stop-sessions (the work is kept, with a handoff), or git liza abort (kills them)")
	}
}

// setMode records a kill-switch mode in the state, where every clone and
// every supervisor sees it.
func setMode(mode string) func(context.Context, *session, []string) error {
	return func(ctx context.Context, s *session, _ []string) error {
		stop := mode == contracts.ModePaused && s.cmd.Bool("stop-sessions")
		out, err := s.ops.SetMode(ctx, ops.ModeRequest{Call: s.call(), Mode: mode, Reason: s.cmd.String("reason"), StopSessions: stop})
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
			fmt.Fprintf(s.Stdout, "already %s since %s by %s%s\n", mode, out.Since, contracts.Printable(out.By), stopping(out))
		case mode == contracts.ModeRunning:
			fmt.Fprintf(s.Stdout, "resumed (was %s)\n", out.From)
		default:
			fmt.Fprintf(s.Stdout, "%s by %s at %s%s\n", mode, contracts.Printable(out.By), out.Since, stopping(out))
		}
		if mode == contracts.ModePaused {
			writeInSession(s.Stdout, out)
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
