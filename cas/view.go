package cas

import (
	"slices"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// View is a whole state kept up to date as refs/liza/state moves: the first
// read loads it, each later one reads only the entities that changed since
// (Changed), so that a reader that looks at the board again and again (a
// supervisor) pays for the whole board once, and then for what each
// operation changed. A state Read returns is never changed afterwards:
// treat it as read-only, and keep it as long as needed.
type View struct {
	// Live, set before the first Read, makes a trusted first read take the
	// finished and archived tasks from the index (Snapshot.LoadLive): they
	// hold only their index entries. Tasks that change afterwards are read
	// whole.
	Live bool
	// Own, with Live, makes every task in play that the index does not
	// assign to agent Own hold only its index entry as well: a coder looks
	// at the others' work through what the index says of it (what it may
	// claim, what it depends on), and decoded each task another coder
	// changed at every read.
	Own  string
	snap *Snapshot
	st   *contracts.State
}

// Read returns the state at snap. trusted says the state is known valid
// (this repository wrote it or verified every commit up to it); any other
// state is read whole and validated, and an invalid one is an error of
// class CodeInconsistent.
func (v *View) Read(snap *Snapshot, trusted bool) (*contracts.State, error) {
	if v.snap != nil && v.snap.Commit == snap.Commit {
		return v.st, nil
	}
	if !trusted || v.st == nil {
		load := snap.Load
		if trusted && v.Live {
			load = func() (*contracts.State, error) { return snap.loadLive(v.Own) }
		}
		st, err := load()
		if err != nil {
			return nil, err
		}
		if !trusted {
			if ps := contracts.Validate(st); len(ps) > 0 {
				return nil, contracts.Errorf(contracts.CodeInconsistent, "the blackboard does not validate: %s", ps[0])
			}
		}
		v.snap, v.st = snap, st
		return st, nil
	}
	st, err := v.apply(snap)
	if err != nil {
		return nil, err
	}
	v.snap, v.st = snap, st
	return st, nil
}

// apply makes the state at snap from the one at v.snap and what changed
// between them, copying what it changes.
func (v *View) apply(snap *Snapshot) (*contracts.State, error) {
	old, prev := v.snap, v.st
	st := *prev
	if same, err := SameBoard(old, snap); err != nil {
		return nil, err
	} else if !same {
		h, err := snap.meta()
		if err != nil {
			return nil, err
		}
		st.Version, st.Config, st.Sprint = h.Version, h.Config, h.Sprint
		st.Control, st.CircuitBreaker, st.Extra = h.Control, h.CircuitBreaker, h.Extra
		history := st.Goal.AlignmentHistory
		st.Goal = h.Goal
		st.Goal.AlignmentHistory = history
	}
	var err error
	if st.Tasks, err = v.changedTasks(old, snap, TasksDir, prev.Tasks); err != nil {
		return nil, err
	}
	if st.Archive, err = v.changedTasks(old, snap, ArchiveDir, prev.Archive); err != nil {
		return nil, err
	}
	if st.Agents, err = changedMap(old, snap, AgentsDir, prev.Agents); err != nil {
		return nil, err
	}
	if st.Handoff, err = changedMap(old, snap, HandoffDir, prev.Handoff); err != nil {
		return nil, err
	}
	if len(st.Handoff) == 0 {
		st.Handoff = nil
	}
	if st.Goal.AlignmentHistory, err = changedList(old, snap, ListAlignment, prev.Goal.AlignmentHistory); err != nil {
		return nil, err
	}
	if st.Anomalies, err = changedList(old, snap, ListAnomalies, prev.Anomalies); err != nil {
		return nil, err
	}
	if st.Discovered, err = changedList(old, snap, ListDiscovered, prev.Discovered); err != nil {
		return nil, err
	}
	if st.HumanNotes, err = changedList(old, snap, ListHumanNotes, prev.HumanNotes); err != nil {
		return nil, err
	}
	if st.SpecChanges, err = changedList(old, snap, ListSpecChanges, prev.SpecChanges); err != nil {
		return nil, err
	}
	return &st, nil
}

// changedTasks is tasks (those of dir at old) with the changes to dir up
// to snap, in board order. In a live view, a finished or archived task
// (and with Own, another's) holds only its index entry, as the first read
// took it: every merge archives a task, and a supervisor that reads the
// board after many merges decoded each.
func (v *View) changedTasks(old, snap *Snapshot, dir string, tasks []*contracts.Task) ([]*contracts.Task, error) {
	names, err := Changed(old, snap, dir)
	if err != nil || len(names) == 0 {
		return tasks, err
	}
	by := make(map[string]*contracts.Task, len(names))
	for _, name := range names {
		id, _ := idOf(name)
		if v.Live && !snap.v1 {
			sum, err := snap.summaryOf(dir, id)
			if err != nil {
				return nil, err
			}
			if sum != nil && stubbed(dir, sum, v.Own) {
				by[id] = sum.Stub()
				continue
			}
		}
		t := new(contracts.Task)
		if ok, err := snap.decode(EntityFile(dir, id), t); err != nil {
			return nil, err
		} else if !ok {
			t = nil // gone from dir
		}
		by[id] = t
	}
	out := make([]*contracts.Task, 0, len(tasks)+len(by))
	added := false
	for _, t := range tasks {
		if n, ok := by[t.ID]; ok {
			delete(by, t.ID)
			if n == nil {
				continue
			}
			added = added || n.Created != t.Created
			t = n
		}
		out = append(out, t)
	}
	for _, t := range by {
		if t != nil {
			out = append(out, t)
			added = true
		}
	}
	if added {
		SortTasks(out)
	}
	return out, nil
}

// changedMap is entities (agents or handoffs, by id) with the changes to
// dir up to snap.
func changedMap[T any](old, snap *Snapshot, dir string, entities map[string]*T) (map[string]*T, error) {
	names, err := Changed(old, snap, dir)
	if err != nil || len(names) == 0 {
		return entities, err
	}
	out := make(map[string]*T, len(entities)+len(names))
	for id, e := range entities {
		out[id] = e
	}
	for _, name := range names {
		id, _ := idOf(name)
		e := new(T)
		if ok, err := snap.decode(EntityFile(dir, id), e); err != nil {
			return nil, err
		} else if ok {
			out[id] = e
		} else {
			delete(out, id)
		}
	}
	return out, nil
}

// changedList is entries (a list at old) with the changes up to snap: new
// entries appended, rewritten ones replaced.
func changedList[T any](old, snap *Snapshot, list string, entries []*T) ([]*T, error) {
	names, err := Changed(old, snap, list)
	if err != nil || len(names) == 0 {
		return entries, err
	}
	out := append([]*T(nil), entries...)
	ns := make([]int, 0, len(names))
	for _, name := range names {
		n, err := strconv.Atoi(strings.TrimSuffix(name, ".yaml"))
		if err != nil || n < 1 {
			return nil, inconsistent("%s: %q is not a list entry", list, name)
		}
		ns = append(ns, n)
	}
	slices.Sort(ns)
	for _, n := range ns {
		e := new(T)
		if ok, err := snap.decode(list+"/"+seqName(n), e); err != nil {
			return nil, err
		} else if !ok {
			return nil, inconsistent("%s: entry %d went: the lists only grow", list, n)
		}
		switch {
		case n <= len(out):
			out[n-1] = e
		case n == len(out)+1:
			out = append(out, e)
		default:
			return nil, inconsistent("%s: entry %d after %d entries", list, n, len(out))
		}
	}
	return out, nil
}
