package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// BreakerBy is the control section's "by" when the circuit breaker set the
// mode.
const BreakerBy = "circuit-breaker"

// Analysis is what the circuit breaker found and did.
type Analysis struct {
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
	// Outcome is one of the Outcome constants: what the run found and did.
	Outcome string `json:"outcome"`
}

// The outcomes of an analysis.
const (
	OutcomeClear     = "clear"
	OutcomeTriggered = "triggered"
	OutcomeAlready   = "already_triggered"
	OutcomeResolved  = "already_resolved"
	OutcomeInvalid   = "invalid_state"
)

// Analyze runs the circuit breaker over the state at the tip. On a match
// it marks the breaker TRIGGERED with the report in the audit log and halts
// a running team in CHECKPOINT. A state that does not validate is analysed
// too but cannot be written to: Analyze then returns the analysis (outcome
// invalid_state) together with an error of class CodeInconsistent.
func (s *Service) Analyze(ctx context.Context, call Call) (*Analysis, error) {
	if err := contracts.Permit(s.Agent, contracts.OpSprint); err != nil {
		return nil, err
	}
	snap, err := s.Snapshot(ctx, "")
	if err != nil {
		return nil, err
	}
	st, err := snap.Load()
	if err != nil {
		return nil, err
	}
	if problems := contracts.Validate(st); len(problems) > 0 {
		list := make([]string, len(problems))
		for i, p := range problems {
			list[i] = p.String()
		}
		out := &Analysis{Triggered: true, Patterns: contracts.Analyze(st, list), Mode: modeOf(st.Control), Outcome: OutcomeInvalid}
		return out, contracts.Errorf(contracts.CodeInconsistent,
			"the state at %s is invalid and cannot record the circuit breaker: repair it with git liza import (git liza export > state.yaml, fix, git liza import state.yaml)", short(snap.Commit.String()))
	}

	res, err := s.write(ctx, call, kindAnalyze, struct{}{}, nil)
	if err != nil {
		return nil, err
	}
	out, err := decode[Analysis](res)
	if err != nil {
		return nil, err
	}
	if out.Patterns == nil {
		out.Patterns = []contracts.PatternMatch{}
	}
	out.Commit = res.Commit.String()
	return &out, nil
}

// ResolveRequest records what the human did about a TRIGGERED breaker.
type ResolveRequest struct {
	Call
	Resolution string
}

// Resolution is what resolving the circuit breaker reports.
type Resolution struct {
	Status     string `json:"status"`
	Resolution string `json:"resolution"`
	ResolvedAt string `json:"resolved_at"`
	Lifted     bool   `json:"checkpoint_lifted"`
	Mode       string `json:"mode"`
	Commit     string `json:"commit,omitempty"`
}

// ResolveBreaker marks a TRIGGERED circuit breaker RESOLVED with what was
// done, and lifts the checkpoint it set.
func (s *Service) ResolveBreaker(ctx context.Context, r ResolveRequest) (*Resolution, error) {
	if err := contracts.Permit(s.Agent, contracts.OpSprint); err != nil {
		return nil, err
	}
	text := strings.TrimSpace(r.Resolution)
	if text == "" {
		return nil, contracts.Invalidf("--resolve needs a text saying what was done")
	}
	res, err := s.write(ctx, r.Call, kindResolve, resolveInput{Resolution: text}, nil)
	if err != nil {
		return nil, err
	}
	out, err := decode[Resolution](res)
	if err != nil {
		return nil, err
	}
	out.Commit = res.Commit.String()
	return &out, nil
}

var kindAnalyze = def("analyze", contracts.OpSprint, func(tx *cas.Tx, _ *struct{}) (any, error) {
	st, err := tx.Snap.Load()
	if err != nil {
		return nil, err
	}
	matches := contracts.Analyze(st, nil)
	out := Analysis{Triggered: len(matches) > 0, Patterns: matches, Mode: modeOf(st.Control)}
	cb := st.CircuitBreaker
	if cb != nil {
		out.Status, out.TriggeredAt, out.Resolution, out.ResolvedAt = cb.Status, cb.TriggeredAt, cb.Resolution, cb.ResolvedAt
	}
	switch {
	case len(matches) == 0:
		out.Outcome = OutcomeClear
		return out, nil
	case cb != nil && cb.Status == contracts.BreakerTriggered && contracts.SamePatterns(cb.Patterns, matches):
		out.Outcome = OutcomeAlready
		return out, nil
	case cb != nil && cb.Status == contracts.BreakerResolved && contracts.SamePatterns(cb.Patterns, matches):
		out.Outcome = OutcomeResolved
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
		m.Control = &contracts.Control{Mode: contracts.ModeCheckpoint, Since: now, By: BreakerBy, Reason: reason}
	case c.Mode == contracts.ModeCheckpoint && c.By == BreakerBy:
		c.Reason = reason
	}
	tx.PutMeta(m)
	tx.Describe(fmt.Sprintf("circuit breaker triggered (%s)", contracts.Plural(len(matches), "pattern")), "")
	tx.Body(report)
	out.Status, out.TriggeredAt, out.Resolution, out.ResolvedAt = contracts.BreakerTriggered, now, "", ""
	out.Mode = modeOf(m.Control)
	out.Changed = true
	out.Outcome = OutcomeTriggered
	return out, nil
})

type resolveInput struct {
	Resolution string `json:"resolution"`
}

var kindResolve = def("resolve", contracts.OpSprint, func(tx *cas.Tx, in *resolveInput) (any, error) {
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	cb := m.CircuitBreaker
	if cb == nil || cb.Status != contracts.BreakerTriggered {
		return nil, contracts.Invalidf("the circuit breaker is not TRIGGERED: nothing to resolve")
	}
	now := tx.NowString()
	cb.Status, cb.Resolution, cb.ResolvedAt = contracts.BreakerResolved, in.Resolution, now
	out := Resolution{Status: cb.Status, Resolution: in.Resolution, ResolvedAt: now}
	if c := m.Control; c != nil && c.Mode == contracts.ModeCheckpoint && c.By == BreakerBy {
		m.Control = nil
		out.Lifted = true
	}
	out.Mode = modeOf(m.Control)
	tx.PutMeta(m)
	tx.Describe("circuit breaker resolved"+by(tx.Actor), "")
	tx.Body(in.Resolution)
	return out, nil
})
