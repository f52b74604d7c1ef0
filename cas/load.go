package cas

import (
	"github.com/liza-dev/git-liza/contracts"
)

// Header reads the parts of the state that are not tasks or lists:
// liza.yaml, the planned ids, the agents and the handoffs. What it
// returns has no tasks, archive or list entries.
func (s *Snapshot) Header() (*contracts.State, error) {
	if !s.Exists() {
		return nil, ErrNoBoard
	}
	var meta Meta
	ok, err := s.decode(MetaFile, &meta)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, inconsistent("state at %s has no %s", short(s.Commit), MetaFile)
	}
	st := &contracts.State{Agents: map[string]*contracts.Agent{}, Tasks: []*contracts.Task{}}
	st.Version, st.Goal, st.Config, st.Sprint = meta.Version, meta.Goal, meta.Config, meta.Sprint
	st.Control, st.CircuitBreaker, st.Extra = meta.Control, meta.CircuitBreaker, meta.Extra
	if !s.v1 {
		if st.Sprint.Scope.Planned, err = s.Planned(); err != nil {
			return nil, err
		}
	}
	agents, err := s.entities(AgentsDir)
	if err != nil {
		return nil, err
	}
	for _, e := range agents {
		a := new(contracts.Agent)
		if err := s.decodeBlob(AgentsDir, e, a); err != nil {
			return nil, err
		}
		st.Agents[e.id] = a
	}
	handoffs, err := s.entities(HandoffDir)
	if err != nil {
		return nil, err
	}
	for _, e := range handoffs {
		h := new(contracts.Handoff)
		if err := s.decodeBlob(HandoffDir, e, h); err != nil {
			return nil, err
		}
		if st.Handoff == nil {
			st.Handoff = map[string]*contracts.Handoff{}
		}
		st.Handoff[e.id] = h
	}
	return st, nil
}

// Load reads the whole state, after checking that the tree holds nothing
// the layout does not (checkTree).
func (s *Snapshot) Load() (*contracts.State, error) {
	if !s.Exists() {
		return nil, ErrNoBoard
	}
	if _, ok, err := s.entry("", MetaFile); err != nil {
		return nil, err
	} else if !ok {
		return nil, inconsistent("state at %s has no %s", short(s.Commit), MetaFile)
	}
	if err := checkTree(s); err != nil {
		return nil, err
	}
	st, err := s.Header()
	if err != nil {
		return nil, err
	}
	loadTasks := func(dir string) ([]*contracts.Task, error) {
		out := []*contracts.Task{}
		err := s.eachTask(dir, func(t *contracts.Task) error {
			out = append(out, t)
			return nil
		})
		SortTasks(out)
		return out, err
	}
	if st.Tasks, err = loadTasks(TasksDir); err != nil {
		return nil, err
	}
	if st.Archive, err = loadTasks(ArchiveDir); err != nil {
		return nil, err
	}
	if err := readList(s, ListAlignment, &st.Goal.AlignmentHistory); err != nil {
		return nil, err
	}
	if err := readList(s, ListAnomalies, &st.Anomalies); err != nil {
		return nil, err
	}
	if err := readList(s, ListDiscovered, &st.Discovered); err != nil {
		return nil, err
	}
	if err := readList(s, ListHumanNotes, &st.HumanNotes); err != nil {
		return nil, err
	}
	if err := readList(s, ListSpecChanges, &st.SpecChanges); err != nil {
		return nil, err
	}
	return st, nil
}

// readList reads an append-only list in order.
func readList[T any](s *Snapshot, list string, out *[]*T) error {
	return EachEntry(s, list, func(v *T) error {
		*out = append(*out, v)
		return nil
	})
}

// EachEntry decodes the entries of an append-only list one at a time, in
// order.
func EachEntry[T any](s *Snapshot, list string, fn func(v *T) error) error {
	es, err := s.entities(list)
	if err != nil {
		return err
	}
	for _, e := range es {
		v := new(T)
		if err := s.decodeBlob(list, e, v); err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// EachTask decodes the tasks of tasks/ or archive/ one at a time, in board
// order (SortTasks), reading their order from the index: a whole board
// goes by without being held at once.
func (s *Snapshot) EachTask(dir string, fn func(t *contracts.Task) error) error {
	sums, err := s.Summaries(dir)
	if err != nil {
		return err
	}
	order := make([]*contracts.Task, len(sums))
	for i, x := range sums {
		order[i] = &contracts.Task{ID: x.ID, Created: x.Created}
	}
	SortTasks(order)
	for _, o := range order {
		t := new(contracts.Task)
		ok, err := s.decode(entityPath(dir, o.ID), t)
		if err != nil {
			return err
		}
		if !ok {
			return inconsistent("%s at %s: the index names task %s, which is not there", dir, short(s.Commit), o.ID)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// Count is how many tasks tasks/ or archive/ hold, and how many of them
// are in each status, from the index.
func (s *Snapshot) Count(dir string) (int, map[contracts.Status]int, error) {
	sums, err := s.Summaries(dir)
	if err != nil {
		return 0, nil, err
	}
	by := map[contracts.Status]int{}
	for _, x := range sums {
		by[x.Status]++
	}
	return len(sums), by, nil
}

// ListLen is the number of entries of an append-only list.
func (s *Snapshot) ListLen(list string) (int, error) { return s.listLen(list) }
