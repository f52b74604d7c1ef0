package cas

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
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
	v1     bool                            // the tree is in layout 1
	// rules is the rule set the commit was made under (its Liza-Rules
	// trailer; 1 without one, 0 for no commit): an older git-liza keeps
	// a claim index it does not know as it found it, so only a state a
	// commit under RulesClaimIndex made has one to read.
	rules int
	// treeBytes is how much of MaxTrees the trees read so far hold.
	treeBytes int64
	// loading is set during a Load; loadLeft is what is left of its
	// budget, loadMax the budget.
	loading           bool
	loadLeft, loadMax int64
}

// ReadSnapshot opens the state at commit; a zero commit is the empty state.
func ReadSnapshot(repo *refstore.Repo, commit refstore.Hash) (*Snapshot, error) {
	s := &Snapshot{Repo: repo, Commit: commit, dirs: map[string][]refstore.TreeEntry{}}
	if commit.IsZero() {
		s.dirs[""] = nil
		return s, nil
	}
	c, err := ReadStateCommit(repo, commit)
	if tooLarge(err) != nil {
		return nil, err
	}
	if err != nil {
		return nil, inconsistent("reading state commit %s: %v", commit, err)
	}
	s.Tree = c.Tree
	s.rules = contracts.RulesFirst
	if r, err := strconv.Atoi(Trailers(c.Message)["Liza-Rules"]); err == nil {
		s.rules = r
	}
	return s, s.readLayout()
}

// treeSnapshot opens a tree that no commit holds yet (a migrated state) as
// if commit held it.
func treeSnapshot(repo *refstore.Repo, commit, tree refstore.Hash) (*Snapshot, error) {
	s := &Snapshot{Repo: repo, Commit: commit, Tree: tree, dirs: map[string][]refstore.TreeEntry{}}
	return s, s.readLayout()
}

// readLayout tells the layouts apart: layout 2 has a layout file (checkTree
// checks what it says).
func (s *Snapshot) readLayout() error {
	_, ok, err := s.entry("", LayoutFile)
	s.v1 = !ok
	return err
}

// Layout is the version of the tree's layout (see layout.go).
func (s *Snapshot) Layout() int {
	if s.v1 {
		return 1
	}
	return 2
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
	entries, err := s.readDir(dir, id)
	if err != nil && !errors.As(err, new(*contracts.Error)) {
		return nil, inconsistent("reading state tree %s: %v", dir, err)
	}
	return entries, err
}

