package cas

import (
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Tx is one attempt at an operation: the snapshot it read plus what the
// operation changed. It is thrown away when the attempt loses the race and a
// fresh one is built on the new tip.
type Tx struct {
	Snap  *Snapshot
	Now   time.Time
	Actor string // who acts: an agent id, empty for the human operator

	subject string
	task    string
	body    string

	cache   map[string]any  // decoded files, by path
	dirty   map[string]bool // paths to write from cache
	deleted map[string]bool // paths to remove
	raw     map[string][]byte
	appends map[string]int // list -> next sequence number
	refs    []refstore.RefUpdate

	index        map[string]*contracts.TaskSummary // live task summaries, loaded on demand
	taskChanged  map[string]bool                   // live tasks put or removed
	rebuildIndex []*contracts.Task                 // set when the stored index must be rebuilt
	rawIndex     []byte                            // the stored index, once read
}

func newTx(snap *Snapshot, now time.Time, agent string) *Tx {
	return &Tx{
		Snap: snap, Now: now, Actor: agent,
		cache: map[string]any{}, dirty: map[string]bool{}, deleted: map[string]bool{},
		raw: map[string][]byte{}, appends: map[string]int{}, taskChanged: map[string]bool{},
	}
}

// ReadTx is a transaction on snap at now for actor that is only read:
// whatever is changed on it is never written.
func ReadTx(snap *Snapshot, now time.Time, actor string) *Tx { return newTx(snap, now, actor) }

// Describe sets the commit subject and the task the operation is about.
func (tx *Tx) Describe(subject, task string) {
	tx.subject, tx.task = subject, task
}

// Body sets a paragraph for the commit message between the subject and
// the trailers: a report that belongs in the audit log.
func (tx *Tx) Body(text string) { tx.body = text }

// MoveRef adds a ref move to the transaction that moves the state ref: both
// move or neither does, and a concurrent move of either is a lost race.
func (tx *Tx) MoveRef(u refstore.RefUpdate) { tx.refs = append(tx.refs, u) }

// NowString is the operation's time in the seed's timestamp format.
func (tx *Tx) NowString() string { return contracts.FormatTime(tx.Now) }

func get[T any](tx *Tx, path string) (*T, error) {
	if tx.deleted[path] {
		return nil, nil
	}
	if v, ok := tx.cache[path]; ok {
		return v.(*T), nil
	}
	v := new(T)
	ok, err := tx.Snap.decode(path, v)
	if err != nil || !ok {
		return nil, err
	}
	tx.cache[path] = v
	return v, nil
}

func (tx *Tx) put(path string, v any) {
	delete(tx.deleted, path)
	tx.cache[path] = v
	tx.dirty[path] = true
}

func (tx *Tx) remove(path string) {
	delete(tx.cache, path)
	delete(tx.dirty, path)
	tx.deleted[path] = true
}

// Meta returns liza.yaml. Call PutMeta after changing it.
func (tx *Tx) Meta() (*Meta, error) {
	m, err := get[Meta](tx, MetaFile)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, ErrNoBoard
	}
	m.Config.FillDefaults()
	return m, nil
}

// PutMeta records a change to liza.yaml.
func (tx *Tx) PutMeta(m *Meta) { tx.put(MetaFile, m) }

// Task returns a live task, or nil when there is none with that id.
func (tx *Tx) Task(id string) (*contracts.Task, error) {
	return get[contracts.Task](tx, entityPath(TasksDir, id))
}

// ArchivedTask returns an archived task, or nil.
func (tx *Tx) ArchivedTask(id string) (*contracts.Task, error) {
	return get[contracts.Task](tx, entityPath(ArchiveDir, id))
}

// AnyTask returns a task from the board or the archive, or nil.
func (tx *Tx) AnyTask(id string) (*contracts.Task, error) {
	t, err := tx.Task(id)
	if t != nil || err != nil {
		return t, err
	}
	return tx.ArchivedTask(id)
}

// MustTask returns a live task or a validation error naming the id.
func (tx *Tx) MustTask(id string) (*contracts.Task, error) {
	if err := contracts.ValidTaskID(id); err != nil {
		return nil, err
	}
	t, err := tx.Task(id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		if a, _ := tx.ArchivedTask(id); a != nil {
			return nil, contracts.Invalidf("task %s is archived", id)
		}
		return nil, contracts.Invalidf("no task %s", id)
	}
	return t, nil
}

