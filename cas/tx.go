package cas

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
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
	// Rules is the rule set the operation follows (contracts.Rules for a
	// new one; a replayed commit's own, from its Liza-Rules trailer).
	Rules int
	// Takeover, when set, is the time leases held by others are judged
	// at (see TakeoverTime): a verifier's. Zero in a live operation.
	Takeover time.Time

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
	rebuildIndex *Rebuild                          // set when the stored indexes must be rebuilt
	inflight     []*contracts.TaskSummary          // claims/inflight as the parent has it, read on demand
	// inflightNow is what InFlight last returned, until a task is put or
	// archived (a listing of the claimable tasks asks once per task).
	inflightNow map[string]*contracts.TaskSummary

	plannedHave int      // planned ids at the snapshot, -1 until read
	plannedLast []byte   // the file holding the last of them
	plannedNew  []string // ids this operation planned
	plannedGone bool     // the operation emptied sprint.scope.planned

	chosen json.RawMessage // the input the operation chose (Choose)
}

// Choose records input as the operation's input, in place of the one it
// was started with: an operation that chooses what it does on the state it
// applies to (a claim that picks its task and base there) records its
// choice, which a replay of the commit then applies as given. The choice
// must keep what was asked (the input's "asked" part), which a request id
// remembers.
func (tx *Tx) Choose(input json.RawMessage) { tx.chosen = input }

// Rebuild is the tasks of a state whose stored indexes do not match them:
// an operation on it writes them anew (see RebuildIndex).
type Rebuild struct {
	Tasks, Archive []*contracts.Task
}

func newTx(snap *Snapshot, now time.Time, agent string) *Tx {
	return &Tx{
		Snap: snap, Now: now, Actor: agent, Rules: contracts.Rules,
		cache: map[string]any{}, dirty: map[string]bool{}, deleted: map[string]bool{},
		raw: map[string][]byte{}, appends: map[string]int{}, taskChanged: map[string]bool{},
		plannedHave: -1,
	}
}

// ReadTx is a transaction on snap at now for actor under the current rules
// that is only read: whatever is changed on it is never written.
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
	return get[contracts.Task](tx, EntityFile(TasksDir, id))
}

// TaskFileID is the object id of a live task's file as the parent state
// keeps it, without reading it: false when the operation changed the task
// or the board has no such task.
func (tx *Tx) TaskFileID(id string) (refstore.Hash, bool, error) {
	if tx.taskChanged[id] {
		return refstore.Hash{}, false, nil
	}
	h, err := tx.Snap.FileID(EntityFile(TasksDir, id))
	return h, err == nil && !h.IsZero(), err
}

