package contracts

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The circuit breaker's statuses. A state without a circuit_breaker section
// was never analysed; OK means the last run found nothing while the
// breaker was not tripped.
const (
	BreakerOK        = "OK"
	BreakerTriggered = "TRIGGERED"
	BreakerResolved  = "RESOLVED"
)

// BreakerStatuses lists the values CircuitBreaker.Status may take.
var BreakerStatuses = []string{BreakerOK, BreakerTriggered, BreakerResolved}

// BreakerHistoryKeep is how many entries circuit_breaker.history keeps:
// liza.yaml is read by every operation, and the audit log keeps every
// entry that falls off.
const BreakerHistoryKeep = 100

// The patterns the circuit breaker looks for.
const (
	PatternRepeatedRejection    = "repeated_rejection"
	PatternCrashLoop            = "crash_loop"
	PatternInvalidState         = "invalid_state"
	PatternIntegrationCascade   = "integration_cascade"
	PatternHypothesisExhaustion = "hypothesis_exhaustion"
	PatternBlockedMajority      = "blocked_majority"

	// The anomaly patterns of the original circuit breaker
	// (liza-analyze.sh), over the sprint's anomalies.
	PatternRetryCluster      = "retry_cluster"
	PatternDebtAccumulation  = "debt_accumulation"
	PatternAssumptionCascade = "assumption_cascade"
	PatternSpecGapCluster    = "spec_gap_cluster"
	PatternWorkaround        = "workaround_pattern"
	PatternExternalOutage    = "external_service_outage"
)

// The severity classes: which layer a pattern says is wrong, and so how
// far the remediation reaches (scope, spec, architecture, tools, or
// something outside the team).
const (
	SeverityScope        = "SCOPE_FLAW"
	SeveritySpec         = "SPEC_FLAW"
	SeverityArchitecture = "ARCHITECTURE_FLAW"
	SeverityTechStack    = "TECH_STACK_FLAW"
	SeverityExternal     = "EXTERNAL_DEPENDENCY"
)

// PatternSeverity is each pattern's severity class. The six anomaly
// patterns carry the original's classes; the seed 000 conditions are
// classed by what they point at: a task rejected again and again, or most
// of the board blocked on questions, at the spec; a crash loop or a broken
// blackboard at the tools; integration failures cascading at how the work
// was cut; exhausted hypotheses at the plan's scope.
var PatternSeverity = map[string]string{
	PatternRepeatedRejection:    SeveritySpec,
	PatternCrashLoop:            SeverityTechStack,
	PatternInvalidState:         SeverityTechStack,
	PatternIntegrationCascade:   SeverityArchitecture,
	PatternHypothesisExhaustion: SeverityScope,
	PatternBlockedMajority:      SeveritySpec,
	PatternRetryCluster:         SeverityArchitecture,
	PatternDebtAccumulation:     SeverityScope,
	PatternAssumptionCascade:    SeveritySpec,
	PatternSpecGapCluster:       SeveritySpec,
	PatternWorkaround:           SeverityArchitecture,
	PatternExternalOutage:       SeverityExternal,
}

// The thresholds of the patterns.
const (
	// RejectionThreshold is how many rejections of one task in a sprint
	// make a repeated rejection (seed 000: same task rejected 3x).
	RejectionThreshold = 3
	// IntegrationCascadeThreshold is how many tasks failing to integrate
	// in a sprint make a cascade.
	IntegrationCascadeThreshold = 2
	// FailedCodersThreshold is how many coders failing on one task
	// exhaust its hypothesis (seed 003: 2 coders failed).
	FailedCodersThreshold = 2
	// ExhaustedTasksThreshold is how many exhausted tasks show that the
	// plan, not the coders, is wrong.
	ExhaustedTasksThreshold = 2
	// BlockedMinimum is the fewest BLOCKED tasks that can be a majority.
	BlockedMinimum = 2
	// BlockedShareThreshold is the share of the open (non-terminal) tasks
	// that BLOCKED tasks must reach.
	BlockedShareThreshold = 0.5

	// RetryClusterMin retry_loop anomalies, RetrySimilarMin of them with
	// the same error_pattern, make a retry cluster.
	RetryClusterMin = 3
	RetrySimilarMin = 2
	// DebtMin trade-offs that created debt make a debt accumulation.
	DebtMin = 3
	// SameKeyMin anomalies sharing their key (the assumption, the
	// spec_ref, the root cause, the service) make a cascade, a spec gap
	// cluster, a workaround pattern or an outage.
	SameKeyMin = 2
)

