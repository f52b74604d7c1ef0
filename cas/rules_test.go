package cas

import (
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// putAgent is an op, under rules, that puts an agent entry and the tasks.
func putAgent(rules int, id string, a *contracts.Agent, ts ...*contracts.Task) Op {
	return Op{Name: contracts.OpRegister, Agent: id, Rules: rules, Apply: func(tx *Tx) (any, error) {
		for _, t := range ts {
			tx.PutTask(t)
		}
		tx.PutAgent(id, a)
		tx.Describe("register "+id, "")
		return nil, nil
	}}
}

// TestRulesOfTheWholeContract: what the current rules add to the update
// loop's checks holds for an operation made under them, and not for one
// made under the first rules, which an older git-liza made and whose
// replay must still verify: an IDLE agent keeping a lease, an agent WORKING
// on a task it does not hold, a task taken from its holder whose agent
// entry still says it works on it, a coder taking a task beside one that
// awaits review.
func TestRulesOfTheWholeContract(t *testing.T) {
	const lease = "2025-01-10T10:00:00Z"
	idle := &contracts.Agent{Role: "coder", Status: "IDLE", LeaseExpires: lease}
	stray := &contracts.Agent{Role: "coder", Status: "WORKING", CurrentTask: "task-1", LeaseExpires: lease}
	review := func(id, coder string) *contracts.Task {
		t := claimed(id, coder)
		t.Status, t.ReviewCommit = contracts.ReadyForReview, "def456"
		return t
	}
	for _, c := range []struct {
		name  string
		setup []Op
		op    func(rules int) Op
		want  string
	}{
		{"an IDLE agent keeping a lease", nil,
			func(r int) Op { return putAgent(r, "coder-1", idle) }, "IDLE but keeps a lease_expires"},
		{"an agent WORKING on a task it does not hold", []Op{putTasks(claimed("task-1", "coder-2"))},
			func(r int) Op { return putAgent(r, "coder-1", stray) }, "WORKING on task-1, which it does not hold (CLAIMED by coder-2)"},
		{"a task taken from its holder, whose entry stays", []Op{putAgent(contracts.RulesFirst, "coder-1", stray, claimed("task-1", "coder-1"))},
			func(r int) Op {
				op := putTasks(claimed("task-1", "coder-2"))
				op.Rules = r
				return op
			}, "agents[coder-1]: WORKING on task-1, which it does not hold (CLAIMED by coder-2)"},
		{"a second task beside one awaiting review", []Op{putTasks(review("task-1", "coder-1"))},
			func(r int) Op {
				op := putTasks(claimed("task-2", "coder-1"))
				op.Rules = r
				return op
			}, "coder-1 also holds READY_FOR_REVIEW task task-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := initStore(t)
			for _, op := range c.setup {
				mustUpdate(t, s, op)
			}
			refused(t, s, c.op(contracts.RulesWhole), c.want)
			mustUpdate(t, s, c.op(contracts.RulesFirst))
		})
	}

	// A board that holds such a leftover is not stuck: a coder with a
	// CLAIMED task beside one awaiting review renews and submits it under
	// the current rules; only a new hold is checked.
	s := initStore(t)
	mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Rules: contracts.RulesFirst, Apply: func(tx *Tx) (any, error) {
		tx.PutTask(review("task-1", "coder-1"))
		tx.PutTask(claimed("task-2", "coder-1"))
		tx.Describe("add", "")
		return nil, nil
	}})
	renewed := claimed("task-2", "coder-1")
	renewed.LeaseExpires = "2025-01-10T11:00:00Z"
	mustUpdate(t, s, putTasks(renewed))
	mustUpdate(t, s, putTasks(review("task-2", "coder-1")))
}

// TestRulesTrailer: a recorded operation says which rules it followed; the
// first rules, which older commits followed, leave no trailer.
func TestRulesTrailer(t *testing.T) {
	s := initStore(t)
	for _, c := range []struct {
		rules int
		want  string
	}{{0, "Liza-Rules: 8"}, {contracts.RulesSupervisorGone, "Liza-Rules: 8"}, {contracts.RulesGoalSpend, "Liza-Rules: 7"}, {contracts.RulesQueueGroups, "Liza-Rules: 6"}, {contracts.RulesClaimIndex, "Liza-Rules: 5"}, {contracts.RulesLastMile, "Liza-Rules: 4"}, {contracts.RulesContained, "Liza-Rules: 3"}, {contracts.RulesWhole, "Liza-Rules: 2"}, {contracts.RulesFirst, ""}} {
		op := noteOp("n")
		op.Kind, op.Input, op.Rules = "note", []byte(`{}`), c.rules
		res := mustUpdate(t, s, op)
		got := Trailers(readCommit(t, s, res.Commit).Message)["Liza-Rules"]
		if want := c.want; want != "" && "Liza-Rules: "+got != want || want == "" && got != "" {
			t.Errorf("rules %d: Liza-Rules %q, want %q", c.rules, got, c.want)
		}
	}
}
