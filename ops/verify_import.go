package ops

// The verifier's checks of an import, the operator's repair.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// checkImport checks what an import may not do, its effect being free: the
// new state must validate, and against the parent state every task must
// still be there (live or archived) with its history as it was plus new
// events, a finished task must be as it was, a task's status may only move
// as the state machine allows, and the append-only lists (anomalies,
// notes, discoveries, goal alignment) may only grow. Under RulesImport it
// may not change config.integration_branch, and its edits of live tasks
// and of the config must carry their records (see importKeeps), and its
// request records are the one an import writes, its own, if any.
func (v *Verifier) checkImport(parent *cas.Snapshot, c *refstore.Commit, rec Recorded) error {
	rules := rec.Rules
	snap, err := cas.ReadSnapshot(v.Repo, c.ID)
	if err != nil {
		return err
	}
	st, err := snap.LoadWithin(cas.MaxImport)
	if err != nil {
		return err
	}
	ps := contracts.ValidateUnder(st, rules)
	if rules >= contracts.RulesWhole {
		ps = append(ps, contracts.Leftovers(st)...)
	}
	if rules >= contracts.RulesGoalClosed {
		ps = append(ps, contracts.LateWork(st)...)
	}
	if len(ps) > 0 {
		return fmt.Errorf("the imported state does not validate: %s", ps[0])
	}
	if err := cas.IndexesMatch(snap, st); err != nil {
		return fmt.Errorf("its indexes are not what an import writes: %v", contracts.FirstLine(err.Error()))
	}
	if rules >= contracts.RulesImport {
		if err := cas.CheckImportRequests(snap, cas.Op{Name: rec.Op, Agent: rec.Agent, Request: rec.Request, Kind: rec.Kind, Input: rec.Input}); err != nil {
			return err
		}
	}
	if !parent.Exists() {
		return nil
	}
	prev, err := parent.Load()
	if err != nil {
		return err
	}
	return importKeeps(prev, st, rules, contracts.FormatTime(c.Author.When))
}

// importKeeps says what an import of next over prev, made at now under
// rules, would lose or leave unrecorded. The local import runs it before it
// commits, the verifier on every import commit.
func importKeeps(prev, next *contracts.State, rules int, now string) error {
	recorded := rules >= contracts.RulesImport
	// What a guarded remote protects is named by the state: an import that
	// renamed the integration branch would leave the old one unguarded and
	// have the new one created holding whatever it points at.
	if was, is := prev.Config.IntegrationBranch, next.Config.IntegrationBranch; recorded && was != is {
		return fmt.Errorf("the import changes config.integration_branch from %s to %s: what the guard protects does not change by import", was, is)
	}
	tasks := map[string]*contracts.Task{}
	for _, t := range append(slices.Clone(next.Tasks), next.Archive...) {
		tasks[t.ID] = t
	}
	for _, old := range append(slices.Clone(prev.Tasks), prev.Archive...) {
		t := tasks[old.ID]
		if t == nil {
			return fmt.Errorf("the import deletes task %s", old.ID)
		}
		if len(t.History) < len(old.History) {
			return fmt.Errorf("the import truncates the history of task %s", old.ID)
		}
		for i, ev := range old.History {
			if !sameEvent(ev, t.History[i]) {
				return fmt.Errorf("the import edits the history of task %s (event %d)", old.ID, i+1)
			}
		}
		if old.Status.Terminal() {
			a, _ := contracts.MarshalTask(old)
			b, _ := contracts.MarshalTask(t)
			if string(a) != string(b) {
				return fmt.Errorf("the import rewrites task %s, which is %s", old.ID, old.Status)
			}
		}
		if t.Status != old.Status && (!contracts.CanTransition(old.Status, t.Status) || !operatorMove(old.Status, t.Status)) {
			return fmt.Errorf("the import moves task %s from %s to %s, which the state machine forbids to the operator", old.ID, old.Status, t.Status)
		}
		for _, f := range []struct{ name, was, now string }{
			{"approved_by", old.ApprovedBy, t.ApprovedBy}, {"review_commit", old.ReviewCommit, t.ReviewCommit},
			{"merge_commit", old.MergeCommit, t.MergeCommit}, {"base_commit", old.BaseCommit, t.BaseCommit},
		} {
			if f.now != f.was && f.now != "" {
				return fmt.Errorf("the import sets %s of task %s: an agent's step records it", f.name, old.ID)
			}
		}
		if t.AssignedTo != old.AssignedTo && t.AssignedTo != "" || t.ReviewingBy != old.ReviewingBy && t.ReviewingBy != "" {
			return fmt.Errorf("the import assigns task %s: a claim or a review does", old.ID)
		}
		if ev := importEdit(old, t, now); recorded && ev != nil && !old.Status.Terminal() {
			if n := len(t.History); n == len(old.History) || !sameEvent(t.History[n-1], ev) {
				return fmt.Errorf("the import edits task %s (%s) without recording it in the task's history", old.ID, strings.Join(slices.Sorted(maps.Keys(ev.Extra["changes"].(contracts.Extra))), ", "))
			}
		}
		delete(tasks, old.ID)
	}
	for id, t := range tasks {
		if t.Status != contracts.Draft && t.Status != contracts.Unclaimed || t.AssignedTo != "" || t.ApprovedBy != "" || t.ReviewCommit != "" || t.MergeCommit != "" {
			return fmt.Errorf("the import adds task %s as %s with an agent's work: new tasks come as DRAFT or UNCLAIMED", id, t.Status)
		}
	}
	for _, l := range []struct {
		name      string
		old, next int
	}{
		{"goal.alignment_history", len(prev.Goal.AlignmentHistory), len(next.Goal.AlignmentHistory)},
		{"anomalies", len(prev.Anomalies), len(next.Anomalies)},
		{"discovered", len(prev.Discovered), len(next.Discovered)},
		{"human_notes", len(prev.HumanNotes), len(next.HumanNotes)},
		{"spec_changes", len(prev.SpecChanges), len(next.SpecChanges)},
	} {
		if l.next < l.old {
			return fmt.Errorf("the import drops entries of %s", l.name)
		}
	}
	if err := spendKept(prev, next); err != nil {
		return err
	}
	if rules >= contracts.RulesGoalSpend && next.Goal.ID == prev.Goal.ID {
		if err := goalSpendKept(prev, next); err != nil {
			return err
		}
	}
	if e := importConfig(prev.Config, next.Config, now); recorded && e != nil {
		if n := len(next.Goal.AlignmentHistory); n == len(prev.Goal.AlignmentHistory) || !sameYAML(next.Goal.AlignmentHistory[n-1], e) {
			return fmt.Errorf("the import changes the config (%s) without recording it in the goal's alignment history", strings.Join(slices.Sorted(maps.Keys(e.Extra["changes"].(contracts.Extra))), ", "))
		}
	}
	for i, e := range prev.Goal.AlignmentHistory {
		if recorded && !sameYAML(e, next.Goal.AlignmentHistory[i]) {
			return fmt.Errorf("the import edits entry %d of goal.alignment_history", i+1)
		}
	}
	for i, a := range prev.Anomalies {
		if !sameYAML(a, next.Anomalies[i]) {
			return fmt.Errorf("the import edits anomaly %s", a.ID)
		}
	}
	for i, n := range prev.HumanNotes {
		if !sameYAML(n, next.HumanNotes[i]) {
			return fmt.Errorf("the import edits human note %d", i+1)
		}
	}
	return nil
}