// ArchivedTask returns an archived task, or nil.
func (tx *Tx) ArchivedTask(id string) (*contracts.Task, error) {
	return get[contracts.Task](tx, EntityFile(ArchiveDir, id))
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
		p := EntityFile(dir, id)
		if tx.deleted[p] {
			return false, nil
		}
		if tx.dirty[p] {
			return true, nil
		}
		_, ok, err := tx.Snap.file(p)
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
		if !tx.deleted[EntityFile(dir, id)] {
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
	tx.put(EntityFile(TasksDir, t.ID), t)
	tx.taskChanged[t.ID] = true
	tx.inflightNow = nil
	if tx.index != nil {
		tx.index[t.ID] = t.Summary()
	}
}

// ArchiveTask moves a live task into the archive.
func (tx *Tx) ArchiveTask(t *contracts.Task) {
	tx.remove(EntityFile(TasksDir, t.ID))
	tx.put(EntityFile(ArchiveDir, t.ID), t)
	tx.taskChanged[t.ID] = true
	tx.inflightNow = nil
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
			if t, ok := tx.cache[EntityFile(TasksDir, id)].(*contracts.Task); ok && !tx.deleted[EntityFile(TasksDir, id)] {
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
		return buildIndex(tx.rebuildIndex.Tasks), nil
	}
	sums, err := tx.Snap.Summaries(TasksDir)
	if err != nil {
		return nil, err
	}
	idx := make(map[string]*contracts.TaskSummary, len(sums))
	for _, x := range sums {
		idx[x.ID] = x
	}
	return idx, nil
}

// Agent returns an agent, or nil.
func (tx *Tx) Agent(id string) (*contracts.Agent, error) {
	return get[contracts.Agent](tx, EntityFile(AgentsDir, id))
}

// PutAgent records a new or changed agent.
func (tx *Tx) PutAgent(id string, a *contracts.Agent) { tx.put(EntityFile(AgentsDir, id), a) }

// RemoveAgent deletes an agent's entry.
func (tx *Tx) RemoveAgent(id string) { tx.remove(EntityFile(AgentsDir, id)) }

// AgentIDs lists the agents' ids.
func (tx *Tx) AgentIDs() ([]string, error) { return tx.ids(AgentsDir) }

// PutHandoff records a task's handoff.
func (tx *Tx) PutHandoff(task string, h *contracts.Handoff) {
	tx.put(EntityFile(HandoffDir, task), h)
}

// Append adds an entry at the end of an append-only list and returns its
// 1-based position.
func (tx *Tx) Append(list string, v any) (int, error) {
	n, ok := tx.appends[list]
	if !ok {
		count, err := tx.Snap.listLen(list)
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
	return tx.Snap.listLen(list)
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
// changedFiles lists the logical paths the transaction writes or
// removes.
func (tx *Tx) changedFiles() []string {
	out := make([]string, 0, len(tx.dirty)+len(tx.deleted))
	for p := range tx.dirty {
		out = append(out, p)
	}
	for p := range tx.deleted {
		out = append(out, p)
	}
	return out
}

// bells lists the files whose bells a move of the transaction rings
// (refstore.Ring): those it writes or removes, but liza.yaml when only the
// sprint's metrics changed in it. Every merge recomputes them, nobody
// waits for them, and the bell of liza.yaml woke every coder waiting for
// its review at every merge.
func (tx *Tx) bells() []string {
	out := tx.changedFiles()
	if tx.dirty[MetaFile] && tx.metricsOnly() {
		out = slices.DeleteFunc(out, func(p string) bool { return p == MetaFile })
	}
	return out
}

// metricsOnly reports whether liza.yaml, as the transaction writes it,
// differs from the snapshot's in the sprint's metrics alone.
func (tx *Tx) metricsOnly() bool {
	now, ok := tx.cache[MetaFile].(*Meta)
	was := new(Meta)
	if found, err := tx.Snap.decode(MetaFile, was); !ok || err != nil || !found {
		return false
	}
	was.Config.FillDefaults() // as Meta gave it to the operation
	cut := *now
	cut.Sprint.Metrics, was.Sprint.Metrics = nil, nil
	return reflect.DeepEqual(&cut, was)
}

func (tx *Tx) changed() bool {
	return len(tx.dirty)+len(tx.deleted)+len(tx.raw) > 0 || tx.rebuildIndex != nil || tx.plannedGone
}

// Plan adds a task to sprint.scope.planned.
func (tx *Tx) Plan(id string) error {
	if tx.plannedGone {
		return fmt.Errorf("internal error: a task planned in the operation that empties sprint.scope.planned")
	}
	if tx.plannedHave < 0 {
		n, last, err := tx.Snap.plannedLen()
		if err != nil {
			return err
		}
		tx.plannedHave, tx.plannedLast = n, last
	}
	tx.plannedNew = append(tx.plannedNew, id)
	return nil
}

// Planned is sprint.scope.planned, with what this operation planned.
func (tx *Tx) Planned() (contracts.StringList, error) {
	if tx.plannedGone {
		return contracts.StringList{}, nil
	}
	ids, err := tx.Snap.Planned()
	return append(ids, tx.plannedNew...), err
}

// UnplanAll empties sprint.scope.planned (a new sprint starts with no
// plan): planned/ goes from the tree whole, whatever its size.
func (tx *Tx) UnplanAll() {
	tx.plannedGone = true
	tx.plannedNew = nil
	tx.plannedHave, tx.plannedLast = 0, nil
}

// writeTree stores the changed files and returns the new root tree, in
// layout 2.
func (tx *Tx) writeTree() (refstore.Hash, error) {
	if tx.Snap.v1 {
		return refstore.Hash{}, fmt.Errorf("internal error: an operation writes on a layout 1 tree")
	}
	files := map[string][]byte{}
	for p := range tx.dirty {
		v := tx.cache[p]
		if m, ok := v.(*Meta); ok && len(m.Sprint.Scope.Planned) > 0 {
			return refstore.Hash{}, fmt.Errorf("internal error: planned ids set in %s (Tx.Plan adds them)", MetaFile)
		}
		b, err := contracts.EncodeYAML(v)
		if err != nil {
			return refstore.Hash{}, err
		}
		files[locate2(p)] = b
	}
	for p, b := range tx.raw {
		files[locate2(p)] = b
	}
	for p := range tx.deleted {
		files[locate2(p)] = nil
	}
	if !tx.Snap.Exists() {
		files[LayoutFile] = []byte(layoutV2)
	}
	was, now, err := tx.writeIndexes(files)
	if err != nil {
		return refstore.Hash{}, err
	}
	if tx.Rules >= contracts.RulesClaimIndex {
		if err := tx.writeClaims(files, was, now); err != nil {
			return refstore.Hash{}, err
		}
	}
	if tx.plannedGone {
		files[PlannedDir] = nil
	}
	for p, b := range plannedFiles(tx.plannedNew, max(tx.plannedHave, 0), tx.plannedLast) {
		files[p] = b
	}
	return applyFiles(tx.Snap, "", files)
}

// writeIndexes adds to files the index of every directory of tasks/ and
// archive/ whose tasks changed: the stored one with the changed tasks'
// lines rewritten, or, when the stored ones must be rebuilt, every one.
// It returns the live tasks that changed as the parent's index had them
// (was) and as they are now (now: nil for a task that left the board);
// both are nil when the indexes are rebuilt.
func (tx *Tx) writeIndexes(files map[string][]byte) (was, now map[string]*contracts.TaskSummary, err error) {
	was, now = map[string]*contracts.TaskSummary{}, map[string]*contracts.TaskSummary{}
	for _, dir := range []string{TasksDir, ArchiveDir} {
		changed := map[string]map[string]*contracts.TaskSummary{} // bucket -> id -> summary (nil: gone)
		mark := func(p string) {
			d, name := splitPath(p)
			id, ok := idOf(name)
			if d != dir || !ok {
				return
			}
			b := bucket(id)
			if changed[b] == nil {
				changed[b] = map[string]*contracts.TaskSummary{}
			}
			changed[b][id] = nil
			if t, ok := tx.cache[p].(*contracts.Task); ok && tx.dirty[p] {
				changed[b][id] = t.Summary()
			}
		}
		for p := range tx.dirty {
			mark(p)
		}
		for p := range tx.deleted {
			mark(p)
		}
		if tx.rebuildIndex != nil {
			all := tx.rebuildIndex.Tasks
			if dir == ArchiveDir {
				all = tx.rebuildIndex.Archive
			}
			full := map[string]map[string]*contracts.TaskSummary{}
			for _, b := range buckets {
				full[b] = map[string]*contracts.TaskSummary{}
			}
			for _, t := range all {
				full[bucket(t.ID)][t.ID] = t.Summary()
			}
			for b, ids := range changed {
				for id, x := range ids {
					if x == nil {
						delete(full[b], id)
					} else {
						full[b][id] = x
					}
				}
			}
			for b, idx := range full {
				files[dir+"/"+b+"/"+IndexFile] = nil
				if len(idx) > 0 {
					files[dir+"/"+b+"/"+IndexFile] = encodeIndex(idx)
				}
			}
			was, now = nil, nil
			continue
		}
		for b, ids := range changed {
			path := dir + "/" + b + "/" + IndexFile
			var raw []byte
			if e, ok, err := tx.Snap.entry(dir+"/"+b, IndexFile); err != nil {
				return nil, nil, err
			} else if ok {
				if raw, err = tx.Snap.Repo.ReadBlob(e.ID); err != nil {
					return nil, nil, inconsistent("reading %s: %v", path, err)
				}
			}
			out, err := patchIndex(raw, ids)
			if err != nil {
				return nil, nil, inconsistent("%s: %v", path, err)
			}
			files[path] = out
			if dir != TasksDir {
				continue
			}
			for id := range ids {
				if raw == nil {
					break
				}
				t, err := indexEntry(raw, id)
				if err != nil {
					return nil, nil, inconsistent("%s: %v", path, err)
				}
				if t != nil {
					was[id] = t
				}
			}
			for id, t := range ids {
				now[id] = t
			}
		}
	}
	return was, now, nil
}
