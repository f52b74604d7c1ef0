package contracts

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

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
