package ops

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// GoalNewRequest starts the next goal on the board.
type GoalNewRequest struct {
	Call
	Goal string
	// Spec is the path of the goal's vision document, if any.
	Spec string
}

// GoalNewResult is what starting a goal did.
type GoalNewResult struct {
	Goal     string   `json:"goal"`
	Previous string   `json:"previous"`
	Sprint   string   `json:"sprint"`
	Archived []string `json:"archived"`
	Written  `json:"-"`
}

// GoalNew starts the next goal and its sprint on the same board once the
// current goal is COMPLETED (planner or human): the completed goal's tasks
// go to the archive, where they stay (show --all, export), the new goal
// and sprint take the next numbers, and goal.alignment_history, the
// anomalies, notes and the audit log carry on. A goal that is not
// completed is refused: finish or abandon its tasks first.
func (s *Service) GoalNew(ctx context.Context, r GoalNewRequest) (*GoalNewResult, error) {
	goal, spec := strings.TrimSpace(r.Goal), r.Spec
	if goal == "" {
		return nil, contracts.Invalidf("the goal is empty")
	}
	return writeAs[GoalNewResult](ctx, s, r.Call, kindGoal, goalInput{Goal: goal, Spec: spec}, func(tx *cas.Tx) error {
		// The vision document must be in the repository: a check of git,
		// which the live write makes.
		return s.checkSpecIn(tx, spec)
	})
}

// goalInput is what goal new records.
type goalInput struct {
	Goal string `json:"goal"`
	Spec string `json:"spec,omitempty"`
}

var kindGoal = since(contracts.RulesWhole, def("goal", contracts.OpGoal, func(tx *cas.Tx, in *goalInput) (any, error) {
	goal := strings.TrimSpace(in.Goal)
	if goal == "" {
		return nil, contracts.Invalidf("the goal is empty")
	}
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	if m.Goal.Status != "COMPLETED" {
		return nil, contracts.Invalidf("goal %s is %s: the next goal starts once it is COMPLETED (git liza goal complete, once every task is MERGED, SUPERSEDED or ABANDONED)", m.Goal.ID, m.Goal.Status)
	}
	idx, err := tx.Index()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(idx))
	for id := range idx {
		ids = append(ids, id)
	}
	contracts.SortIDs(ids) // the first live task in id order is named
	for _, id := range ids {
		if sum := idx[id]; !sum.Status.Terminal() {
			return nil, contracts.Invalidf("task %s is %s: goal %s still has work on the board", id, sum.Status, m.Goal.ID)
		}
	}
	for _, id := range ids {
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		tx.ArchiveTask(t)
	}
	now := tx.NowString()
	prev := m.Goal
	m.Goal = contracts.Goal{ID: nextID(prev.ID, "goal"), Description: goal, SpecRef: in.Spec, Status: "IN_PROGRESS", Created: now}
	if tx.Rules >= contracts.RulesGoalSpend {
		// The next goal has spent nothing: the sessions the board
		// records are the goals' before, the agents' without a task too.
		m.Goal.Spend = &contracts.Sum{}
		if err := eachAgent(tx, func(a *contracts.Agent) bool {
			was := a.GoalSpend != nil
			a.GoalSpend = nil
			return was
		}); err != nil {
			return nil, err
		}
	}
	m.Sprint = contracts.Sprint{
		ID: nextID(m.Sprint.ID, "sprint"), GoalRef: m.Goal.ID, Status: "IN_PROGRESS",
		Scope:    contracts.SprintScope{Planned: contracts.StringList{}, Stretch: contracts.StringList{}},
		Timeline: contracts.SprintTimeline{Started: now},
	}
	tx.PutMeta(m)
	tx.UnplanAll()
	if _, err := tx.Append(cas.ListAlignment, &contracts.AlignmentEntry{
		Time: now, Event: "goal_started", Agent: contracts.ActorName(tx.Actor),
		Reason: fmt.Sprintf("%s after %s (%s), completed %s", m.Goal.ID, prev.ID, contracts.OneLine(prev.Description), prev.Completed),
	}); err != nil {
		return nil, err
	}
	tx.Describe(fmt.Sprintf("goal %s: %s%s", m.Goal.ID, contracts.FirstLine(goal), by(tx.Actor)), "")
	return GoalNewResult{Goal: m.Goal.ID, Previous: prev.ID, Sprint: m.Sprint.ID, Archived: append([]string{}, ids...)}, nil
}))

// checkGoalOpen refuses what (new work: "new tasks", "claims") while the
// goal is COMPLETED, under the rules that hold a completed goal closed
// (contracts.RulesGoalClosed): the work of a completed goal is done, and
// what comes next is the next goal's (goal new). Commits an older
// git-liza made on a completed goal replay under their own rules.
func checkGoalOpen(tx *cas.Tx, what string) error {
	if tx.Rules < contracts.RulesGoalClosed {
		return nil
	}
	m, err := tx.Meta()
	if err != nil {
		return err
	}
	if contracts.GoalCompleted(m.Goal) {
		return contracts.GoalClosedError(m.Goal, what)
	}
	return nil
}

// nextID is the id after id in a kind-N sequence: goal-1 -> goal-2. An id
// that does not end in a number gets "-2".
func nextID(id, kind string) string {
	if id == "" {
		return kind + "-1"
	}
	i := strings.LastIndexByte(id, '-')
	if i >= 0 {
		if n, err := strconv.Atoi(id[i+1:]); err == nil && n >= 0 {
			return fmt.Sprintf("%s-%d", id[:i], n+1)
		}
	}
	return id + "-2"
}
