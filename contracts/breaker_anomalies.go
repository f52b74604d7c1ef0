package contracts

import (
	"fmt"
	"slices"
	"strings"
)

// anomalyPatterns are the original circuit breaker's patterns over the
// anomalies of the sprint, in the order of Analyze's table.
func anomalyPatterns(anomalies []*Anomaly, in window) []PatternMatch {
	byType := map[string][]*Anomaly{}
	for _, a := range anomalies {
		if a != nil && in.has(a.Timestamp) {
			byType[a.Type] = append(byType[a.Type], a)
		}
	}
	var out []PatternMatch

	// retry_cluster: "count(type=retry_loop, similar(error_pattern)) >= 3";
	// the original counts every retry_loop and asks that two share their
	// error_pattern.
	if loops := byType["retry_loop"]; len(loops) >= RetryClusterMin {
		var shared []string
		for _, g := range groupBy(loops, func(a *Anomaly) string { return detailText(a.Details, "error_pattern") }) {
			if len(g.list) >= RetrySimilarMin {
				shared = append(shared, fmt.Sprintf("%q (%d)", g.key, len(g.list)))
			}
		}
		if len(shared) > 0 {
			m := anomalyMatch(PatternRetryCluster, loops)
			m.Detail = fmt.Sprintf("%d retry_loop anomalies in this sprint, with the same error pattern: %s", len(loops), strings.Join(shared, ", "))
			out = append(out, m)
		}
	}

	// debt_accumulation: "count(type=trade_off, debt_created=true) >= 3".
	var debts []*Anomaly
	for _, a := range byType["trade_off"] {
		if detailTrue(a.Details, "debt_created") {
			debts = append(debts, a)
		}
	}
	if len(debts) >= DebtMin {
		m := anomalyMatch(PatternDebtAccumulation, debts)
		var what []string
		for _, a := range debts {
			if w := OneLine(detailText(a.Details, "what")); w != "" {
				what = append(what, fmt.Sprintf("%q", w))
			}
		}
		m.Detail = fmt.Sprintf("%d trade-offs in this sprint created technical debt", len(debts))
		if len(what) > 0 {
			m.Detail += ": " + strings.Join(what, ", ")
		}
		out = append(out, m)
	}

	same := func(pattern string, list []*Anomaly, key func(*Anomaly) string, describe func(g anomalyGroup) string) {
		for _, g := range groupBy(list, key) {
			if len(g.list) >= SameKeyMin {
				m := anomalyMatch(pattern, g.list)
				m.Detail = describe(g)
				out = append(out, m)
			}
		}
	}
	// assumption_cascade: "count(type=assumption_violated, same(assumption)) >= 2".
	same(PatternAssumptionCascade, byType["assumption_violated"],
		func(a *Anomaly) string { return detailText(a.Details, "assumption") },
		func(g anomalyGroup) string {
			return fmt.Sprintf("the assumption %q was violated %d times in this sprint", g.key, len(g.list))
		})
	// spec_gap_cluster: "count(type=spec_ambiguity, same(spec_ref)) >= 2".
	same(PatternSpecGapCluster, byType["spec_ambiguity"],
		func(a *Anomaly) string { return detailText(a.Details, "spec_ref") },
		func(g anomalyGroup) string {
			return fmt.Sprintf("%d spec_ambiguity anomalies in this sprint name the same spec_ref %s", len(g.list), g.key)
		})
	// workaround_pattern: "count(type IN [workaround, trade_off],
	// similar(root_cause)) >= 2"; the original falls back on what.
	var workarounds []*Anomaly
	for _, a := range anomalies {
		if a != nil && in.has(a.Timestamp) && (a.Type == "workaround" || a.Type == "trade_off") {
			workarounds = append(workarounds, a)
		}
	}
	same(PatternWorkaround, workarounds,
		func(a *Anomaly) string {
			if c := detailText(a.Details, "root_cause"); c != "" {
				return c
			}
			return detailText(a.Details, "what")
		},
		func(g anomalyGroup) string {
			return fmt.Sprintf("%d workarounds or trade-offs in this sprint share the root cause %q", len(g.list), g.key)
		})
	// external_service_outage: "count(type=external_blocker,
	// same(blocker_service)) >= 2".
	same(PatternExternalOutage, byType["external_blocker"],
		func(a *Anomaly) string { return detailText(a.Details, "blocker_service") },
		func(g anomalyGroup) string {
			return fmt.Sprintf("%d external_blocker anomalies in this sprint name the same service %s", len(g.list), g.key)
		})
	return out
}

// anomalyGroup is anomalies sharing a key.
type anomalyGroup struct {
	key  string
	list []*Anomaly
}

// groupBy groups anomalies by a key, leaving out those without one, in
// the order each key first appears.
func groupBy(list []*Anomaly, key func(*Anomaly) string) []anomalyGroup {
	var out []anomalyGroup
	at := map[string]int{}
	for _, a := range list {
		k := key(a)
		if k == "" {
			continue
		}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, anomalyGroup{key: k})
		}
		out[i].list = append(out[i].list, a)
	}
	return out
}

// anomalyMatch is a match of pattern made of list: its tasks, the agents
// that logged them and their ids.
func anomalyMatch(pattern string, list []*Anomaly) PatternMatch {
	tasks, agents := map[string]bool{}, map[string]bool{}
	var ids []string
	for _, a := range list {
		if a.TaskID != "" {
			tasks[a.TaskID] = true
		}
		if a.LoggedBy != "" {
			agents[a.LoggedBy] = true
		}
		if a.ID != "" && !slices.Contains(ids, a.ID) {
			ids = append(ids, a.ID)
		}
	}
	return PatternMatch{Pattern: pattern, Tasks: sortedSet(tasks), Agents: sortedSet(agents), Count: len(list), Anomalies: ids}
}

// detailTrue reports whether a detail is the boolean true. A string "true"
// counts too: states written before details were typed kept it so.
func detailTrue(d Extra, key string) bool {
	b, _ := boolean(d[key])
	return b
}
