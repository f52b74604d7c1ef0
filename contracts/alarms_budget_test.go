package contracts

import (
	"strings"
	"testing"
	"time"
)

// A budget spent past its warning share raises a warning, past all of it
// a critical alarm, under one key as it escalates; the goal counts the
// planner's task-less sessions.
func TestBudgetAlarms(t *testing.T) {
	spent := func(n int64) []*HistoryEvent {
		return []*HistoryEvent{{Event: "session_ended", Agent: "coder-1", Usage: &Usage{InputTokens: n}}}
	}
	st := &State{
		Config: Config{Budgets: &Budgets{TaskTokens: 10000, GoalTokens: 100000, AgentTokens: 50000}},
		Agents: map[string]*Agent{"planner-1": {Spend: &Usage{InputTokens: 79000}}, "coder-1": {}},
		Tasks: []*Task{
			{ID: "t3", Status: Claimed, History: spent(8200)},
			{ID: "t4", Status: Unclaimed, History: spent(1000)},
			{ID: "t5", Status: Merged, History: spent(9900)},
		},
	}
	msgs := func() map[string]string {
		out := map[string]string{}
		for _, a := range Alarms(st, AlarmInput{Now: time.Now()}) {
			if strings.HasPrefix(a.Key, "budget/") {
				out[a.Key] = a.Level + " " + a.Message
			}
		}
		return out
	}
	got := msgs()
	want := map[string]string{
		"budget/task_tokens/t3":         "warning ⚠️ BUDGET WARNING: task t3 at 82% of task_tokens (8,200 tokens of its 10,000)",
		"budget/agent_tokens/planner-1": "critical 🚨 BUDGET EXCEEDED: agent planner-1 spent 79,000 tokens of its 50,000 (agent_tokens)",
		"budget/goal_tokens":            "critical 🚨 BUDGET EXCEEDED: goal spent 98,100 tokens of its 100,000 (goal_tokens)",
	}
	want["budget/goal_tokens"] = "warning ⚠️ BUDGET WARNING: goal at 98% of goal_tokens (98,100 tokens of its 100,000)"
	if len(got) != len(want) {
		t.Errorf("budget alarms:\n%v\nwant\n%v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got %q\nwant %q", k, got[k], w)
		}
	}
	st.Tasks[0].History = spent(12400)
	if got := msgs()["budget/task_tokens/t3"]; got != "critical 🚨 BUDGET EXCEEDED: task t3 spent 12,400 tokens of its 10,000 (task_tokens)" {
		t.Errorf("escalated: %q", got)
	}
	st.Tasks[0].History = spent(8200)
	st.Config.Budgets.WarnShare = 0.99
	if _, ok := msgs()["budget/goal_tokens"]; ok {
		t.Errorf("a goal at 98%% warns under a warn share of 99%%")
	}
}
