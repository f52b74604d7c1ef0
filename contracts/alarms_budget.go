package contracts

// budgets adds an alarm for each budget in force that is spent past its
// warning share (BUDGET WARNING) or past all of it (BUDGET EXCEEDED): the
// live tasks', the registered agents' and the goal's, from what the board
// records of each session (a running session counts once it ends).
func (as *alarms) budgets(st *State, cfg Config) {
	b := cfg.Budgets
	if b == nil {
		return
	}
	warn := b.Warn()
	add := func(task string, lines []BudgetLine) {
		for _, l := range lines {
			key := "budget/" + l.Key
			if task != "" {
				key += "/" + task
			} else if l.Of != "goal" {
				key += "/" + l.Of[len("agent "):]
			}
			switch {
			case l.Over():
				as.addKeyed(key, AlarmCritical, "budget_exceeded", task, "BUDGET EXCEEDED: %s spent %s (%s)", l.Of, l.Figures(), l.Key)
			case l.Share() >= warn:
				as.addKeyed(key, AlarmWarning, "budget_warning", task, "BUDGET WARNING: %s at %.0f%% of %s (%s)", l.Of, 100*l.Share(), l.Key, l.Figures())
			}
		}
	}
	for _, t := range st.Tasks {
		if t != nil && !t.Status.Terminal() {
			add(t.ID, TaskBudget(b, t, Usage{}))
		}
	}
	for _, id := range sortedAgentIDs(st) {
		add("", AgentBudget(b, st, id, Usage{}))
	}
	add("", GoalBudget(b, st, Usage{}))
}

// sortedAgentIDs are the registered agents' ids, in order.
func sortedAgentIDs(st *State) []string {
	ids := make([]string, 0, len(st.Agents))
	for id := range st.Agents {
		ids = append(ids, id)
	}
	SortIDs(ids)
	return ids
}