// HasTask reports whether id names a live or an archived task, without
// reading either.
func (tx *Tx) HasTask(id string) (live, archived bool, err error) {
	has := func(dir string) (bool, error) {
		p := entityPath(dir, id)
		if tx.deleted[p] {
			return false, nil
		}
		if tx.dirty[p] {
			return true, nil
		}
		_, ok, err := tx.Snap.entry(dir, id+".yaml")
		return ok, err
	}
	if live, err = has(TasksDir); err != nil {
		return
	}
	archived, err = has(ArchiveDir)
	return
}

// TaskIDs lists the live tasks' ids, including those this operation added.
func (tx *Tx) TaskIDs() ([]string, error) { return tx.ids(TasksDir) }

// ArchivedIDs lists the archived tasks' ids.
func (tx *Tx) ArchivedIDs() ([]string, error) { return tx.ids(ArchiveDir) }

func (tx *Tx) ids(dir string) ([]string, error) {
	ids, err := tx.Snap.IDs(dir)
	if err != nil {
		return nil, err
	}
	out := ids[:0:0]
	seen := map[string]bool{}
	for _, id := range ids {
		if !tx.deleted[entityPath(dir, id)] {
			out = append(out, id)
			seen[id] = true
		}
	}
	for p := range tx.dirty {
		if d, name := splitPath(p); d == dir {
			if id, ok := idOf(name); ok && !seen[id] {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// PutTask records a new or changed live task.
func (tx *Tx) PutTask(t *contracts.Task) {
	tx.put(entityPath(TasksDir, t.ID), t)
	tx.taskChanged[t.ID] = true
	if tx.index != nil {
		tx.index[t.ID] = t.Summary()
	}
}

// ArchiveTask moves a live task into the archive.
func (tx *Tx) ArchiveTask(t *contracts.Task) {
	tx.remove(entityPath(TasksDir, t.ID))
	tx.put(entityPath(ArchiveDir, t.ID), t)
	tx.taskChanged[t.ID] = true
	if tx.index != nil {
		delete(tx.index, t.ID)
	}
}

// Index returns a summary of every live task (see IndexFile), including
// this operation's changes so far. Treat it as read-only.
func (tx *Tx) Index() (map[string]*contracts.TaskSummary, error) {
	if tx.index == nil {
		idx, err := tx.loadIndex()
		if err != nil {
			return nil, err
		}
		for id := range tx.taskChanged {
			if t, ok := tx.cache[entityPath(TasksDir, id)].(*contracts.Task); ok && !tx.deleted[entityPath(TasksDir, id)] {
				idx[id] = t.Summary()
			} else {
				delete(idx, id)
			}
		}
		tx.index = idx
	}
	return tx.index, nil
}

func (tx *Tx) loadIndex() (map[string]*contracts.TaskSummary, error) {
	if tx.rebuildIndex != nil {
		return buildIndex(tx.rebuildIndex), nil
	}
	b, ok, err := tx.storedIndex()
	if err != nil {
		return nil, err
	}
	if ok {
		idx, err := decodeIndex(b)
		if err != nil {
			return nil, inconsistent("%s: %v", IndexFile, err)
		}
		return idx, nil
	}
	if !tx.Snap.Exists() {
		return map[string]*contracts.TaskSummary{}, nil
	}
	// A state written without an index: build it from the tasks once.
	st, err := tx.Snap.Load()
	if err != nil {
		return nil, err
	}
	tx.rebuildIndex = st.Tasks
	return buildIndex(st.Tasks), nil
}

// Agent returns an agent, or nil.
func (tx *Tx) Agent(id string) (*contracts.Agent, error) {
	return get[contracts.Agent](tx, entityPath(AgentsDir, id))
}

// PutAgent records a new or changed agent.
func (tx *Tx) PutAgent(id string, a *contracts.Agent) { tx.put(entityPath(AgentsDir, id), a) }

// RemoveAgent deletes an agent's entry.
func (tx *Tx) RemoveAgent(id string) { tx.remove(entityPath(AgentsDir, id)) }

// AgentIDs lists the agents' ids.
func (tx *Tx) AgentIDs() ([]string, error) { return tx.ids(AgentsDir) }

// PutHandoff records a task's handoff.
func (tx *Tx) PutHandoff(task string, h *contracts.Handoff) {
	tx.put(entityPath(HandoffDir, task), h)
}

// Append adds an entry at the end of an append-only list and returns its
// 1-based position.
func (tx *Tx) Append(list string, v any) (int, error) {
	n, ok := tx.appends[list]
	if !ok {
		count, err := tx.Snap.count(list)
		if err != nil {
			return 0, err
		}
		n = count + 1
	}
	tx.appends[list] = n + 1
	tx.put(list+"/"+seqName(n), v)
	return n, nil
}

// ListLen is the number of entries in an append-only list, including those
// this operation appended.
func (tx *Tx) ListLen(list string) (int, error) {
	if n, ok := tx.appends[list]; ok {
		return n - 1, nil
	}
	return tx.Snap.count(list)
}

// Anomalies returns every anomaly, in order.
func (tx *Tx) Anomalies() ([]*contracts.Anomaly, error) {
	return txList[contracts.Anomaly](tx, ListAnomalies)
}

// Discoveries returns every discovery, in order.
func (tx *Tx) Discoveries() ([]*contracts.Discovery, error) {
	return txList[contracts.Discovery](tx, ListDiscovered)
}

// PutDiscovery rewrites the n-th (1-based) discovery, to record its
// conversion into a task.
func (tx *Tx) PutDiscovery(n int, d *contracts.Discovery) {
	tx.put(ListDiscovered+"/"+seqName(n), d)
}

func txList[T any](tx *Tx, list string) ([]*T, error) {
	n, err := tx.ListLen(list)
	if err != nil {
		return nil, err
	}
	out := make([]*T, 0, n)
	for i := 1; i <= n; i++ {
		v, err := get[T](tx, list+"/"+seqName(i))
		if err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// putRaw writes bytes as they are (request records).
func (tx *Tx) putRaw(path string, b []byte) {
	delete(tx.deleted, path)
	tx.raw[path] = b
}

// changed reports whether the operation changed anything.
func (tx *Tx) changed() bool {
	return len(tx.dirty)+len(tx.deleted)+len(tx.raw) > 0 || tx.rebuildIndex != nil
}

// writeTree stores the changed files and returns the new root tree.
func (tx *Tx) writeTree() (refstore.Hash, error) {
	files := map[string][]byte{}
	for p := range tx.dirty {
		b, err := contracts.EncodeYAML(tx.cache[p])
		if err != nil {
			return refstore.Hash{}, err
		}
		files[p] = b
	}
	for p, b := range tx.raw {
		files[p] = b
	}
	for p := range tx.deleted {
		files[p] = nil
	}
	if len(tx.taskChanged) > 0 || tx.rebuildIndex != nil {
		b, err := tx.newIndex()
		if err != nil {
			return refstore.Hash{}, err
		}
		files[IndexFile] = b
	}
	return applyFiles(tx.Snap, "", files)
}

// newIndex is the index after this operation's changes: the stored one
// with the changed tasks' lines rewritten, or rebuilt whole when there is
// none to patch.
func (tx *Tx) newIndex() ([]byte, error) {
	if tx.rebuildIndex == nil {
		raw, ok, err := tx.storedIndex()
		if err != nil {
			return nil, err
		}
		if ok {
			changed := make(map[string]*contracts.TaskSummary, len(tx.taskChanged))
			for id := range tx.taskChanged {
				changed[id] = nil
				if t, ok := tx.cache[entityPath(TasksDir, id)].(*contracts.Task); ok && !tx.deleted[entityPath(TasksDir, id)] {
					changed[id] = t.Summary()
				}
			}
			b, err := patchIndex(raw, changed)
			if err != nil {
				return nil, inconsistent("%s: %v", IndexFile, err)
			}
			return b, nil
		}
	}
	tx.index = nil // re-apply every change as it stands now
	idx, err := tx.Index()
	if err != nil {
		return nil, err
	}
	return encodeIndex(idx), nil
}

// storedIndex is the index file of the snapshot, read once.
func (tx *Tx) storedIndex() ([]byte, bool, error) {
	if tx.rawIndex == nil {
		b, ok, err := tx.Snap.ReadFile(IndexFile)
		if err != nil || !ok {
			return nil, ok, err
		}
		tx.rawIndex = b
	}
	return tx.rawIndex, true, nil
}
