package cas

import (
	"sort"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// checkTx validates what an operation changed, against the state it read.
// The tip was valid (checkTip), so checking every changed entity and the
// invariants that tie it to others keeps the whole state valid without
// reading what the operation did not touch.
func checkTx(tx *Tx) error {
	paths := make([]string, 0, len(tx.dirty))
	for p := range tx.dirty {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var ps []contracts.Problem
	for _, p := range paths {
		dir, name := splitPath(p)
		id, _ := idOf(name)
		if p != MetaFile {
			if err := safeEntityPath(p); err != nil {
				return err
			}
		}
		switch {
		case p == MetaFile:
			m := tx.cache[p].(*Meta)
			ps = append(ps, contracts.ValidateHeaderUnder(&contracts.State{
				Version: m.Version, Goal: m.Goal, Config: m.Config, Sprint: m.Sprint,
				Control: m.Control, CircuitBreaker: m.CircuitBreaker,
			}, tx.Rules)...)
			more, err := checkStretch(tx, m)
			if err != nil {
				return err
			}
			ps = append(ps, more...)
		case dir == TasksDir || dir == ArchiveDir:
			t := tx.cache[p].(*contracts.Task)
			// Under the whole contract a changed live task is checked
			// against what it was (heldTwice, checkDisplaced).
			whole := dir == TasksDir && tx.Rules >= contracts.RulesWhole
			var old *contracts.Task
			if whole {
				var err error
				if old, err = tx.Snap.Task(t.ID); err != nil {
					return err
				}
			}
			ps = append(ps, checkTask(tx, dir, id, t, old)...)
			if whole {
				more, err := checkDisplaced(tx, t, old)
				if err != nil {
					return err
				}
				ps = append(ps, more...)
			}
		case dir == AgentsDir:
			a := tx.cache[p].(*contracts.Agent)
			ps = append(ps, contracts.ValidateAgent(id, a)...)
			// An agent entry written under the whole contract says what
			// its agent holds; one an older git-liza left may not, until
			// an operation on the agent puts it right (Leftovers).
			if a != nil && tx.Rules >= contracts.RulesWhole {
				var t *contracts.Task
				if a.CurrentTask != "" {
					var err error
					if t, err = tx.Task(a.CurrentTask); err != nil {
						return err
					}
				}
				if msg := contracts.AgentLeftover(id, a, t); msg != "" {
					ps = append(ps, contracts.Problem{Where: "agents[" + id + "]", Msg: msg})
				}
			}
		case dir == ListAnomalies:
			a := tx.cache[p].(*contracts.Anomaly)
			ps = append(ps, contracts.ValidateAnomaly(a)...)
			if dup, err := duplicateAnomaly(tx, p, a.ID); err != nil {
				return err
			} else if dup {
				ps = append(ps, contracts.Problem{Where: "anomalies[" + a.ID + "]", Msg: "duplicate anomaly id"})
			}
			if a.TaskID != "" {
				if live, archived, err := tx.HasTask(a.TaskID); err != nil {
					return err
				} else if !live && !archived {
					ps = append(ps, contracts.Problem{Where: "anomalies[" + a.ID + "]", Msg: "task_id names unknown task " + a.TaskID})
				}
			}
		case dir == ListDiscovered:
			ps = append(ps, contracts.ValidateDiscovery(tx.cache[p].(*contracts.Discovery))...)
		}
	}
	for _, id := range tx.plannedNew {
		if live, archived, err := tx.HasTask(id); err != nil {
			return err
		} else if !live && !archived {
			ps = append(ps, contracts.Problem{Where: "sprint", Msg: "scope.planned names unknown task " + id})
		}
	}
	return problemsError(contracts.CodeInvalid, "", ps)
}

// checkTask validates one changed task and its links to other tasks; old
// is the task as the state read had it (see heldTwice).
func checkTask(tx *Tx, dir, id string, t, old *contracts.Task) []contracts.Problem {
	where := dir + "[" + id + "]"
	ps := contracts.ValidateTaskUnder(t, tx.Rules)
	add := func(msg string) { ps = append(ps, contracts.Problem{Where: where, Msg: msg}) }
	if t.ID != id {
		add("stored under the id " + id + " but says " + t.ID)
	}
	if dir == ArchiveDir && !t.Status.Terminal() {
		add("only MERGED, SUPERSEDED or ABANDONED tasks are archived")
	}
	other := ArchiveDir
	if dir == ArchiveDir {
		other = TasksDir
	}
	if p := EntityFile(other, id); !tx.deleted[p] {
		live, archived, err := tx.HasTask(id)
		if err == nil && live && archived {
			add("the id is used on the board and in the archive")
		}
	}
	for _, d := range t.DependsOn {
		dep, err := tx.AnyTask(d)
		if err != nil {
			add(err.Error())
			continue
		}
		if dep == nil {
			add("depends on unknown task " + d)
			continue
		}
		if t.Status == contracts.Claimed && dep.Status != contracts.Merged {
			add("CLAIMED while its dependency " + d + " is " + string(dep.Status))
		}
	}
	if cycle := findCycle(tx, t); cycle != nil {
		add("dependency cycle " + strings.Join(cycle, " -> "))
	}
	if dir == TasksDir {
		if msg, err := heldTwice(tx, t, old); err != nil {
			add(err.Error())
		} else if msg != "" {
			add(msg)
		}
	}
	return ps
}

// checkStretch checks that the sprint's stretch scope names only tasks
// that exist: those it names and the state it was read from did not. The
// planned ids are checked as Tx.Plan adds them.
func checkStretch(tx *Tx, m *Meta) ([]contracts.Problem, error) {
	if len(m.Sprint.Scope.Stretch) == 0 {
		return nil, nil // names nothing (liza.yaml at the tip decodes: checkTip)
	}
	var before Meta
	if _, err := tx.Snap.decode(MetaFile, &before); err != nil {
		return nil, err
	}
	var ps []contracts.Problem
	for _, id := range m.Sprint.Scope.Stretch {
		if before.Sprint.Scope.Stretch.Contains(id) {
			continue
		}
		live, archived, err := tx.HasTask(id)
		if err != nil {
			return nil, err
		}
		if !live && !archived {
			ps = append(ps, contracts.Problem{Where: "sprint", Msg: "scope.stretch names unknown task " + id})
		}
	}
	return ps, nil
}

// checkDisplaced checks that an agent a changed task no longer belongs to
// does not still say it works on or reviews it: whoever takes a task from
// its holder (a reclaim, a block, a merge) updates the holder's entry. old
// is the task as the state read had it, nil when it had none.
func checkDisplaced(tx *Tx, t, old *contracts.Task) ([]contracts.Problem, error) {
	if old == nil {
		return nil, nil
	}
	var holders []string
	if old.Status == contracts.Claimed && old.AssignedTo != "" && (t.Status != contracts.Claimed || t.AssignedTo != old.AssignedTo) {
		holders = append(holders, old.AssignedTo)
	}
	if old.Status == contracts.ReadyForReview && old.ReviewingBy != "" && (t.Status != contracts.ReadyForReview || t.ReviewingBy != old.ReviewingBy) {
		holders = append(holders, old.ReviewingBy)
	}
	var ps []contracts.Problem
	for _, id := range holders {
		a, err := tx.Agent(id)
		if err != nil {
			return nil, err
		}
		if a != nil && a.CurrentTask == t.ID {
			if msg := contracts.HolderProblem(id, a, t); msg != "" {
				ps = append(ps, contracts.Problem{Where: "agents[" + id + "]", Msg: msg})
			}
		}
	}
	return ps, nil
}

// heldTwice checks that the agent a task is active for holds no other
// active task. Under the whole contract a coder takes no task while
// another of its tasks is CLAIMED, awaits review or came back rejected
// (one active task per coder), checked when the task becomes its: a board
// an older git-liza left with two such tasks is not stuck, their coder
// finishes them. Under the first rules, one CLAIMED task per coder. Either
// way, one review per reviewer. Under the whole contract old is the task
// as the state read had it (tx.Snap.Task), nil when it had none.
func heldTwice(tx *Tx, t, old *contracts.Task) (string, error) {
	whole := tx.Rules >= contracts.RulesWhole
	coder := t.AssignedTo != "" && t.Status == contracts.Claimed
	reviewer := t.ReviewingBy != "" && t.Status == contracts.ReadyForReview
	if whole {
		coder = t.AssignedTo != "" && t.Status.Active()
		if coder || reviewer {
			// What the task's holders held already was checked when it
			// became theirs.
			if old != nil && old.Status.Active() && old.AssignedTo == t.AssignedTo {
				coder = false
			}
			if old != nil && old.Status == contracts.ReadyForReview && old.ReviewingBy == t.ReviewingBy {
				reviewer = false
			}
		}
	}
	if !coder && !reviewer {
		return "", nil
	}
	// Every task looked for is in flight (Claimed, Active and
	// ReadyForReview are).
	idx, err := tx.InFlight()
	if err != nil {
		return "", err
	}
	for _, o := range idx {
		if o.ID == t.ID {
			continue
		}
		if coder && o.AssignedTo == t.AssignedTo && (o.Status == contracts.Claimed || whole && o.Status.Active()) {
			return t.AssignedTo + " also holds " + string(o.Status) + " task " + o.ID, nil
		}
		if reviewer && o.Status == contracts.ReadyForReview && o.ReviewingBy == t.ReviewingBy {
			return t.ReviewingBy + " also reviews task " + o.ID, nil
		}
	}
	return "", nil
}

// duplicateAnomaly reports whether another anomaly than the one at path
// has the id.
func duplicateAnomaly(tx *Tx, path, id string) (bool, error) {
	list, err := tx.Anomalies()
	if err != nil {
		return false, err
	}
	n := 0
	for _, a := range list {
		if a.ID == id {
			n++
		}
	}
	return n > 1, nil
}

// safeEntityPath refuses a path that an entity id would have turned into
// something other than <dir>/<id>.yaml or <list>/<n>.yaml: ids become tree
// entries and, for tasks, branch names and directories.
func safeEntityPath(p string) error {
	parts := strings.Split(p, "/")
	if len(parts) != 2 {
		return contracts.Invalidf("invalid id in %q: ids are kebab-case", p)
	}
	if id, ok := idOf(parts[1]); !ok || id == "" || id == "." || id == ".." {
		return contracts.Invalidf("invalid entity file %q", p)
	}
	return nil
}

// findCycle follows depends_on from t and returns a path back to t, if any.
func findCycle(tx *Tx, t *contracts.Task) []string {
	seen := map[string]bool{}
	var path []string
	var walk func(id string) bool
	walk = func(id string) bool {
		cur, err := tx.AnyTask(id)
		if err != nil || cur == nil {
			return false
		}
		for _, d := range cur.DependsOn {
			if d == t.ID {
				path = append(path, id, d)
				return true
			}
			if seen[d] {
				continue
			}
			seen[d] = true
			if walk(d) {
				path = append([]string{id}, path...)
				return true
			}
		}
		return false
	}
	if walk(t.ID) {
		return path
	}
	return nil
}
