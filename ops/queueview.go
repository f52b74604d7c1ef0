package ops

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/liza-dev/git-liza/atomicfile"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/proc"
)

// What the merge queue is doing is seen by status, log and the boards.
// The board records what landed and what failed; the batch under test
// lives only in the process that tests it, which says so in a file of
// this repository's git directory (liza/queue.json) while it runs. A
// reader believes the file only while the process that wrote it lives.

// queueFile is the file the merge queue's process keeps while a batch is
// under test.
func (s *Service) queueFile() string {
	return filepath.Join(s.Repo.CommonDir, "liza", "queue.json")
}

// queueTesting is what queue.json holds.
type queueTesting struct {
	Owner   string   `json:"owner"` // proc.Owner
	Batch   []string `json:"batch"`
	Testing []string `json:"testing,omitempty"` // the prefix under test now
	Since   string   `json:"since"`
}

// seeQueue says which tasks are in the batch under test (cands) and which
// of them the running test covers (the first n); with no cands it removes
// the file. Trouble writing it is no reason to stop a merge.
func (s *Service) seeQueue(cands []*candidate, n int) {
	path := s.queueFile()
	if len(cands) == 0 {
		os.Remove(path)
		return
	}
	q := queueTesting{Owner: proc.Me().String(), Batch: candIDs(cands), Since: contracts.FormatTime(time.Now())}
	if n > 0 {
		q.Testing = q.Batch[:n]
	}
	b, err := json.Marshal(q)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = atomicfile.Write(path, b, 0o644)
	}
}

// QueueView is the merge queue as the board and this repository show it.
type QueueView struct {
	// Batch is the batch under test here, in order, and Testing the
	// tasks the running test covers; both empty when none is.
	Batch   []string `json:"batch,omitempty"`
	Testing []string `json:"testing,omitempty"`
	Since   string   `json:"since,omitempty"` // when the batch's current step started
	Owner   string   `json:"owner,omitempty"` // the process testing it
	// Waiting are the approved tasks in the order they merge next
	// (not those of Batch); Blocked the approved tasks that wait for a
	// dependency to merge, with it.
	Waiting []string       `json:"waiting,omitempty"`
	Blocked []QueueBlocked `json:"waiting_for_dependency,omitempty"`
	// Out are the tasks a batch left INTEGRATION_FAILED that are still
	// so, with why.
	Out []QueueOut `json:"failed,omitempty"`
	// MergeBatch is the board's cap of a batch.
	MergeBatch int `json:"merge_batch"`
}

// QueueBlocked is an approved task that waits for a dependency.
type QueueBlocked struct {
	ID    string   `json:"id"`
	Until []string `json:"until"` // its dependencies not yet merged
}

// QueueOut is a task the queue failed, with the reason it recorded.
type QueueOut struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Queue reads the merge queue at the tip of the board: what is under test
// (by this repository's process, while it lives), what waits, and what
// the queue failed, with why.
func (s *Service) Queue(ctx context.Context) (*QueueView, error) {
	st, err := s.State(ctx, "")
	if err != nil {
		return nil, err
	}
	return s.queueView(st), nil
}

// queueView is the queue of the board st, with the batch this
// repository's merge queue has under test.
func (s *Service) queueView(st *contracts.State) *QueueView {
	v := &QueueView{MergeBatch: st.Config.MergeBatchLimit()}
	if q, ok := s.readQueueFile(); ok {
		v.Batch, v.Testing, v.Since, v.Owner = q.Batch, q.Testing, q.Since, q.Owner
	}
	byID := map[string]*contracts.Task{}
	var approved []queueTask
	for _, t := range st.Tasks {
		if t == nil {
			continue
		}
		byID[t.ID] = t
		if t.Status == contracts.Approved {
			approved = append(approved, queueTaskOf(t))
		}
	}
	// A dependency no longer on the live board was archived, which only
	// a finished task is: it is taken as merged here.
	merged := func(id string) bool { t := byID[id]; return t == nil || t.Status == contracts.Merged }
	order, waiting := queueOrder(approved, merged, 0)
	inBatch := map[string]bool{}
	for _, id := range v.Batch {
		inBatch[id] = true
	}
	for _, q := range order {
		if !inBatch[q.ID] {
			v.Waiting = append(v.Waiting, q.ID)
		}
	}
	for _, q := range waiting {
		b := QueueBlocked{ID: q.ID}
		for _, d := range q.DependsOn {
			if !merged(d) {
				b.Until = append(b.Until, d)
			}
		}
		v.Blocked = append(v.Blocked, b)
	}
	for _, t := range st.Tasks {
		if t == nil || t.Status != contracts.IntegrationFailed {
			continue
		}
		for i := len(t.History) - 1; i >= 0; i-- {
			if e := t.History[i]; e != nil && e.Event == "integration_failed" {
				v.Out = append(v.Out, QueueOut{ID: t.ID, Reason: e.Reason})
				break
			}
		}
	}
	return v
}

// Empty reports whether the queue has nothing to show: no batch under
// test, no approved task.
func (v *QueueView) Empty() bool {
	return len(v.Batch) == 0 && len(v.Waiting) == 0 && len(v.Blocked) == 0
}

// readQueueFile reads queue.json when the process that wrote it lives.
func (s *Service) readQueueFile() (queueTesting, bool) {
	var q queueTesting
	f, err := os.Open(s.queueFile())
	if err != nil {
		return q, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil || json.Unmarshal(b, &q) != nil {
		return q, false
	}
	o, ok := proc.ParseOwner(q.Owner)
	if !ok || o.Gone() {
		return q, false
	}
	for _, id := range append(append([]string(nil), q.Batch...), q.Testing...) {
		if contracts.ValidTaskID(id) != nil {
			return q, false
		}
	}
	return q, len(q.Batch) > 0
}