// readDir lists dir, whose tree is id, keeping the list for Entries. The
// trees of a state hold at most MaxTrees together: each is read within
// what the ones read before it leave, and refused, unread, beyond that.
func (s *Snapshot) readDir(dir string, id refstore.Hash) ([]refstore.TreeEntry, error) {
	if list, ok := s.dirs[dir]; ok {
		return list, nil
	}
	entries, err := s.Repo.ReadTreeMax(id, treeBudget-s.treeBytes)
	if big := tooLarge(err); big != nil {
		name := dir + "/"
		if dir == "" {
			name = "the root tree"
		}
		return nil, inconsistent("the trees of the state at %s hold more than the %s cap of a state's trees (%s is %d bytes, after %d bytes of others)",
			short(s.Commit), refstore.ByteSize(treeBudget), name, big.Size, s.treeBytes)
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		s.treeBytes += int64(len(e.Mode) + len(e.Name) + 2 + e.ID.Size())
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

// locate maps a logical path (layout 1's spelling, which operations use:
// tasks/<id>.yaml, <list>/<n>.yaml, requests/<xx>/<hash>) to where this
// tree keeps the file.
func (s *Snapshot) locate(path string) string {
	if s.v1 {
		return path
	}
	return locate2(path)
}

// locate2 is where layout 2 keeps the file at a logical path.
func locate2(path string) string {
	dir, name := splitPath(path)
	switch {
	case dir == TasksDir || dir == ArchiveDir:
		if id, ok := idOf(name); ok {
			return dir + "/" + bucket(id) + "/" + name
		}
	case isList(dir):
		if n, ok := seqOf(name); ok {
			return listFile(dir, n)
		}
	case strings.HasPrefix(dir, RequestDir+"/") && len(dir) == len(RequestDir)+3:
		xx := dir[len(RequestDir)+1:]
		return RequestDir + "/" + xx[:1] + "/" + xx[1:] + "/" + name
	}
	return path
}

// file looks up the entry of the file at a logical path.
func (s *Snapshot) file(path string) (refstore.TreeEntry, bool, error) {
	e, ok, err := s.entry(splitPath(s.locate(path)))
	if err != nil || !ok || e.IsTree() {
		return refstore.TreeEntry{}, false, err
	}
	return e, true, nil
}

// FileID is the object id of the file at a logical path, zero when there
// is none: whether a file changed from one state to another, without
// reading it.
func (s *Snapshot) FileID(path string) (refstore.Hash, error) {
	e, _, err := s.file(path)
	return e.ID, err
}

// ReadFile returns the file at a logical path, and whether it exists.
func (s *Snapshot) ReadFile(path string) ([]byte, bool, error) {
	e, ok, err := s.file(path)
	if err != nil || !ok {
		return nil, false, err
	}
	b, err := s.readFile(s.locate(path), e.ID)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// decode reads the file at a logical path into v; it reports whether the
// file exists.
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

// entity is one entity file: its id (or, in a list, its position) and its
// blob.
type entity struct {
	id   string
	n    int
	blob refstore.Hash
}

// entities lists the entity files of a directory of the logical layout
// (tasks, archive, agents, handoff or a list): in tree order, lists in
// their order.
func (s *Snapshot) entities(dir string) ([]entity, error) {
	var subdirs []string
	switch {
	case s.v1 || dir == AgentsDir || dir == HandoffDir:
		subdirs = []string{dir}
	case dir == TasksDir || dir == ArchiveDir:
		for _, b := range buckets {
			subdirs = append(subdirs, dir+"/"+b)
		}
	case isList(dir):
		var err error
		if subdirs, err = s.numberedDirs(dir, 2); err != nil {
			return nil, err
		}
	}
	var out []entity
	for _, d := range subdirs {
		list, err := s.Entries(d)
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			id, ok := idOf(e.Name)
			if !ok || e.IsTree() {
				continue
			}
			x := entity{id: id, blob: e.ID}
			if isList(dir) {
				if x.n, ok = seqOf(e.Name); !ok {
					continue
				}
			}
			out = append(out, x)
		}
	}
	if isList(dir) {
		slices.SortStableFunc(out, func(a, b entity) int { return cmp.Compare(a.n, b.n) })
	}
	return out, nil
}

// numberedDirs lists the directories depth levels under dir whose names
// are numbers, in their order.
func (s *Snapshot) numberedDirs(dir string, depth int) ([]string, error) {
	level := []string{dir}
	for ; depth > 0; depth-- {
		var next []string
		for _, d := range level {
			list, err := s.numberedEntries(d, true)
			if err != nil {
				return nil, err
			}
			for _, e := range list {
				next = append(next, d+"/"+e.Name)
			}
		}
		level = next
	}
	return level, nil
}

// numberedEntries lists the entries of dir (only its directories, with
// dirs) in the order of their names' values: they are zero-padded numbers
// (see numberedOrder).
func (s *Snapshot) numberedEntries(dir string, dirs bool) ([]refstore.TreeEntry, error) {
	list, err := s.Entries(dir)
	if err != nil {
		return nil, err
	}
	out := make([]refstore.TreeEntry, 0, len(list))
	for _, e := range list {
		if !dirs || e.IsTree() {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b refstore.TreeEntry) int { return numberedOrder(a.Name, b.Name) })
	return out, nil
}

// IDs lists the entity ids of a directory of the logical layout (file
// names without .yaml): tasks, archive, agents, handoff.
func (s *Snapshot) IDs(dir string) ([]string, error) {
	es, err := s.entities(dir)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.id
	}
	return ids, nil
}

// listLen is the number of entries of a list: the position of its last.
func (s *Snapshot) listLen(list string) (int, error) {
	if s.v1 {
		es, err := s.entities(list)
		return len(es), err
	}
	dir := list
	for depth := 0; depth < 2; depth++ {
		dirs, err := s.numberedEntries(dir, true)
		if err != nil {
			return 0, err
		}
		if len(dirs) == 0 {
			return 0, nil
		}
		dir += "/" + dirs[len(dirs)-1].Name
	}
	entries, err := s.Entries(dir)
	if err != nil {
		return 0, err
	}
	last := 0
	for _, e := range entries {
		if n, ok := seqOf(e.Name); ok && n > last {
			last = n
		}
	}
	return last, nil
}

// Task reads one task from the board or, failing that, the archive; nil
// when there is none.
func (s *Snapshot) Task(id string) (*contracts.Task, error) {
	for _, dir := range []string{TasksDir, ArchiveDir} {
		t := new(contracts.Task)
		if ok, err := s.decode(EntityFile(dir, id), t); err != nil || ok {
			return t, err
		}
	}
	return nil, nil
}

// Summaries reads the index of the live tasks (TasksDir) or of the
// archived ones (ArchiveDir), in no particular order. A layout 1 tree
// kept no index of the archive, and one of the live tasks that may not
// match them: both are made from the tasks.
func (s *Snapshot) Summaries(dir string) ([]*contracts.TaskSummary, error) {
	if s.v1 {
		var out []*contracts.TaskSummary
		err := s.eachTask(dir, func(t *contracts.Task) error {
			out = append(out, t.Summary())
			return nil
		})
		return out, err
	}
	xs, err := s.Entries(dir)
	if err != nil {
		return nil, err
	}
	var out []*contracts.TaskSummary
	for _, x := range xs {
		if !x.IsTree() || !hexDigit(x.Name) {
			continue
		}
		sums, err := s.summariesUnder(dir, x)
		if err != nil {
			return nil, err
		}
		out = append(out, sums...)
	}
	return out, nil
}

// summaryOf is the index entry of task id of dir (layout 2), or nil.
func (s *Snapshot) summaryOf(dir, id string) (*contracts.TaskSummary, error) {
	e, ok, err := s.entry(dir+"/"+bucket(id), IndexFile)
	if err != nil || !ok {
		return nil, err
	}
	if sums, ok := shardCache.get(e.ID); ok {
		for _, x := range sums {
			if x.ID == id {
				return x, nil
			}
		}
		return nil, nil
	}
	// Not decoded yet: the one line is, as a short-lived command asks
	// about a task or two.
	raw, err := s.Repo.ReadBlobMax(e.ID, MaxIndex)
	if err != nil {
		return nil, err
	}
	return indexEntry(raw, id)
}

// summariesUnder reads the index files of the buckets under x, a <x>
// directory of dir, or takes them from subtreeCache: most of the board's
// <x> directories are the same from one operation to the next, so a
// process that reads the board again and again (a supervisor) reads the
// trees of the few that changed, not 272 trees.
func (s *Snapshot) summariesUnder(dir string, x refstore.TreeEntry) ([]*contracts.TaskSummary, error) {
	if sums, ok := subtreeCache.get(x.ID); ok {
		return sums, nil
	}
	ys, err := s.readDir(dir+"/"+x.Name, x.ID)
	if err != nil {
		return nil, inconsistent("%s/%s at %s: %v", dir, x.Name, short(s.Commit), err)
	}
	var out []*contracts.TaskSummary
	for _, y := range ys {
		if !y.IsTree() || !hexDigit(y.Name) {
			continue
		}
		files, err := s.readDir(dir+"/"+x.Name+"/"+y.Name, y.ID)
		if err != nil {
			return nil, inconsistent("%s/%s/%s at %s: %v", dir, x.Name, y.Name, short(s.Commit), err)
		}
		e, ok := refstore.FindEntry(files, IndexFile)
		if !ok {
			continue
		}
		shard, err := cachedShard(s.Repo, e.ID)
		if err != nil {
			return nil, inconsistent("%s/%s/%s/%s at %s: %v", dir, x.Name, y.Name, IndexFile, short(s.Commit), err)
		}
		out = append(out, shard...)
	}
	subtreeCache.put(x.ID, out)
	return out, nil
}

// hexDigit reports whether name is one lowercase hex digit, a bucket's
// name at either level.
func hexDigit(name string) bool {
	return len(name) == 1 && strings.Contains("0123456789abcdef", name)
}

// eachTask decodes every task of tasks/ or archive/, in tree order.
func (s *Snapshot) eachTask(dir string, fn func(t *contracts.Task) error) error {
	es, err := s.entities(dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		t := new(contracts.Task)
		if err := s.decodeBlob(dir, e, t); err != nil {
			return err
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// decodeBlob decodes an entity file of dir.
func (s *Snapshot) decodeBlob(dir string, e entity, v any) error {
	b, err := s.readFile(dir+"/"+e.id+".yaml", e.blob)
	if err != nil {
		return err
	}
	if err := contracts.DecodeYAML(b, v); err != nil {
		return inconsistent("%s/%s.yaml at %s: %v", dir, e.id, short(s.Commit), err)
	}
	return nil
}

// Planned reads sprint.scope.planned.
func (s *Snapshot) Planned() (contracts.StringList, error) {
	if s.v1 {
		var m Meta
		if _, err := s.decode(MetaFile, &m); err != nil {
			return nil, err
		}
		return m.Sprint.Scope.Planned, nil
	}
	files, err := s.numberedDirs(PlannedDir, 1)
	if err != nil {
		return nil, err
	}
	out := contracts.StringList{}
	for _, d := range files {
		list, err := s.numberedEntries(d, false)
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			b, err := s.readFile(d+"/"+e.Name, e.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, strings.Fields(string(b))...)
		}
	}
	return out, nil
}

// plannedLen is the number of planned ids, and the content of the file
// that holds the last one.
func (s *Snapshot) plannedLen() (int, []byte, error) {
	dir := PlannedDir
	chunks := 0
	for depth := 0; depth < 2; depth++ {
		entries, err := s.numberedEntries(dir, false)
		if err != nil {
			return 0, nil, err
		}
		if len(entries) == 0 {
			return 0, nil, nil
		}
		last := entries[len(entries)-1]
		n := 0
		for _, c := range last.Name {
			n = n*10 + int(c-'0')
		}
		chunks = chunks*64 + n
		if depth == 0 {
			dir += "/" + last.Name
			continue
		}
		b, err := s.readFile(dir+"/"+last.Name, last.ID)
		if err != nil {
			return 0, nil, err
		}
		return chunks*64 + strings.Count(string(b), "\n"), b, nil
	}
	return 0, nil, nil
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
