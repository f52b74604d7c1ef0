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
	Commit refstore.Hash // zero when there is no state yet
	Tree   refstore.Hash // zero when there is no state yet
	dirs   map[string]map[string]refstore.TreeEntry
}

// ReadSnapshot opens the state at commit; a zero commit is the empty state.
func ReadSnapshot(repo *refstore.Repo, commit refstore.Hash) (*Snapshot, error) {
	s := &Snapshot{Repo: repo, Commit: commit, dirs: map[string]map[string]refstore.TreeEntry{}}
	if commit.IsZero() {
		s.dirs[""] = map[string]refstore.TreeEntry{}
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

// Entries lists a directory of the tree ("" is the root). A missing
// directory is empty.
func (s *Snapshot) Entries(dir string) (map[string]refstore.TreeEntry, error) {
	if m, ok := s.dirs[dir]; ok {
		return m, nil
	}
	var id refstore.Hash
	if dir == "" {
		id = s.Tree
	} else {
		parent, name := splitPath(dir)
		pe, err := s.Entries(parent)
		if err != nil {
			return nil, err
		}
		e, ok := pe[name]
		if !ok || !e.IsTree() {
			m := map[string]refstore.TreeEntry{}
			s.dirs[dir] = m
			return m, nil
		}
		id = e.ID
	}
	entries, err := s.Repo.ReadTree(id)
	if err != nil {
		return nil, inconsistent("reading state tree %s: %v", dir, err)
	}
	m := make(map[string]refstore.TreeEntry, len(entries))
	for _, e := range entries {
		m[e.Name] = e
	}
	s.dirs[dir] = m
	return m, nil
}

// ReadFile returns a file of the tree, and whether it exists.
func (s *Snapshot) ReadFile(path string) ([]byte, bool, error) {
	dir, name := splitPath(path)
	m, err := s.Entries(dir)
	if err != nil {
		return nil, false, err
	}
	e, ok := m[name]
	if !ok || e.IsTree() {
		return nil, false, nil
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

// IDs lists the entity ids of a directory (file names without .yaml).
func (s *Snapshot) IDs(dir string) ([]string, error) {
	m, err := s.Entries(dir)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(m))
	for name := range m {
		if id, ok := idOf(name); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
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
		return nil, contracts.Invalidf("no blackboard here: run `git liza init GOAL` first")
	}
	var meta Meta
	ok, err := s.decode(MetaFile, &meta)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, inconsistent("state at %s has no %s", short(s.Commit), MetaFile)
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
