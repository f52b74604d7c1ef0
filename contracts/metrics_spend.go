package contracts

import (
	"maps"
	"math"
	"slices"
)

// SprintSpend is what the sprint's sessions spent (sprint.metrics.spend):
// the usage of every session_ended event in the sprint, by where its work
// went. Total is everything: the tasks' sessions and the planners'
// (Planning, the agents' task-less spend, which has no times and counts
// since the goal began). Merged is the landed work of the merged tasks
// (their sessions after their last rejection) and PerMergedTask its mean
// over the merged tasks. What did not land: RejectedIterations (the
// sessions of iterations a review rejected, the rejecting review's own
// included, on tasks not given up), and the whole spend of Abandoned,
// Superseded and Blocked (BLOCKED and INTEGRATION_FAILED) tasks;
// NotLanded sums them. InFlight is the rest: work not yet judged.
type SprintSpend struct {
	Total              Usage `yaml:"total" json:"total"`
	Planning           Usage `yaml:"planning" json:"planning"`
	Merged             Usage `yaml:"merged" json:"merged"`
	PerMergedTask      Usage `yaml:"per_merged_task" json:"per_merged_task"`
	NotLanded          Usage `yaml:"not_landed" json:"not_landed"`
	RejectedIterations Usage `yaml:"rejected_iterations" json:"rejected_iterations"`
	Abandoned          Usage `yaml:"abandoned" json:"abandoned"`
	Superseded         Usage `yaml:"superseded" json:"superseded"`
	Blocked            Usage `yaml:"blocked" json:"blocked"`
	InFlight           Usage `yaml:"in_flight" json:"in_flight"`
}

// sprintSpend computes the spend of tasks in window in, with merged the
// number of merged tasks; nil when no usage is recorded at all.
func sprintSpend(st *State, tasks []*Task, in window, merged int) *SprintSpend {
	var sp SprintSpend
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		if a := st.Agents[id]; a != nil && a.Spend != nil {
			sp.Planning.Add(*a.Spend)
		}
	}
	sp.Total.Add(sp.Planning)
	for _, t := range tasks {
		landed, rejected := splitSpend(t, in)
		sp.Total.Add(landed)
		sp.Total.Add(rejected)
		switch t.Status {
		case Merged:
			sp.Merged.Add(landed)
			sp.RejectedIterations.Add(rejected)
		case Abandoned:
			sp.Abandoned.Add(landed)
			sp.Abandoned.Add(rejected)
		case Superseded:
			sp.Superseded.Add(landed)
			sp.Superseded.Add(rejected)
		case Blocked, IntegrationFailed:
			sp.Blocked.Add(landed)
			sp.Blocked.Add(rejected)
		default:
			sp.InFlight.Add(landed)
			sp.RejectedIterations.Add(rejected)
		}
	}
	if sp.Total.IsZero() {
		return nil
	}
	sp.finish(merged)
	return &sp
}

// finish derives NotLanded and PerMergedTask, and rounds the costs to
// micro-dollars, so that a sum made in another order reads the same.
func (sp *SprintSpend) finish(merged int) {
	sp.NotLanded = Usage{}
	for _, u := range []Usage{sp.RejectedIterations, sp.Abandoned, sp.Superseded, sp.Blocked} {
		sp.NotLanded.Add(u)
	}
	sp.PerMergedTask = Usage{}
	if merged > 0 && !sp.Merged.IsZero() {
		n := int64(merged)
		sp.PerMergedTask = Usage{Model: sp.Merged.Model, InputTokens: sp.Merged.InputTokens / n, OutputTokens: sp.Merged.OutputTokens / n,
			CacheReadTokens: sp.Merged.CacheReadTokens / n, CacheWriteTokens: sp.Merged.CacheWriteTokens / n,
			CostUSD: sp.Merged.CostUSD / float64(n), CostSource: sp.Merged.CostSource}
	}
	for _, u := range []*Usage{&sp.Total, &sp.Planning, &sp.Merged, &sp.PerMergedTask, &sp.NotLanded,
		&sp.RejectedIterations, &sp.Abandoned, &sp.Superseded, &sp.Blocked, &sp.InFlight} {
		u.CostUSD = math.Round(u.CostUSD*1e6) / 1e6
		if u.IsZero() {
			*u = Usage{}
		}
	}
}

// splitSpend divides the spend of t's sessions in the window between the
// work that may still land (landed: the sessions since its last rejection)
// and the iterations a review rejected (rejected: the sessions before a
// rejection, and the rejecting reviewer's session that follows it).
func splitSpend(t *Task, in window) (landed, rejected Usage) {
	rejecter := ""
	for _, e := range t.History {
		if e == nil {
			continue
		}
		if u, ok := SessionUsage(e); ok {
			if !in.has(e.Time) {
				continue
			}
			if rejecter != "" && e.Agent == rejecter {
				rejected.Add(u)
				rejecter = ""
				continue
			}
			landed.Add(u)
			continue
		}
		rejecter = ""
		if e.Event == "rejected" {
			rejected.Add(landed)
			landed, rejecter = Usage{}, e.Agent
		}
	}
	return landed, rejected
}

// spendAfterMerge moves t's landed spend from in flight to merged in the
// stored spend section, as SprintMetrics would compute it after the merge.
func spendAfterMerge(stored any, t *Task, started string, merged int) (Extra, bool) {
	m, ok := stored.(Extra)
	if !ok {
		return nil, false
	}
	var sp SprintSpend
	b, err := EncodeYAML(m)
	if err != nil || DecodeYAML(b, &sp) != nil {
		return nil, false
	}
	landed, _ := splitSpend(t, windowFrom(started))
	sp.InFlight = subUsage(sp.InFlight, landed)
	sp.Merged.Add(landed)
	sp.finish(merged)
	out, err := asExtra(sp)
	return out, err == nil
}

// subUsage is u less v, never below zero.
func subUsage(u, v Usage) Usage {
	u.InputTokens = max(u.InputTokens-v.InputTokens, 0)
	u.OutputTokens = max(u.OutputTokens-v.OutputTokens, 0)
	u.CacheReadTokens = max(u.CacheReadTokens-v.CacheReadTokens, 0)
	u.CacheWriteTokens = max(u.CacheWriteTokens-v.CacheWriteTokens, 0)
	u.CostUSD = max(u.CostUSD-v.CostUSD, 0)
	return u
}
