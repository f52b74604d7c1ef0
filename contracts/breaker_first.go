package contracts

import (
	"fmt"
	"strings"
)

// What the circuit breaker was under the first rules (RulesFirst): the
// seed 000 conditions alone, without the anomaly patterns or severity
// classes, and a report that ended each match with a next step. The
// commits an older git-liza made when its breaker tripped are replayed
// with these, so that they still verify.

// newerPatterns are the patterns the first rules did not have.
var newerPatterns = map[string]bool{
	PatternRetryCluster: true, PatternDebtAccumulation: true, PatternAssumptionCascade: true,
	PatternSpecGapCluster: true, PatternWorkaround: true, PatternExternalOutage: true,
}

// AnalyzeFirst is Analyze under the first rules.
func AnalyzeFirst(st *State, problems []string) []PatternMatch {
	var out []PatternMatch
	for _, m := range Analyze(st, problems) {
		if newerPatterns[m.Pattern] {
			continue
		}
		m.Severity = ""
		out = append(out, m)
	}
	return out
}

// firstActions said what a person does about each pattern.
var firstActions = map[string]string{
	PatternRepeatedRejection:    "clarify the spec or rescope the task (git liza note --for ID, git liza task supersede) before another review cycle",
	PatternCrashLoop:            "read the agent's log and fix its environment before restarting its supervisor",
	PatternInvalidState:         "repair the state: git liza export > state.yaml, fix it, git liza import state.yaml",
	PatternIntegrationCascade:   "check the integration branch and the overlap between the failed tasks before merging again",
	PatternHypothesisExhaustion: "replan: supersede or rescope the exhausted tasks (git liza task supersede)",
	PatternBlockedMajority:      "answer the blocked tasks' questions (git liza note --for ID), then git liza task unblock ID",
}

// BreakerReportFirst is BreakerReport under the first rules.
func BreakerReportFirst(matches []PatternMatch) string {
	return breakerReport(matches, func(b *strings.Builder, m PatternMatch) {
		if a := firstActions[m.Pattern]; a != "" {
			fmt.Fprintf(b, "  next: %s\n", a)
		}
	})
}
