package contracts

// The checks of the board's entries other than tasks: agents, anomalies,
// discoveries; and of branch names.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

func validateAgents(ps *problems, agents map[string]*Agent) {
	for _, id := range slices.Sorted(maps.Keys(agents)) {
		*ps = append(*ps, ValidateAgent(id, agents[id])...)
	}
}

// ValidateAgent checks one entry of the agents section: its id, role, status
// and timestamps.
func ValidateAgent(id string, a *Agent) []Problem {
	var ps problems
	where := "agents[" + id + "]"
	if a == nil {
		ps.add(where, "empty agent entry")
		return ps
	}
	if role, err := ParseAgentID(id); err != nil {
		ps.add(where, err.Error())
	} else if Role(a.Role) != role {
		ps.addf(where, "role %q does not match the id (want %s)", a.Role, role)
	}
	if !slices.Contains(AgentStatuses, a.Status) {
		ps.addf(where, "unknown status %q (want one of %s)", a.Status, strings.Join(AgentStatuses, ", "))
	}
	switch a.Status {
	case "WORKING", "REVIEWING":
		if a.CurrentTask == "" {
			ps.addf(where, "%s without a current_task", a.Status)
		}
		if a.LeaseExpires == "" {
			ps.addf(where, "%s without a lease_expires", a.Status)
		}
	}
	for _, f := range []struct{ name, value string }{
		{"lease_expires", a.LeaseExpires}, {"heartbeat", a.Heartbeat}, {"started", a.Started},
	} {
		if f.value == "" {
			continue
		}
		if _, err := ParseTime(f.value); err != nil {
			ps.addf(where, "%s: %v", f.name, err)
		}
	}
	if len(a.NotesProcessed) > 0 && Role(a.Role) != RolePlanner {
		ps.add(where, "notes_processed: only a planner processes human notes")
	}
	for _, n := range a.NotesProcessed {
		if n < 1 {
			ps.addf(where, "notes_processed: %d is not a note number (notes are numbered from 1)", n)
		}
	}
	if a.Spend != nil {
		if msg := CheckUsage(*a.Spend, MaxSpendTokens, MaxSpendUSD); msg != "" {
			ps.addf(where, "spend: %s", msg)
		}
	}
	if a.GoalSpend != nil {
		if msg := CheckUsage(Usage(*a.GoalSpend), MaxSpendTokens, MaxSpendUSD); msg != "" {
			ps.addf(where, "goal_spend: %s", msg)
		}
	}
	return ps
}

func validateAnomalies(ps *problems, anomalies []*Anomaly, byID map[string]*Task) {
	seen := map[string]bool{}
	for i, a := range anomalies {
		where := entryWhere("anomalies", i, a.id())
		*ps = append(*ps, validateAnomaly(where, a)...)
		if a == nil {
			continue
		}
		if a.ID != "" {
			if seen[a.ID] {
				ps.addf(where, "duplicate anomaly id %s", a.ID)
			}
			seen[a.ID] = true
		}
		if a.TaskID != "" && byID[a.TaskID] == nil {
			ps.addf(where, "task_id %s names no task", a.TaskID)
		}
	}
}

// ValidateAnomaly checks one anomaly on its own: its type is known and its
// required details are present. Whether its id is unique and its task exists
// depends on the rest of the state; Validate checks those.
func ValidateAnomaly(a *Anomaly) []Problem {
	return validateAnomaly(entryWhere("anomalies", -1, a.id()), a)
}

func validateAnomaly(where string, a *Anomaly) []Problem {
	var ps problems
	if a == nil {
		ps.add(where, "empty anomaly entry")
		return ps
	}
	if t, ok := AnomalyTypes[a.Type]; !ok {
		ps.addf(where, "unknown anomaly type %q", a.Type)
	} else if missing := missingDetails(a, t); len(missing) > 0 {
		ps.addf(where, "%s anomaly lacks details %s", a.Type, strings.Join(missing, ", "))
	}
	return ps
}

func (a *Anomaly) id() string {
	if a == nil {
		return ""
	}
	return a.ID
}

func validateDiscovered(ps *problems, discovered []*Discovery) {
	for i, d := range discovered {
		*ps = append(*ps, validateDiscovery(entryWhere("discovered", i, d.id()), d)...)
	}
}

// ValidateDiscovery checks one entry of the discovered section: its
// severity and urgency.
func ValidateDiscovery(d *Discovery) []Problem {
	return validateDiscovery(entryWhere("discovered", -1, d.id()), d)
}

func validateDiscovery(where string, d *Discovery) []Problem {
	var ps problems
	if d == nil {
		ps.add(where, "empty discovery entry")
		return ps
	}
	if d.Severity != "" && !slices.Contains(Severities, d.Severity) {
		ps.addf(where, "unknown severity %q (want one of %s)", d.Severity, strings.Join(Severities, ", "))
	}
	if d.Urgency != "" && !slices.Contains(Urgencies, d.Urgency) {
		ps.addf(where, "unknown urgency %q (want one of %s)", d.Urgency, strings.Join(Urgencies, ", "))
	}
	return ps
}

func (d *Discovery) id() string {
	if d == nil {
		return ""
	}
	return d.ID
}

// entryWhere names an entry of a list section by its id, else by its index
// (i < 0: unknown index).
func entryWhere(section string, i int, id string) string {
	switch {
	case id != "":
		return section + "[" + id + "]"
	case i >= 0:
		return fmt.Sprintf("%s[#%d]", section, i)
	}
	return section + "[]"
}

// ValidBranch checks that name is usable as a git branch name, following
// the rules of git check-ref-format.
func ValidBranch(name string) error {
	bad := func(why string) error {
		return Invalidf("invalid branch name %q: %s", name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case name == "@":
		return bad(`"@" is reserved`)
	case strings.HasPrefix(name, "-"):
		return bad("starts with a dash")
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case strings.Contains(name, "@{"):
		return bad(`contains "@{"`)
	case strings.HasSuffix(name, "."):
		return bad(`ends with "."`)
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`~^:?*[\`, r) {
			return bad(fmt.Sprintf("contains %q", r))
		}
	}
	for _, part := range strings.Split(name, "/") {
		switch {
		case part == "":
			return bad("has an empty path component")
		case strings.HasPrefix(part, "."):
			return bad(`has a component starting with "."`)
		case strings.HasSuffix(part, ".lock"):
			return bad(`has a component ending with ".lock"`)
		}
	}
	return nil
}
