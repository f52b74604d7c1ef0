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
	res, err := s.update(ctx, call, cas.Op{Name: contracts.OpSprint, Apply: func(tx *cas.Tx) (any, error) {
		st, err := tx.Snap.Load()
		if err != nil {
			return nil, err
		}
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		if c := m.Control; modeOf(c) == contracts.ModeCheckpoint {
			return nil, contracts.Invalidf("a checkpoint is pending (since %s by %s: %s): git liza resume lifts it before the next one", c.Since, c.By, c.Reason)
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
	}})
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
// histories, and writes them only when they changed.
func (s *Service) SprintMetrics(ctx context.Context, call Call) (*MetricsResult, error) {
	res, err := s.update(ctx, call, cas.Op{Name: contracts.OpSprint, Apply: func(tx *cas.Tx) (any, error) {
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
	}})
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

// refreshMetrics recomputes sprint.metrics in m from the state tx read
// with the changed tasks put in, and records m when they changed.
func refreshMetrics(tx *cas.Tx, m *cas.Meta, changed ...*contracts.Task) error {
	st, err := tx.Snap.Load()
	if err != nil {
		return err
	}
	for _, c := range changed {
		for i, t := range st.Tasks {
			if t != nil && t.ID == c.ID {
				st.Tasks[i] = c
			}
		}
	}
	st.Sprint = m.Sprint
	merged, changedMetrics, err := contracts.MergeMetrics(m.Sprint.Metrics, contracts.SprintMetrics(st, tx.Now))
	if err != nil || !changedMetrics {
		return err
	}
	m.Sprint.Metrics = merged
	tx.PutMeta(m)
	return nil
}