// spendKept: what an agent's task-less sessions spent (its entry's spend,
// which only grows) is not lowered or dropped by an import. Task spend is
// in the histories, which an import may not edit; the goal's own figure
// is kept by importKeeps.
func spendKept(prev, next *contracts.State) error {
	for _, id := range slices.Sorted(maps.Keys(prev.Agents)) {
		was := prev.Agents[id]
		if was == nil || was.Spend == nil {
			continue
		}
		var now contracts.Usage
		if a := next.Agents[id]; a != nil && a.Spend != nil {
			now = *a.Spend
		}
		if lower(now, *was.Spend) {
			return fmt.Errorf("the import lowers the spend of %s", id)
		}
	}
	return nil
}

// goalSpendKept: the goal's own figure, and each agent's part of it, are
// not lowered or dropped by an import of the same goal.
func goalSpendKept(prev, next *contracts.State) error {
	kept := func(was, now *contracts.Sum) bool {
		return was == nil || now != nil && !lower(contracts.Usage(*now), contracts.Usage(*was))
	}
	if !kept(prev.Goal.Spend, next.Goal.Spend) {
		return fmt.Errorf("the import lowers the spend of goal %s", prev.Goal.ID)
	}
	for _, id := range slices.Sorted(maps.Keys(prev.Agents)) {
		var now *contracts.Sum
		if a := next.Agents[id]; a != nil {
			now = a.GoalSpend
		}
		if was := prev.Agents[id]; was != nil && !kept(was.GoalSpend, now) {
			return fmt.Errorf("the import lowers the spend of %s in goal %s", id, prev.Goal.ID)
		}
	}
	return nil
}

// lower reports whether now counts less than was of anything.
func lower(now, was contracts.Usage) bool {
	return now.InputTokens < was.InputTokens || now.OutputTokens < was.OutputTokens ||
		now.CacheReadTokens < was.CacheReadTokens || now.CacheWriteTokens < was.CacheWriteTokens ||
		now.CostUSD < was.CostUSD
}

// operatorMove reports whether a status change is one the human operator
// makes with a lever (finalize, block, unblock, release, supersede,
// abandon), not an agent's step (claim, submit, verdict, merge), which an
// import must not fake.
func operatorMove(from, to contracts.Status) bool {
	switch to {
	case contracts.Blocked, contracts.Superseded, contracts.Abandoned:
		return true
	case contracts.Unclaimed:
		return from == contracts.Draft || from == contracts.Blocked || from == contracts.Claimed
	}
	return false
}

func sameEvent(a, b *contracts.HistoryEvent) bool { return sameYAML(a, b) }

func sameYAML(a, b any) bool {
	x, err1 := contracts.EncodeYAML(a)
	y, err2 := contracts.EncodeYAML(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
