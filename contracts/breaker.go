package contracts

import (
	"bytes"
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
//	                       hit INTEGRATION_FAILED in the sprint
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
			if e != nil && e.Event == "integration_failed" && in.has(e.Time) {
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

// repeatedRejection counts the rejections of t in the sprint. The coders
// named are those whose submission was rejected, the reviewers those who
// rejected it. With no sprint start, review_cycles_total counts as well, for
// states whose history was not kept.
func repeatedRejection(t *Task, in window) (PatternMatch, bool) {
	n := 0
	last := ""
	submitter := ""
	agents := map[string]bool{}
	for _, e := range t.History {
		if e == nil {
			continue
		}
		switch e.Event {
		case "submitted":
			submitter = e.Agent
		case "rejected":
			if !in.has(e.Time) {
				continue
			}
			n++
			last = e.Reason
			for _, a := range []string{e.Agent, submitter} {
				if a != "" {
					agents[a] = true
				}
			}
		}
	}
	if !in.bounded && t.ReviewCyclesTotal > n {
		n = t.ReviewCyclesTotal
		if last == "" {
			last = t.RejectionReason
		}
	}
	if n < RejectionThreshold {
		return PatternMatch{}, false
	}
	detail := fmt.Sprintf("task %s rejected %d times in this sprint", t.ID, n)
	if last = OneLine(last); last != "" {
		detail += " (last reason: " + last + ")"
	}
	return PatternMatch{Pattern: PatternRepeatedRejection, Tasks: []string{t.ID}, Agents: sortedSet(agents), Count: n, Detail: detail}, true
}

// crashLoops returns one match per agent whose supervisor logged a crash
// loop in the sprint.
func crashLoops(anomalies []*Anomaly, in window) []PatternMatch {
	type loop struct {
		tasks   map[string]bool
		n       int
		crashes int
		what    string
	}
	loops := map[string]*loop{}
	for _, a := range anomalies {
		if a == nil || !in.has(a.Timestamp) {
			continue
		}
		var what string
		switch a.Type {
		case "retry_loop":
			what = detailText(a.Details, "error_pattern")
		case "system_ambiguity":
			if detailText(a.Details, "protocol_section") != "supervisor" {
				continue
			}
			what = detailText(a.Details, "question")
		default:
			continue
		}
		if !strings.HasPrefix(strings.ToLower(what), crashLoopPrefix) {
			continue
		}
		l := loops[a.LoggedBy]
		if l == nil {
			l = &loop{tasks: map[string]bool{}}
			loops[a.LoggedBy] = l
		}
		l.n++
		l.what = what
		if a.TaskID != "" {
			l.tasks[a.TaskID] = true
		}
		var c int
		if _, err := fmt.Sscan(detailText(a.Details, "count"), &c); err == nil && c > 0 {
			l.crashes += c
		}
	}
	ids := make([]string, 0, len(loops))
	for id := range loops {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareNatural)
	out := make([]PatternMatch, 0, len(ids))
	for _, id := range ids {
		l := loops[id]
		who := id
		if who == "" {
			who = "an unnamed agent"
		}
		detail := "the supervisor of " + who + " stopped on a crash loop"
		if l.n > 1 {
			detail += fmt.Sprintf(" %d times", l.n)
		}
		if l.crashes > 0 {
			detail += fmt.Sprintf(" (%d crashes)", l.crashes)
		}
		detail += ": " + l.what
		count := l.crashes
		if count == 0 {
			count = l.n
		}
		var agents []string
		if id != "" {
			agents = []string{id}
		}
		out = append(out, PatternMatch{Pattern: PatternCrashLoop, Tasks: sortedSet(l.tasks), Agents: agents, Count: count, Detail: detail})
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

// OneLine joins the lines and runs of spaces of s.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// BreakerReport renders matches as the circuit breaker's report: a count
// line, then each match with its evidence: what was found, its severity
// class, the tasks, agents and anomalies involved. It states evidence, not
// remedies: the breaker observes, the human decides.
func BreakerReport(matches []PatternMatch) string {
	return breakerReport(matches, func(b *strings.Builder, m PatternMatch) {
		if len(m.Anomalies) > 0 {
			fmt.Fprintf(b, "  anomalies: %s\n", strings.Join(m.Anomalies, ", "))
		}
		if m.Severity != "" {
			fmt.Fprintf(b, "  severity: %s\n", m.Severity)
		}
	})
}

// breakerReport renders a count line, then each match with its tasks and
// agents, and what tail adds.
func breakerReport(matches []PatternMatch, tail func(b *strings.Builder, m PatternMatch)) string {
	var b strings.Builder
	if len(matches) == 0 {
		b.WriteString("Circuit breaker: no pattern matched\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Circuit breaker: %s matched\n\n", Plural(len(matches), "pattern"))
	for _, m := range matches {
		fmt.Fprintf(&b, "- %s: %s\n", m.Pattern, m.Detail)
		var who []string
		if len(m.Tasks) > 0 {
			who = append(who, "tasks: "+strings.Join(m.Tasks, ", "))
		}
		if len(m.Agents) > 0 {
			who = append(who, "agents: "+strings.Join(m.Agents, ", "))
		}
		if len(who) > 0 {
			fmt.Fprintf(&b, "  %s\n", strings.Join(who, "; "))
		}
		tail(&b, m)
	}
	return b.String()
}

// BreakerReportFile is the report a trigger writes for the human: when and
// what tripped, the evidence of every match, the sprint's anomalies as
// they are on the board, and the decisions left to the human.
func BreakerReportFile(st *State, matches []PatternMatch, at string) string {
	var b strings.Builder
	b.WriteString("# Circuit breaker report\n\n")
	fmt.Fprintf(&b, "Triggered: %s\n", at)
	if len(matches) > 0 {
		fmt.Fprintf(&b, "Pattern: %s\nSeverity: %s\n", matches[0].Pattern, matches[0].Severity)
	}
	if st != nil {
		fmt.Fprintf(&b, "Sprint: %s (goal %s)\n", st.Sprint.ID, st.Goal.ID)
	}
	b.WriteString("\n## Trigger evidence\n\n")
	b.WriteString(BreakerReport(matches))
	b.WriteString("\n## Anomalies (raw)\n\n")
	var raw []*Anomaly
	if st != nil {
		in := sprintWindow(st)
		for _, a := range st.Anomalies {
			if a != nil && in.has(a.Timestamp) {
				raw = append(raw, a)
			}
		}
	}
	if len(raw) == 0 {
		b.WriteString("None in this sprint.\n")
	} else if y, err := EncodeYAML(raw); err == nil {
		b.WriteString("```yaml\n")
		b.Write(y)
		b.WriteString("```\n")
	}
	b.WriteString("\n## Human decision required\n\n")
	for _, c := range []string{
		"Acknowledge the report",
		"Confirm the severity assessment",
		"Determine the remediation",
		"Record the decision and lift the checkpoint: `git liza analyze --resolve TEXT`",
	} {
		fmt.Fprintf(&b, "- [ ] %s\n", c)
	}
	return b.String()
}

// PatternNames lists the distinct pattern names of matches, in order.
func PatternNames(matches []PatternMatch) []string {
	var names []string
	for _, m := range matches {
		if !slices.Contains(names, m.Pattern) {
			names = append(names, m.Pattern)
		}
	}
	return names
}

// StorePatterns renders matches in the form circuit_breaker.patterns holds
// them once read back from YAML.
func StorePatterns(matches []PatternMatch) []any {
	if len(matches) == 0 {
		return nil
	}
	b, err := EncodeYAML(matches)
	if err != nil {
		return nil
	}
	var out []any
	if DecodeYAML(b, &out) != nil {
		return nil
	}
	return out
}

// SamePatterns reports whether stored, as read from
// circuit_breaker.patterns, holds exactly matches.
func SamePatterns(stored []any, matches []PatternMatch) bool {
	a, err1 := EncodeYAML(stored)
	b, err2 := EncodeYAML(StorePatterns(matches))
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// Plural counts n of word: "1 pattern", "2 patterns".
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
