package contracts

import (
	"fmt"
	"strings"
)

// GoalCompleted reports whether the goal's status is COMPLETED: a goal in
// that state takes no new work (rule set RulesGoalClosed) until goal new
// starts the next one.
func GoalCompleted(g Goal) bool { return g.Status == "COMPLETED" }

// GoalClosedError is the refusal of new work (what: "new tasks", "claims")
// on goal g, which is COMPLETED.
func GoalClosedError(g Goal, what string) error {
	return Invalidf("goal %s is COMPLETED: %s are refused; git liza goal new GOAL starts the next goal", g.ID, what)
}

// maxLiveNamed is how many live tasks a refused goal complete names.
const maxLiveNamed = 10

// LiveTasksError is the refusal to complete goal g while the tasks named
// in live (each "ID (STATUS)", in id order) are not terminal; it names at
// most maxLiveNamed of them, and how many more there are.
func LiveTasksError(g Goal, live []string) error {
	list := live
	more := ""
	if len(list) > maxLiveNamed {
		list, more = list[:maxLiveNamed], fmt.Sprintf(" and %d more", len(live)-maxLiveNamed)
	}
	return Invalidf("goal %s has live tasks: %s%s; each must be MERGED, SUPERSEDED or ABANDONED first", g.ID, strings.Join(list, ", "), more)
}

// LateWork lists the live tasks that are not terminal while the goal is
// COMPLETED: work an older git-liza let in after completion (it took task
// add and claim on a completed goal), or that an edited file holds. The
// seed's validator does not look at the goal's status, and a board that
// holds such tasks must stay readable so that they can be finished or
// abandoned: validate warns of them. No operation under RulesGoalClosed
// makes one, and an import under those rules may not bring one in.
func LateWork(s *State) []Problem {
	if s == nil || !GoalCompleted(s.Goal) {
		return nil
	}
	var ps problems
	for _, t := range s.Tasks {
		if t == nil || t.Status.Terminal() {
			continue
		}
		ps.addf("tasks["+t.ID+"]", "%s, but goal %s is COMPLETED (a completed goal takes no new work: finish or abandon the task before git liza goal new)", t.Status, s.Goal.ID)
	}
	return ps
}
