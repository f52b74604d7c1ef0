package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// breakerBy is the control section's "by" when the circuit breaker set the
// mode.
const breakerBy = "circuit-breaker"

func (e *Env) analyzeCmd() *cli.Command {
	const usage = "analyze [--resolve TEXT]"
	return &cli.Command{
		Name:  "analyze",
		Usage: "circuit breaker: look for systemic failure patterns; on a match, record them and halt the team in CHECKPOINT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "resolve", Usage: "record what was done about the TRIGGERED circuit breaker (`TEXT`) and lift the checkpoint it set"},
		},
		Action: e.action(0, 0, usage, func(ctx context.Context, s *session, _ []string) error {
			if err := contracts.Permit(s.agent, contracts.OpSprint); err != nil {
				return err
			}
			if s.cmd.IsSet("resolve") {
				return s.resolveBreaker(ctx, s.cmd.String("resolve"))
			}
			return s.analyze(ctx)
		}),
	}
}

// analysis is what analyze reports.
type analysis struct {
	Triggered bool                     `json:"triggered"`
	Patterns  []contracts.PatternMatch `json:"patterns"`
	// Status is the circuit breaker's status after the run ("" when it
	// was never tripped).
	Status      string `json:"status,omitempty"`
	TriggeredAt string `json:"triggered_at,omitempty"`
	Resolution  string `json:"resolution,omitempty"`
	ResolvedAt  string `json:"resolved_at,omitempty"`
	// Mode is the control mode after the run.
	Mode    string `json:"mode"`
	Changed bool   `json:"changed"`
	Commit  string `json:"commit,omitempty"`
	// Outcome is one of the outcome constants: what the run found and did.
	Outcome string `json:"outcome"`
}

// The outcomes of an analysis.
const (
	outcomeClear     = "clear"
	outcomeTriggered = "triggered"
	outcomeAlready   = "already_triggered"
	outcomeResolved  = "already_resolved"
	outcomeInvalid   = "invalid_state"
)

func (s *session) analyze(ctx context.Context) error {
	// An invalid state is analysed too, but cannot be written to: cas
	// builds only on a valid tip. Read it the way validate does.
	snap, err := s.snapshot(ctx, "")
	if err != nil {
		return err
	}
	st, err := snap.Load()
	if err != nil {
		return err
	}
	if problems := contracts.Validate(st); len(problems) > 0 {
		list := make([]string, len(problems))
		for i, p := range problems {
			list[i] = p.String()
		}
		out := analysis{Triggered: true, Patterns: contracts.Analyze(st, list), Mode: modeOf(st.Control), Outcome: outcomeInvalid}
		if err := s.printAnalysis(out); err != nil {
			return err
		}
		return contracts.Errorf(contracts.CodeInconsistent,
			"the state at %s is invalid and cannot record the circuit breaker: repair it with git liza import (git liza export > state.yaml, fix, git liza import state.yaml)", short(snap.Commit.String()))
	}

	res, err := s.update(ctx, cas.Op{Name: contracts.OpSprint, Apply: func(tx *cas.Tx) (any, error) {
		st, err := tx.Snap.Load()
		if err != nil {
			return nil, err
		}
		matches := contracts.Analyze(st, nil)
		out := analysis{Triggered: len(matches) > 0, Patterns: matches, Mode: modeOf(st.Control)}
		cb := st.CircuitBreaker
		if cb != nil {
			out.Status, out.TriggeredAt, out.Resolution, out.ResolvedAt = cb.Status, cb.TriggeredAt, cb.Resolution, cb.ResolvedAt
		}
		switch {
		case len(matches) == 0:
			out.Outcome = outcomeClear
			return out, nil
		case cb != nil && cb.Status == contracts.BreakerTriggered && contracts.SamePatterns(cb.Patterns, matches):
			out.Outcome = outcomeAlready
			return out, nil
		case cb != nil && cb.Status == contracts.BreakerResolved && contracts.SamePatterns(cb.Patterns, matches):
			out.Outcome = outcomeResolved
			return out, nil
		}
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		report := contracts.BreakerReport(matches)
		now := tx.NowString()
		m.CircuitBreaker = &contracts.CircuitBreaker{
			Status: contracts.BreakerTriggered, TriggeredAt: now,
			Patterns: contracts.StorePatterns(matches), Report: report,
		}
		// The checkpoint halts a running team; a checkpoint the circuit
		// breaker set takes the new reason; any other mode in force stays
		// as it is.
		reason := "circuit breaker: " + strings.Join(contracts.PatternNames(matches), ", ")
		switch c := m.Control; {
		case modeOf(c) == contracts.ModeRunning:
			m.Control = &contracts.Control{Mode: contracts.ModeCheckpoint, Since: now, By: breakerBy, Reason: reason}
		case c.Mode == contracts.ModeCheckpoint && c.By == breakerBy:
			c.Reason = reason
		}
		tx.PutMeta(m)
		tx.Describe(fmt.Sprintf("circuit breaker triggered (%s)", contracts.Plural(len(matches), "pattern")), "")
		tx.Body(report)
		out.Status, out.TriggeredAt, out.Resolution, out.ResolvedAt = contracts.BreakerTriggered, now, "", ""
		out.Mode = modeOf(m.Control)
		out.Changed = true
		out.Outcome = outcomeTriggered
		return out, nil
	}})
	if err != nil {
		return err
	}
	out, err := decodeResult[analysis](res)
	if err != nil {
		return err
	}
	if out.Patterns == nil {
		out.Patterns = []contracts.PatternMatch{}
	}
	out.Commit = res.Commit.String()
	return s.printAnalysis(out)
}

