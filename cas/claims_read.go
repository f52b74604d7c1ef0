package cas

// Reading the claim index (see claims.go) in an operation.

import (
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// liveNow is every live task's summary as the operation leaves them.
func (tx *Tx) liveNow() ([]*contracts.TaskSummary, error) {
	idx, err := tx.loadIndex()
	if err != nil {
		return nil, err
	}
	for id := range tx.taskChanged {
		delete(idx, id)
		if t := tx.liveTask(id); t != nil {
			idx[id] = t.Summary()
		}
	}
	out := make([]*contracts.TaskSummary, 0, len(idx))
	for _, t := range idx {
		out = append(out, t)
	}
	return out, nil
}

// liveTask is a live task this operation changed, as it is now, or nil
// when it left the board.
func (tx *Tx) liveTask(id string) *contracts.Task {
	p := EntityFile(TasksDir, id)
	if tx.deleted[p] {
		return nil
	}
	t, _ := tx.cache[p].(*contracts.Task)
	return t
}

// claimIndex reports whether the operation may read the claim index:
// the parent keeps one and its indexes are not being rebuilt.
func (tx *Tx) claimIndex() (bool, error) {
	if tx.rebuildIndex != nil || tx.Snap.v1 || !tx.Snap.Exists() {
		return false, nil
	}
	return tx.Snap.keptClaims()
}

// InFlight returns the summary of every live task in flight, with this
// operation's changes so far, by id. It reads claims/inflight where the
// state keeps it, else the whole index. Treat it as read-only.
func (tx *Tx) InFlight() (map[string]*contracts.TaskSummary, error) {
	if tx.inflightNow != nil {
		return tx.inflightNow, nil
	}
	out, err := tx.inFlight()
	if err == nil {
		tx.inflightNow = out
	}
	return out, err
}

func (tx *Tx) inFlight() (map[string]*contracts.TaskSummary, error) {
	ok, err := tx.claimIndex()
	if err != nil {
		return nil, err
	}
	out := map[string]*contracts.TaskSummary{}
	if !ok || tx.index != nil {
		idx, err := tx.Index()
		if err != nil {
			return nil, err
		}
		for id, t := range idx {
			if inFlight(t) {
				out[id] = t
			}
		}
		return out, nil
	}
	if tx.inflight == nil {
		raw, _, err := tx.Snap.ReadFile(inflightFile)
		if err != nil {
			return nil, err
		}
		if tx.inflight, err = decodeIndex(raw); err != nil {
			return nil, inconsistent("%s: %v", inflightFile, err)
		}
	}
	for _, t := range tx.inflight {
		out[t.ID] = t
	}
	for id := range tx.taskChanged {
		delete(out, id)
		if t := tx.liveTask(id); t != nil && t.Status.InFlight() {
			out[id] = t.Summary()
		}
	}
	return out, nil
}

// Summary is a live task's index entry, with this operation's changes,
// or nil: one directory's index is read, not the board's.
func (tx *Tx) Summary(id string) (*contracts.TaskSummary, error) {
	if tx.index != nil {
		return tx.index[id], nil
	}
	if tx.taskChanged[id] {
		if t := tx.liveTask(id); t != nil {
			return t.Summary(), nil
		}
		return nil, nil
	}
	if tx.rebuildIndex != nil || tx.Snap.v1 {
		idx, err := tx.Index()
		if err != nil {
			return nil, err
		}
		return idx[id], nil
	}
	return tx.Snap.summaryOf(TasksDir, id)
}

// EachQueued calls fn with the UNCLAIMED tasks in claim order (ClaimKey)
// until it returns false. Where the state keeps a claim index only the
// chunks up to the one where fn stops are read; otherwise, and when this
// operation changed a task, the whole index is sorted.
func (tx *Tx) EachQueued(fn func(t *contracts.TaskSummary) (bool, error)) error {
	ok, err := tx.claimIndex()
	if err != nil {
		return err
	}
	if !ok || len(tx.taskChanged) > 0 {
		idx, err := tx.Index()
		if err != nil {
			return err
		}
		var q []queueEntry
		for _, t := range idx {
			if inQueue(t) {
				q = append(q, queueEntry{key: ClaimKey(t)})
			}
		}
		slices.SortFunc(q, func(a, b queueEntry) int { return strings.Compare(a.key, b.key) })
		for _, e := range q {
			id := e.key[strings.LastIndexByte(e.key, '!')+1:]
			if more, err := fn(idx[id]); err != nil || !more {
				return err
			}
		}
		return nil
	}
	return tx.Snap.eachChunk(func(path string, id refstore.Hash) (bool, error) {
		raw, err := tx.Snap.readFile(path, id)
		if err != nil {
			return false, err
		}
		es, err := decodeChunk(raw)
		if err != nil {
			return false, inconsistent("%s: %v", path, err)
		}
		for _, e := range es {
			t, err := e.summary()
			if err != nil {
				return false, inconsistent("%s: %v", path, err)
			}
			if more, err := fn(t); err != nil || !more {
				return false, err
			}
		}
		return true, nil
	})
}
