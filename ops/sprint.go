package ops

import (
	"context"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// SprintSummaryFile is where a sprint checkpoint writes its summary for
// the human, relative to the project root, as liza-checkpoint.sh does.
const SprintSummaryFile = ".liza/sprint_summary.md"

// SprintCheckpointResult is what a sprint checkpoint reports.
type SprintCheckpointResult struct {
	contracts.Summary
	Mode string `json:"mode"`
	// SummaryPath is where the summary was written on this machine.
	SummaryPath string `json:"summary_path,omitempty"`
	Commit      string `json:"commit,omitempty"`
}

// SprintCheckpoint halts a running team in CHECKPOINT and records the
// sprint summary for the human in the audit log and in
// SprintSummaryFile. A checkpoint already pending (the state's, or the
// seed's .liza/CHECKPOINT file) refuses a second one, as
// liza-checkpoint.sh does; a pause or abort in force stays as it was set.
func (s *Service) SprintCheckpoint(ctx context.Context, call Call) (*SprintCheckpointResult, error) {
	if err := contracts.Permit(s.Agent, contracts.OpSprint); err != nil {
		return nil, err
	}
	if root := s.Repo.MainWorkTree(); root != "" {
		if at, ok := contracts.StatSwitchFiles(root)[".liza/CHECKPOINT"]; ok {
			return nil, contracts.Invalidf("a checkpoint is pending (.liza/CHECKPOINT since %s): git liza resume lifts it before the next one", contracts.FormatTime(at))
		}
	}
	res, err := s.write(ctx, call, kindSprintCheckpoint, struct{}{}, nil)
	if err != nil {
		return nil, err
	}
	out, err := decode[SprintCheckpointResult](res)
	if err != nil {
		return nil, err
	}
	out.Commit = res.Commit.String()
	if out.SummaryPath, err = s.writeReport(SprintSummaryFile, out.Markdown()); err != nil {
		return &out, err
	}
	return &out, nil
}

// MetricsResult is what sprint metrics reports.
type MetricsResult struct {
	Sprint string `json:"sprint"`
	contracts.Metrics
	// StoredAt is the computed_at of the values in sprint.metrics.
	StoredAt string `json:"stored_at"`
	Changed  bool   `json:"changed"`
	Commit   string `json:"commit,omitempty"`
}

// SprintMetrics recomputes sprint.metrics from the tasks and their
// histories, and writes them only when they changed. Every merge does the
// same (metricsAtMerge), so this finds them changed only when something
// moved since the last merge.
func (s *Service) SprintMetrics(ctx context.Context, call Call) (*MetricsResult, error) {
	res, err := s.write(ctx, call, kindSprintMetrics, struct{}{}, nil)
	if err != nil {
		return nil, err
	}
	out, err := decode[MetricsResult](res)
	if err != nil {
		return nil, err
	}
	out.Commit = res.Commit.String()
	return &out, nil
}

var kindSprintCheckpoint = def("sprint_checkpoint", contracts.OpSprint, func(tx *cas.Tx, _ *struct{}) (any, error) {
	st, err := tx.Snap.Load()
	if err != nil {
		return nil, err
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	whole := tx.Rules >= contracts.RulesWhole
	if c := m.Control; whole && modeOf(c) == contracts.ModeCheckpoint {
		return nil, contracts.Invalidf("a checkpoint is pending (since %s by %s: %s): git liza resume lifts it before the next one", c.Since, c.By, c.Reason)
	}
	now := tx.NowString()
	m.Sprint.Timeline.Checkpoint = now
	if modeOf(m.Control) == contracts.ModeRunning {
		m.Control = &contracts.Control{Mode: contracts.ModeCheckpoint, Since: now, By: contracts.ActorName(tx.Actor), Reason: "sprint checkpoint"}
	}
	planned := st.Sprint.Scope.Planned // liza.yaml's sprint holds none
	st.Sprint, st.Control = m.Sprint, m.Control
	tx.PutMeta(m)
	tx.Describe("sprint checkpoint"+by(tx.Actor), "")
	if !whole {
		sum := contracts.SprintSummaryFirst(st, tx.Now)
		tx.Body(sum.Markdown())
		return struct {
			contracts.SummaryFirst
			Mode string `json:"mode"`
		}{sum, modeOf(m.Control)}, nil
	}
	st.Sprint.Scope.Planned = planned
	sum := contracts.SprintSummary(st, tx.Now)
	tx.Body(sum.Markdown())
	return SprintCheckpointResult{Summary: sum, Mode: modeOf(m.Control)}, nil
})

// metricsResultFirst is what sprint metrics reported under the first
// rules (a request id keeps it).
type metricsResultFirst struct {
	Sprint string `json:"sprint"`
	contracts.MetricsFirst
	StoredAt string `json:"stored_at"`
	Changed  bool   `json:"changed"`
}

var kindSprintMetrics = def("sprint_metrics", contracts.OpSprint, func(tx *cas.Tx, _ *struct{}) (any, error) {
	st, err := tx.Snap.Load()
	if err != nil {
		return nil, err
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	// store records fresh metrics computed at computedAt when they
	// changed, and returns when the stored ones were computed and whether
	// they changed.
	store := func(fresh contracts.Extra, computedAt string) (string, bool) {
		merged, changed := contracts.MergeMetrics(m.Sprint.Metrics, fresh)
		if !changed {
			if at, ok := m.Sprint.Metrics["computed_at"].(string); ok {
				return at, false
			}
			return computedAt, false
		}
		m.Sprint.Metrics = merged
		tx.PutMeta(m)
		tx.Describe("sprint metrics"+by(tx.Actor), "")
		return computedAt, true
	}
	if tx.Rules < contracts.RulesWhole {
		metrics := contracts.SprintMetricsFirst(st, tx.Now)
		fresh, err := metrics.Extra()
		if err != nil {
			return nil, err
		}
		out := metricsResultFirst{Sprint: m.Sprint.ID, MetricsFirst: metrics}
		out.StoredAt, out.Changed = store(fresh, metrics.ComputedAt)
		return out, nil
	}
	metrics := contracts.SprintMetrics(st, tx.Now)
	fresh, err := metrics.Extra()
	if err != nil {
		return nil, err
	}
	out := MetricsResult{Sprint: m.Sprint.ID, Metrics: metrics}
	out.StoredAt, out.Changed = store(fresh, metrics.ComputedAt)
	return out, nil
})