func (s *session) printAnalysis(out analysis) error {
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
	fmt.Fprint(w, contracts.BreakerReport(out.Patterns))
	switch out.Outcome {
	case outcomeTriggered:
		if out.Mode == contracts.ModeCheckpoint {
			fmt.Fprintf(w, "circuit breaker TRIGGERED at %s: the team is in CHECKPOINT; once the causes are dealt with, run git liza analyze --resolve TEXT\n", out.TriggeredAt)
		} else {
			fmt.Fprintf(w, "circuit breaker TRIGGERED at %s: the team stays %s; once the causes are dealt with, run git liza analyze --resolve TEXT\n", out.TriggeredAt, out.Mode)
		}
	case outcomeAlready:
		fmt.Fprintf(w, "circuit breaker already TRIGGERED at %s with these patterns; nothing written\n", out.TriggeredAt)
	case outcomeResolved:
		fmt.Fprintf(w, "these patterns were resolved at %s (%s); nothing written\n", out.ResolvedAt, out.Resolution)
	}
	return nil
}

// resolution is what analyze --resolve reports.
type resolution struct {
	Status     string `json:"status"`
	Resolution string `json:"resolution"`
	ResolvedAt string `json:"resolved_at"`
	Lifted     bool   `json:"checkpoint_lifted"`
	Mode       string `json:"mode"`
	Commit     string `json:"commit,omitempty"`
}

func (s *session) resolveBreaker(ctx context.Context, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return contracts.Invalidf("--resolve needs a text saying what was done")
	}
	res, err := s.update(ctx, cas.Op{Name: contracts.OpSprint, Apply: func(tx *cas.Tx) (any, error) {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		cb := m.CircuitBreaker
		if cb == nil || cb.Status != contracts.BreakerTriggered {
			return nil, contracts.Invalidf("the circuit breaker is not TRIGGERED: nothing to resolve")
		}
		now := tx.NowString()
		cb.Status, cb.Resolution, cb.ResolvedAt = contracts.BreakerResolved, text, now
		out := resolution{Status: cb.Status, Resolution: text, ResolvedAt: now}
		if c := m.Control; c != nil && c.Mode == contracts.ModeCheckpoint && c.By == breakerBy {
			m.Control = nil
			out.Lifted = true
		}
		out.Mode = modeOf(m.Control)
		tx.PutMeta(m)
		tx.Describe("circuit breaker resolved"+by(tx.Actor), "")
		tx.Body(text)
		return out, nil
	}})
	if err != nil {
		return err
	}
	out, err := decodeResult[resolution](res)
	if err != nil {
		return err
	}
	out.Commit = res.Commit.String()
	if s.json {
		return s.printJSON(out)
	}
	fmt.Fprintf(s.Stdout, "circuit breaker RESOLVED at %s: %s\n", out.ResolvedAt, out.Resolution)
	if out.Lifted {
		fmt.Fprintln(s.Stdout, "CHECKPOINT set by the circuit breaker lifted")
	} else if out.Mode != contracts.ModeRunning {
		fmt.Fprintf(s.Stdout, "the team stays %s (not set by the circuit breaker): git liza resume lifts it\n", out.Mode)
	}
	return nil
}

// modeOf is the mode a control section sets: RUNNING when it sets none.
func modeOf(c *contracts.Control) string {
	if c == nil || c.Mode == "" {
		return contracts.ModeRunning
	}
	return c.Mode
}
