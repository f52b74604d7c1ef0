package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

func (e *Env) analyzeCmd() *cli.Command {
	return &cli.Command{
		Name:  "analyze",
		Usage: "circuit breaker: look for systemic failure patterns; on a match, record them and halt the team in CHECKPOINT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "resolve", Usage: "record what was done about the TRIGGERED circuit breaker (`TEXT`) and lift the checkpoint it set"},
		},
		Action: e.action(0, 0, "analyze [--resolve TEXT]", func(ctx context.Context, s *session, _ []string) error {
			if s.cmd.IsSet("resolve") {
				return s.resolveBreaker(ctx, s.cmd.String("resolve"))
			}
			out, err := s.ops.Analyze(ctx, s.call())
			if out != nil {
				if perr := s.printAnalysis(out); perr != nil {
					return perr
				}
			}
			return err
		}),
	}
}

func (s *session) printAnalysis(out *ops.Analysis) error {
	if s.json {
		if out.Patterns == nil {
			out.Patterns = []contracts.PatternMatch{}
		}
		return s.printJSON(out)
	}
	w := s.Stdout
	if len(out.Patterns) == 0 {
		fmt.Fprintln(w, "circuit clear: no pattern matched")
		if out.Status == contracts.BreakerTriggered {
			fmt.Fprintf(w, "the circuit breaker is still TRIGGERED since %s: record what was done with git liza analyze --resolve TEXT\n", out.TriggeredAt)
		}
		return nil
	}
	fmt.Fprint(w, contracts.PrintableText(contracts.BreakerReport(out.Patterns)))
	switch out.Outcome {
	case ops.OutcomeTriggered:
		if out.ReportPath != "" {
			fmt.Fprintf(w, "report written to %s\n", out.ReportPath)
		}
		if out.Mode == contracts.ModeCheckpoint {
			fmt.Fprintf(w, "circuit breaker TRIGGERED at %s: the team is in CHECKPOINT; once the causes are dealt with, run git liza analyze --resolve TEXT\n", out.TriggeredAt)
		} else {
			fmt.Fprintf(w, "circuit breaker TRIGGERED at %s: the team stays %s; once the causes are dealt with, run git liza analyze --resolve TEXT\n", out.TriggeredAt, out.Mode)
		}
	case ops.OutcomeAlready:
		fmt.Fprintf(w, "circuit breaker already TRIGGERED at %s with these patterns; check recorded\n", out.TriggeredAt)
	case ops.OutcomeResolved:
		fmt.Fprintf(w, "these patterns were resolved at %s (%s); check recorded\n", out.ResolvedAt, contracts.Printable(out.Resolution))
	}
	return nil
}

func (s *session) resolveBreaker(ctx context.Context, text string) error {
	out, err := s.ops.ResolveBreaker(ctx, ops.ResolveRequest{Call: s.call(), Resolution: text})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	fmt.Fprintf(s.Stdout, "circuit breaker RESOLVED at %s: %s\n", out.ResolvedAt, contracts.Printable(out.Resolution))
	if out.Lifted {
		fmt.Fprintln(s.Stdout, "CHECKPOINT set by the circuit breaker lifted")
	} else if out.Mode != contracts.ModeRunning {
		fmt.Fprintf(s.Stdout, "the team stays %s (not set by the circuit breaker): git liza resume lifts it\n", out.Mode)
	}
	return nil
}
