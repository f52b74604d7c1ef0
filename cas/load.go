package cas

import (
	"github.com/liza-dev/git-liza/contracts"
)

// Header reads the parts of the state that are not tasks or lists:
// liza.yaml, the planned ids, the agents and the handoffs. What it
// returns has no tasks, archive or list entries.
func (s *Snapshot) Header() (*contracts.State, error) {
	meta, err := s.meta()
	if err != nil {
		return nil, err
	}
	st := &contracts.State{Agents: map[string]*contracts.Agent{}, Tasks: []*contracts.Task{}}
	st.Version, st.Goal, st.Config, st.Sprint = meta.Version, meta.Goal, meta.Config, meta.Sprint
	st.Control, st.CircuitBreaker, st.Extra = meta.Control, meta.CircuitBreaker, meta.Extra
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

// meta reads liza.yaml with the planned ids in its
// sprint.scope.planned, wherever the layout keeps them.
func (s *Snapshot) meta() (*Meta, error) {
	if !s.Exists() {
		return nil, ErrNoBoard
	}
	meta := new(Meta)
	ok, err := s.decode(MetaFile, meta)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, inconsistent("state at %s has no %s", short(s.Commit), MetaFile)
	}
	if !s.v1 {
		if meta.Sprint.Scope.Planned, err = s.Planned(); err != nil {
			return nil, err
		}
	}
	return meta, nil
}

// Load reads the whole state, after checking that the tree holds nothing
// the layout does not (checkTree). Its files may hold MaxLoad bytes
// together.
func (s *Snapshot) Load() (*contracts.State, error) { return s.LoadWithin(loadBudget) }

// LoadWithin is Load for a state whose files hold at most max bytes
// together: an import's, whose whole state came from one file of at most
// MaxImport bytes, has no business holding more.
func (s *Snapshot) LoadWithin(max int64) (*contracts.State, error) {
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
	s.loading, s.loadLeft, s.loadMax = true, max, max
	defer func() { s.loading = false }()
	return s.load(s.wholeTasks)
}

// LoadLive reads the state as Load does, except that it takes every task
// that is finished (MERGED, SUPERSEDED, ABANDONED) or archived from its
// index entry (see contracts.TaskSummary.Stub): only the tasks still in
// play are decoded whole. It is for a reader that trusts the state (it
// checks nothing) and looks at the work in play on a board that may hold
// thousands of finished tasks, such as a supervisor: on such a board it
// reads the index, not thousands of task files.
func (s *Snapshot) LoadLive() (*contracts.State, error) { return s.loadLive("") }

// loadLive is LoadLive; with own set, a task in play that the index
// assigns to another agent (or to none) comes from its index entry too
// (see View.Own).
func (s *Snapshot) loadLive(own string) (*contracts.State, error) {
	if s.v1 {
		return s.Load() // a layout 1 tree has no index to take them from
	}
	return s.load(func(dir string) ([]*contracts.Task, error) { return s.liveTasks(dir, own) })
}

// load reads the header, the tasks and the archive (each dir as tasks
// reads it, in board order) and the lists.
func (s *Snapshot) load(tasks func(dir string) ([]*contracts.Task, error)) (*contracts.State, error) {
	st, err := s.Header()
	if err != nil {
		return nil, err
	}
	if st.Tasks, err = tasks(TasksDir); err != nil {
		return nil, err
	}
	if st.Archive, err = tasks(ArchiveDir); err != nil {
		return nil, err
	}
	SortTasks(st.Tasks)
	SortTasks(st.Archive)
	return st, s.readLists(st)
}

// wholeTasks decodes every task of dir, in tree order.
func (s *Snapshot) wholeTasks(dir string) ([]*contracts.Task, error) {
	es, err := s.entities(dir)
	if err != nil {
		return nil, err
	}
	out, err := s.decodeTasks(len(es), func(i int) (string, []byte, error) {
		p := EntityFile(dir, es[i].id)
		raw, err := s.readFile(p, es[i].blob)
		return p, raw, err
	})
	if out == nil && err == nil {
		out = []*contracts.Task{}
	}
	return out, err
}

// liveTasks is the tasks of dir from its index, those in play (and, with
// own, assigned to own) decoded whole (see loadLive).
func (s *Snapshot) liveTasks(dir, own string) ([]*contracts.Task, error) {
	sums, err := s.Summaries(dir)
	if err != nil {
		return nil, err
	}
	out := make([]*contracts.Task, 0, len(sums))
	for _, sum := range sums {
		if stubbed(dir, sum, own) {
			out = append(out, sum.Stub())
			continue
		}
		t := new(contracts.Task)
		if ok, err := s.decode(EntityFile(dir, sum.ID), t); err != nil {
			return nil, err
		} else if !ok {
			return nil, inconsistent("%s at %s: the index lists %s, which has no file", dir, short(s.Commit), sum.ID)
		}
		out = append(out, t)
	}
	return out, nil
}

// readLists reads the append-only lists into st.
func (s *Snapshot) readLists(st *contracts.State) error {
	if err := readList(s, ListAlignment, &st.Goal.AlignmentHistory); err != nil {
		return err
	}
	if err := readList(s, ListAnomalies, &st.Anomalies); err != nil {
		return err
	}
	if err := readList(s, ListDiscovered, &st.Discovered); err != nil {
		return err
	}
	if err := readList(s, ListHumanNotes, &st.HumanNotes); err != nil {
		return err
	}
	return readList(s, ListSpecChanges, &st.SpecChanges)
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

// EachEntryRaw is EachEntry with each entry's file as it is stored.
func (s *Snapshot) EachEntryRaw(list string, fn func(raw []byte) error) error {
	es, err := s.entities(list)
	if err != nil {
		return err
	}
	for _, e := range es {
		b, err := s.readFile(list+"/"+e.id+".yaml", e.blob)
		if err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// EachTaskRaw hands over the files of the tasks of tasks/ or archive/ as
// they are stored, one at a time, in board order (SortTasks), reading
// their order from the index: a whole board goes by without being held at
// once.
func (s *Snapshot) EachTaskRaw(dir string, fn func(id string, raw []byte) error) error {
	ids, err := s.boardOrder(dir)
	if err != nil {
		return err
	}
	for _, id := range ids {
		raw, ok, err := s.ReadFile(EntityFile(dir, id))
		if err != nil {
			return err
		}
		if !ok {
			return inconsistent("%s at %s: the index names task %s, which is not there", dir, short(s.Commit), id)
		}
		if err := fn(id, raw); err != nil {
			return err
		}
	}
	return nil
}

// boardOrder is the ids of the tasks of tasks/ or archive/ in board order
// (SortTasks), from the index.
func (s *Snapshot) boardOrder(dir string) ([]string, error) {
	sums, err := s.Summaries(dir)
	if err != nil {
		return nil, err
	}
	order := make([]*contracts.Task, len(sums))
	for i, x := range sums {
		order[i] = &contracts.Task{ID: x.ID, Created: x.Created}
	}
	SortTasks(order)
	ids := make([]string, len(order))
	for i, o := range order {
		ids[i] = o.ID
	}
	return ids, nil
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

// stubbed reports whether a live read takes the task of sum, in dir, from
// its index entry: finished or archived, or (with own) not own's.
func stubbed(dir string, sum *contracts.TaskSummary, own string) bool {
	return dir == ArchiveDir || sum.Status.Terminal() || own != "" && sum.AssignedTo != own
}
