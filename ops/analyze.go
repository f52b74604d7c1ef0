package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/worktree"
)

// BreakerBy is the control section's "by" when the circuit breaker set the
// mode.
const BreakerBy = "circuit-breaker"

// BreakerReportFile is where a trigger writes its report for the human,
// relative to the project root (the git directory of a bare repository),
// as the seed's liza-analyze.sh does; circuit_breaker.report_file records
// it.
const BreakerReportFile = ".liza/circuit_breaker_report.md"

// Analysis is what the circuit breaker found and did.
type Analysis struct {
	Triggered bool                     `json:"triggered"`
	Patterns  []contracts.PatternMatch `json:"patterns"`
	// Status is the circuit breaker's status after the run ("" when it
	// could not be recorded).
	Status      string `json:"status,omitempty"`
	LastCheck   string `json:"last_check,omitempty"`
	TriggeredAt string `json:"triggered_at,omitempty"`
	Severity    string `json:"severity,omitempty"`
	Resolution  string `json:"resolution,omitempty"`
	ResolvedAt  string `json:"resolved_at,omitempty"`
	// ReportFile is the report written for the human, relative to the
	// project root, when this run tripped the breaker; ReportPath is where
	// it is on this machine.
	ReportFile string `json:"report_file,omitempty"`
	ReportPath string `json:"report_path,omitempty"`
	// Mode is the control mode after the run.
	Mode    string `json:"mode"`
	Changed bool   `json:"changed"`
	Commit  string `json:"commit,omitempty"`
	// Outcome is one of the Outcome constants: what the run found and did.
	Outcome string `json:"outcome"`
	// Report is the report file's content when this run tripped the
	// breaker; it is kept with the request's result, so that a replayed
	// request writes the file again.
	Report string `json:"report,omitempty"`
}

// The outcomes of an analysis.
const (
	OutcomeClear     = "clear"
	OutcomeTriggered = "triggered"
	OutcomeAlready   = "already_triggered"
	OutcomeResolved  = "already_resolved"
	OutcomeInvalid   = "invalid_state"
)

// Analyze runs the circuit breaker over the state at the tip. Every run
// records circuit_breaker.last_check and a history entry (OK, TRIGGERED,
// or RESOLVED for patterns the human already resolved). On new matches it
// marks the breaker TRIGGERED with the report in the audit log, writes the
// full report to BreakerReportFile, and halts a running team in
// CHECKPOINT. A state that does not validate is analysed too but cannot be
// written to: Analyze then returns the analysis (outcome invalid_state)
// together with an error of class CodeInconsistent.
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
	if out.Report != "" {
		if out.ReportPath, err = s.writeReport(out.ReportFile, out.Report); err != nil {
			return &out, err
		}
	}
	return &out, nil
}

