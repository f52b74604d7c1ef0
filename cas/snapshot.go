package cas

import (
	"sort"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Snapshot is the state tree of one commit on refs/liza/state, read lazily:
// a file is read only when asked for, so an operation costs what it touches.
type Snapshot struct {
	Repo   *refstore.Repo
	Commit refstore.Hash                   // zero when there is no state yet
	Tree   refstore.Hash                   // zero when there is no state yet
	dirs   map[string][]refstore.TreeEntry // directories read, in tree order
}

// ReadSnapshot opens the state at commit; a zero commit is the empty state.
func ReadSnapshot(repo *refstore.Repo, commit refstore.Hash) (*Snapshot, error) {
	s := &Snapshot{Repo: repo, Commit: commit, dirs: map[string][]refstore.TreeEntry{}}
	if commit.IsZero() {
		s.dirs[""] = nil
		return s, nil
	}
	c, err := repo.ReadCommit(commit)
	if err != nil {
		return nil, inconsistent("reading state commit %s: %v", commit, err)
	}
	s.Tree = c.Tree
	return s, nil
}

// Exists reports whether the snapshot holds a state.
func (s *Snapshot) Exists() bool { return !s.Commit.IsZero() }

// Entries lists a directory of the tree ("" is the root) in tree order. A
// missing directory is empty. Treat the list as read-only.
func (s *Snapshot) Entries(dir string) ([]refstore.TreeEntry, error) {
	if list, ok := s.dirs[dir]; ok {
		return list, nil
	}
	var id refstore.Hash
	if dir == "" {
		id = s.Tree
	} else {
		parent, name := splitPath(dir)
		e, ok, err := s.entry(parent, name)
		if err != nil {
			return nil, err
		}
		if !ok || !e.IsTree() {
			s.dirs[dir] = nil
			return nil, nil
		}
		id = e.ID
	}
	entries, err := s.Repo.ReadTree(id)
	if err != nil {
		return nil, inconsistent("reading state tree %s: %v", dir, err)
	}
	s.dirs[dir] = entries
	return entries, nil
}

// entry looks up one name in a directory.
func (s *Snapshot) entry(dir, name string) (refstore.TreeEntry, bool, error) {
	list, err := s.Entries(dir)
	if err != nil {
		return refstore.TreeEntry{}, false, err
	}
	e, ok := refstore.FindEntry(list, name)
	return e, ok, nil
}

// ReadFile returns a file of the tree, and whether it exists.
func (s *Snapshot) ReadFile(path string) ([]byte, bool, error) {
	e, ok, err := s.entry(splitPath(path))
	if err != nil || !ok || e.IsTree() {
		return nil, false, err
	}
	b, err := s.Repo.ReadBlob(e.ID)
	if err != nil {
		return nil, false, inconsistent("reading %s: %v", path, err)
	}
	return b, true, nil
}

// decode reads path into v; it reports whether the file exists.
func (s *Snapshot) decode(path string, v any) (bool, error) {
	b, ok, err := s.ReadFile(path)
	if err != nil || !ok {
		return false, err
	}
	if err := contracts.DecodeYAML(b, v); err != nil {
		return true, inconsistent("%s at %s: %v", path, short(s.Commit), err)
	}
	return true, nil
}

// IDs lists the entity ids of a directory (file names without .yaml), in
// tree order.
func (s *Snapshot) IDs(dir string) ([]string, error) {
	list, err := s.Entries(dir)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list))
	for _, e := range list {
		if isEntity(e) {
			id, _ := idOf(e.Name)
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// count is the number of entity files in a directory.
func (s *Snapshot) count(dir string) (int, error) {
	list, err := s.Entries(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range list {
		if isEntity(e) {
			n++
		}
	}
	return n, nil
}

// isEntity reports whether a tree entry is an entity file (<id>.yaml).
func isEntity(e refstore.TreeEntry) bool {
	_, ok := idOf(e.Name)
	return ok && !e.IsTree()
}

// Task reads one task from the board or, failing that, the archive; nil
// when there is none.
func (s *Snapshot) Task(id string) (*contracts.Task, error) {
	for _, dir := range []string{TasksDir, ArchiveDir} {
		t := new(contracts.Task)
		if ok, err := s.decode(entityPath(dir, id), t); err != nil || ok {
			return t, err
		}
	}
	return nil, nil
}

// Load reads the whole state.
func (s *Snapshot) Load() (*contracts.State, error) {
	st := &contracts.State{Agents: map[string]*contracts.Agent{}, Tasks: []*contracts.Task{}}
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
	if err := checkTree(s); err != nil {
		return nil, err
	}
	st.Version, st.Goal, st.Config, st.Sprint = meta.Version, meta.Goal, meta.Config, meta.Sprint
	st.Control, st.CircuitBreaker, st.Extra = meta.Control, meta.CircuitBreaker, meta.Extra

	loadTasks := func(dir string) ([]*contracts.Task, error) {
		ids, err := s.IDs(dir)
		if err != nil {
			return nil, err
		}
		out := make([]*contracts.Task, 0, len(ids))
		for _, id := range ids {
			t := new(contracts.Task)
			if _, err := s.decode(entityPath(dir, id), t); err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		SortTasks(out)
		return out, nil
	}
	if st.Tasks, err = loadTasks(TasksDir); err != nil {
		return nil, err
	}
	if st.Archive, err = loadTasks(ArchiveDir); err != nil {
		return nil, err
	}
	ids, err := s.IDs(AgentsDir)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		a := new(contracts.Agent)
		if _, err := s.decode(entityPath(AgentsDir, id), a); err != nil {
			return nil, err
		}
		st.Agents[id] = a
	}
	if ids, err = s.IDs(HandoffDir); err != nil {
		return nil, err
	}
	for _, id := range ids {
		h := new(contracts.Handoff)
		if _, err := s.decode(entityPath(HandoffDir, id), h); err != nil {
			return nil, err
		}
		if st.Handoff == nil {
			st.Handoff = map[string]*contracts.Handoff{}
		}
		st.Handoff[id] = h
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

// readList reads an append-only list in sequence order.
func readList[T any](s *Snapshot, list string, out *[]*T) error {
	ids, err := s.IDs(list)
	if err != nil {
		return err
	}
	sort.Strings(ids)
	for _, id := range ids {
		v := new(T)
		if _, err := s.decode(entityPath(list, id), v); err != nil {
			return err
		}
		*out = append(*out, v)
	}
	return nil
}

func splitPath(p string) (dir, name string) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

func short(h refstore.Hash) string {
	s := h.String()
	return s[:12]
}

func inconsistent(format string, args ...any) error {
	return contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: "+format, args...)
}
