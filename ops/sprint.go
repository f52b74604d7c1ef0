package ops

import (
	"context"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// SprintCheckpointResult is what a sprint checkpoint reports.
type SprintCheckpointResult struct {
	contracts.Summary
	Mode   string `json:"mode"`
	Commit string `json:"commit,omitempty"`
}

// SprintCheckpoint halts a running team in CHECKPOINT and records the
// sprint summary for the human in the audit log. A checkpoint, pause or
// abort already in force stays as it was set.
func (s *Service) SprintCheckpoint(ctx context.Context, call Call) (*SprintCheckpointResult, error) {
	res, err := s.write(ctx, call, kindSprintCheckpoint, struct{}{}, nil)
	if err != nil {
		return nil, err
	}
	out, err := decode[SprintCheckpointResult](res)
	if err != nil {
		return nil, err
	}
	out.Commit = res.Commit.String()
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
// histories, and writes them only when they changed.
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
	now := tx.NowString()
	m.Sprint.Timeline.Checkpoint = now
	if modeOf(m.Control) == contracts.ModeRunning {
		m.Control = &contracts.Control{Mode: contracts.ModeCheckpoint, Since: now, By: contracts.ActorName(tx.Actor), Reason: "sprint checkpoint"}
	}
	st.Sprint, st.Control = m.Sprint, m.Control
	sum := contracts.SprintSummary(st, tx.Now)
	tx.PutMeta(m)
	tx.Describe("sprint checkpoint"+by(tx.Actor), "")
	tx.Body(sum.Markdown())
	return SprintCheckpointResult{Summary: sum, Mode: modeOf(m.Control)}, nil
})

var kindSprintMetrics = def("sprint_metrics", contracts.OpSprint, func(tx *cas.Tx, _ *struct{}) (any, error) {
	st, err := tx.Snap.Load()
	if err != nil {
		return nil, err
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	metrics := contracts.SprintMetrics(st, tx.Now)
	merged, changed, err := contracts.MergeMetrics(m.Sprint.Metrics, metrics)
	if err != nil {
		return nil, err
	}
	out := MetricsResult{Sprint: m.Sprint.ID, Metrics: metrics, StoredAt: metrics.ComputedAt, Changed: changed}
	if !changed {
		if at, ok := m.Sprint.Metrics["computed_at"].(string); ok {
			out.StoredAt = at
		}
		return out, nil
	}
	m.Sprint.Metrics = merged
	tx.PutMeta(m)
	tx.Describe("sprint metrics"+by(tx.Actor), "")
	return out, nil
})