// writeReport writes a report for the human at rel under the project root
// (the git directory of a bare repository), keeping it out of git status,
// and returns its path. It is written after the state records it: the
// file is this machine's copy; the audit log has the report too.
func (s *Service) writeReport(rel, text string) (string, error) {
	root := s.Repo.MainWorkTree()
	if root == "" {
		root = s.Repo.CommonDir
	} else if err := worktree.Exclude(s.Repo, "/"+rel); err != nil {
		return "", err
	}
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	// The person reads the report with cat or an editor: agents' text in
	// it (block reasons, questions, anomaly details) is spelled out as on
	// every other printer, never run by their terminal.
	return path, os.WriteFile(path, []byte(contracts.PrintableText(text)), 0o644)
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
	if tx.Rules < contracts.RulesWhole {
		return analyzeFirst(tx, st)
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	matches := contracts.Analyze(st, nil)
	now := tx.NowString()
	out := Analysis{Triggered: len(matches) > 0, Patterns: matches, Mode: modeOf(m.Control), LastCheck: now, Changed: true}
	cb := m.CircuitBreaker
	if cb == nil {
		cb = &contracts.CircuitBreaker{}
		m.CircuitBreaker = cb
	}
	check := &contracts.BreakerCheck{Timestamp: now, Result: contracts.BreakerOK, Matches: len(matches)}
	if len(matches) > 0 {
		check.Pattern, check.Severity = matches[0].Pattern, matches[0].Severity
	}
	switch {
	case len(matches) == 0:
		out.Outcome = OutcomeClear
		// A trip stays until the human resolves it; a clean run after a
		// resolution, or a first run, is OK.
		if cb.Status != contracts.BreakerTriggered {
			cb.Status = contracts.BreakerOK
		}
		tx.Describe("circuit breaker check: "+strings.ToLower(cb.Status)+by(tx.Actor), "")
	case cb.Status == contracts.BreakerTriggered && contracts.SamePatterns(cb.Patterns, matches):
		out.Outcome = OutcomeAlready
		check.Result = contracts.BreakerTriggered
		tx.Describe("circuit breaker check: still triggered"+by(tx.Actor), "")
	case cb.Status == contracts.BreakerResolved && contracts.SamePatterns(cb.Patterns, matches):
		out.Outcome = OutcomeResolved
		check.Result = contracts.BreakerResolved
		tx.Describe("circuit breaker check: patterns already resolved"+by(tx.Actor), "")
	default:
		out.Outcome = OutcomeTriggered
		check.Result = contracts.BreakerTriggered
		report := contracts.BreakerReport(matches)
		*cb = contracts.CircuitBreaker{
			Status: contracts.BreakerTriggered, LastCheck: now, TriggeredAt: now, Severity: matches[0].Severity,
			Patterns: contracts.StorePatterns(matches), Report: report, ReportFile: BreakerReportFile,
			History: cb.History, Extra: cb.Extra,
		}
		haltForBreaker(m, matches, now)
		tx.Describe(fmt.Sprintf("circuit breaker triggered (%s)", contracts.Plural(len(matches), "pattern")), "")
		tx.Body(report)
		out.ReportFile = BreakerReportFile
		out.Report = contracts.BreakerReportFile(st, matches, now)
	}
	cb.LastCheck = now
	cb.History = keepChecks(append(cb.History, check))
	tx.PutMeta(m)
	out.Status, out.TriggeredAt, out.Severity = cb.Status, cb.TriggeredAt, cb.Severity
	out.Resolution, out.ResolvedAt = cb.Resolution, cb.ResolvedAt
	out.Mode = modeOf(m.Control)
	return out, nil
})

// analyzeFirst is the circuit breaker of the first rules: a run that finds
// nothing new writes nothing, and a trigger records no history.
func analyzeFirst(tx *cas.Tx, st *contracts.State) (any, error) {
	matches := contracts.AnalyzeFirst(st, nil)
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
	report := contracts.BreakerReportFirst(matches)
	now := tx.NowString()
	m.CircuitBreaker = &contracts.CircuitBreaker{
		Status: contracts.BreakerTriggered, TriggeredAt: now,
		Patterns: contracts.StorePatterns(matches), Report: report,
	}
	haltForBreaker(m, matches, now)
	tx.PutMeta(m)
	tx.Describe(fmt.Sprintf("circuit breaker triggered (%s)", contracts.Plural(len(matches), "pattern")), "")
	tx.Body(report)
	out.Status, out.TriggeredAt, out.Resolution, out.ResolvedAt = contracts.BreakerTriggered, now, "", ""
	out.Mode = modeOf(m.Control)
	out.Changed = true
	out.Outcome = OutcomeTriggered
	return out, nil
}

// haltForBreaker halts a running team in CHECKPOINT for a trigger; a
// checkpoint the circuit breaker set takes the new reason; any other mode
// in force stays as it is.
func haltForBreaker(m *cas.Meta, matches []contracts.PatternMatch, now string) {
	reason := "circuit breaker: " + strings.Join(contracts.PatternNames(matches), ", ")
	switch c := m.Control; {
	case modeOf(c) == contracts.ModeRunning:
		m.Control = &contracts.Control{Mode: contracts.ModeCheckpoint, Since: now, By: BreakerBy, Reason: reason}
	case c.Mode == contracts.ModeCheckpoint && c.By == BreakerBy:
		c.Reason = reason
	}
}

// keepChecks keeps the newest BreakerHistoryKeep entries of
// circuit_breaker.history.
func keepChecks(h []*contracts.BreakerCheck) []*contracts.BreakerCheck {
	if n := len(h); n > contracts.BreakerHistoryKeep {
		return h[n-contracts.BreakerHistoryKeep:]
	}
	return h
}

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
	if tx.Rules >= contracts.RulesWhole {
		cb.History = keepChecks(append(cb.History, &contracts.BreakerCheck{Timestamp: now, Result: contracts.BreakerResolved,
			Extra: contracts.Extra{"resolution": in.Resolution}}))
	}
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