// crashLoopPrefix starts the error_pattern (or question) of the anomaly a
// supervisor logs when it stops on a crash loop.
const crashLoopPrefix = "crash loop"

// PatternMatch is one systemic failure the circuit breaker found.
type PatternMatch struct {
	Pattern string   `yaml:"pattern" json:"pattern"`
	Tasks   []string `yaml:"tasks,omitempty" json:"tasks"`
	Agents  []string `yaml:"agents,omitempty" json:"agents"`
	Count   int      `yaml:"count" json:"count"`
	Detail  string   `yaml:"detail" json:"detail"`
	// Severity is the pattern's severity class (PatternSeverity).
	Severity string `yaml:"severity,omitempty" json:"severity"`
	// Anomalies are the ids of the anomalies that make the match, for the
	// anomaly patterns.
	Anomalies []string `yaml:"anomalies,omitempty" json:"anomalies,omitempty"`
}

// Analyze looks for systemic failure patterns in the current sprint: the
// task history events and the anomalies at or after
// sprint.timeline.started (all of them when it is unset). problems are the
// state's validation problems, rendered. Every match is returned, in the
// order of the table below, then by task or agent id.
//
//	pattern                matches when                                   one match
//	---------------------  ---------------------------------------------  ---------
//	repeated_rejection     an open task was rejected RejectionThreshold   per task
//	                       (3) times or more in the sprint (with no
//	                       sprint start: or review_cycles_total >= 3)
//	crash_loop             a supervisor stopped on a crash loop: a        per agent
//	                       retry_loop anomaly whose error_pattern starts
//	                       with "crash loop" (coders, reviewers), or a
//	                       system_ambiguity anomaly with protocol_section
//	                       "supervisor" whose question does (planners)
//	invalid_state          the state fails validation                     one
//	integration_cascade    IntegrationCascadeThreshold (2) or more tasks  one
//	                       hit INTEGRATION_FAILED in the sprint (not
//	                       counting conflicts caught before review)
//	hypothesis_exhaustion  ExhaustedTasksThreshold (2) or more open       one
//	                       tasks have FailedCodersThreshold (2) or more
//	                       coders in failed_by: the plan is wrong
//	blocked_majority       BlockedMinimum (2) or more tasks are BLOCKED   one
//	                       and they are at least BlockedShareThreshold
//	                       (half) of the open tasks
//	retry_cluster          3 or more retry_loop anomalies, 2 or more of   one
//	                       them with the same error_pattern
//	debt_accumulation      3 or more trade_off anomalies with             one
//	                       debt_created true
//	assumption_cascade     2 or more assumption_violated anomalies with   per assumption
//	                       the same assumption
//	spec_gap_cluster       2 or more spec_ambiguity anomalies with the    per spec_ref
//	                       same spec_ref
//	workaround_pattern     2 or more workaround or trade_off anomalies    per cause
//	                       with the same root_cause (else the same what)
//	external_service_      2 or more external_blocker anomalies with the  per service
//	outage                 same blocker_service
//
// Open tasks are the live tasks that are not terminal. Events of archived
// tasks count toward integration_cascade only. The anomaly patterns count
// the anomalies of the sprint; "the same" is string equality of the
// trimmed values (the original's group_by), and an empty value is nobody's
// key. Every match carries its severity class (PatternSeverity).
func Analyze(st *State, problems []string) []PatternMatch {
	var out []PatternMatch
	if st == nil {
		m := invalidMatch(append([]string{"no state"}, problems...))
		m.Tasks, m.Agents = []string{}, []string{}
		return []PatternMatch{m}
	}
	in := sprintWindow(st)
	live := sortedTasks(st.Tasks)

	for _, t := range live {
		if t.Status.Terminal() {
			continue
		}
		if m, ok := repeatedRejection(t, in); ok {
			out = append(out, m)
		}
	}

	out = append(out, crashLoops(st.Anomalies, in)...)

	if len(problems) > 0 {
		out = append(out, invalidMatch(problems))
	}

	var failed []*Task
	agents := map[string]bool{}
	for _, t := range sortedTasks(append(slices.Clone(st.Tasks), st.Archive...)) {
		hit := false
		for _, e := range t.History {
			// A conflict the merge check caught before review (at submit,
			// or before a reviewer's session) reached no integration
			// branch: it is concurrent work meeting, which the coder's
			// integration fix settles, not integration failing.
			if e != nil && e.Event == "integration_failed" && !caughtEarly(e) && in.has(e.Time) {
				hit = true
				if e.Agent != "" {
					agents[e.Agent] = true
				}
			}
		}
		if hit {
			failed = append(failed, t)
		}
	}
	if len(failed) >= IntegrationCascadeThreshold {
		ids := matchIDs(failed)
		out = append(out, PatternMatch{
			Pattern: PatternIntegrationCascade, Tasks: ids, Agents: sortedSet(agents), Count: len(failed),
			Detail: fmt.Sprintf("%d tasks failed to integrate in this sprint: %s", len(failed), strings.Join(ids, ", ")),
		})
	}

	var exhausted []*Task
	failers := map[string]bool{}
	for _, t := range live {
		if !t.Status.Terminal() && len(t.FailedBy) >= FailedCodersThreshold {
			exhausted = append(exhausted, t)
			for _, a := range t.FailedBy {
				failers[a] = true
			}
		}
	}
	if len(exhausted) >= ExhaustedTasksThreshold {
		parts := make([]string, len(exhausted))
		for i, t := range exhausted {
			parts[i] = fmt.Sprintf("%s (%s)", t.ID, strings.Join(t.FailedBy, ", "))
		}
		out = append(out, PatternMatch{
			Pattern: PatternHypothesisExhaustion, Tasks: matchIDs(exhausted), Agents: sortedSet(failers), Count: len(exhausted),
			Detail: fmt.Sprintf("%d tasks failed with two coders each; the plan, not the coders, needs to change: %s", len(exhausted), strings.Join(parts, ", ")),
		})
	}

	var blocked []*Task
	open := 0
	holders := map[string]bool{}
	for _, t := range live {
		if t.Status.Terminal() {
			continue
		}
		open++
		if t.Status == Blocked {
			blocked = append(blocked, t)
			if t.AssignedTo != "" {
				holders[t.AssignedTo] = true
			}
		}
	}
	if len(blocked) >= BlockedMinimum && float64(len(blocked)) >= BlockedShareThreshold*float64(open) {
		ids := matchIDs(blocked)
		out = append(out, PatternMatch{
			Pattern: PatternBlockedMajority, Tasks: ids, Agents: sortedSet(holders), Count: len(blocked),
			Detail: fmt.Sprintf("%d of %d open tasks are BLOCKED: %s", len(blocked), open, strings.Join(ids, ", ")),
		})
	}
	out = append(out, anomalyPatterns(st.Anomalies, in)...)
	for i := range out {
		out[i].Severity = PatternSeverity[out[i].Pattern]
		if out[i].Tasks == nil {
			out[i].Tasks = []string{}
		}
		if out[i].Agents == nil {
			out[i].Agents = []string{}
		}
	}
	return out
}

func invalidMatch(problems []string) PatternMatch {
	detail := "the state fails validation: " + OneLine(problems[0])
	if len(problems) > 1 {
		detail += fmt.Sprintf(" (and %d more problems)", len(problems)-1)
	}
	return PatternMatch{Pattern: PatternInvalidState, Count: len(problems), Detail: detail}
}

// window is the time span of the current sprint.
type window struct {
	start   time.Time
	bounded bool // false when the sprint has no (readable) start
}

// sprintWindow is the current sprint: from sprint.timeline.started on.
func sprintWindow(st *State) window { return windowFrom(st.Sprint.Timeline.Started) }

// windowFrom is the window from started on, unbounded when started is
// unset or unreadable.
func windowFrom(started string) window {
	start, err := ParseTime(started)
	return window{start: start, bounded: err == nil}
}

// has reports whether a timestamp falls in the sprint: at or after its
// start. Everything does when the sprint has no start, and so does a
// timestamp that is missing or cannot be read, so that a bad clock hides
// nothing.
func (w window) has(ts string) bool {
	if !w.bounded {
		return true
	}
	t, err := ParseTime(ts)
	return err != nil || !t.Before(w.start)
}

// sortedTasks returns the non-nil tasks of list in natural id order.
func sortedTasks(list []*Task) []*Task {
	out := make([]*Task, 0, len(list))
	for _, t := range list {
		if t != nil {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b *Task) int { return compareNatural(a.ID, b.ID) })
	return out
}

func matchIDs(ts []*Task) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

func sortedSet(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, compareNatural)
	return out
}

func detailText(d Extra, key string) string {
	v, ok := d[key]
	if !ok || v == nil {
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// caughtEarly reports whether e, an integration_failed event, is a
// conflict the merge check caught before review (ConflictChecked set).
func caughtEarly(e *HistoryEvent) bool {
	checked, _ := e.Extra[ConflictChecked].(string)
	return checked != ""
}
