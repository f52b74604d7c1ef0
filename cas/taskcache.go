package cas

import (
	"sync"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// TaskCache keeps the tasks a process decoded, by the object id of their
// file, for a process that reads the whole board again each time it moves
// (git liza board, git liza serve): an operation changes one task file or
// two, so the next read decodes those and takes the rest from here.
//
// The tasks it gives are shared, between reads and between goroutines:
// whoever reads through a cache treats them as read-only. It holds what
// the last read of each directory gave, so at most a board's worth.
type TaskCache struct {
	mu   sync.Mutex
	kept map[string]map[refstore.Hash]*contracts.Task // by directory
}

// NewTaskCache is an empty cache.
func NewTaskCache() *TaskCache {
	return &TaskCache{kept: map[string]map[refstore.Hash]*contracts.Task{}}
}

// last is what the last read of dir kept; none without a cache.
func (c *TaskCache) last(dir string) map[refstore.Hash]*contracts.Task {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept[dir]
}

// keep makes m what the last read of dir kept.
func (c *TaskCache) keep(dir string, m map[refstore.Hash]*contracts.Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept[dir] = m
}

// SharedTasks is Tasks through c (Tasks itself when c is nil): a task
// whose file c holds is neither read nor decoded again, and the tasks
// returned are c's, read-only. Errors are Tasks's, the first in the
// order given.
func (s *Snapshot) SharedTasks(dir string, ids []string, c *TaskCache) ([]*contracts.Task, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	last := c.last(dir)
	out := make([]*contracts.Task, len(ids))
	files := make([]refstore.Hash, len(ids))
	var missed []int
	// A task the directory lacks ends the walk; the tasks before it that
	// are read may still have an error that comes first.
	var lacking error
	for i, id := range ids {
		e, ok, err := s.file(EntityFile(dir, id))
		if err == nil && !ok {
			err = missingTask(id)
		}
		if err != nil {
			lacking = err
			break
		}
		files[i] = e.ID
		if t, ok := last[e.ID]; ok {
			out[i] = t
		} else {
			missed = append(missed, i)
		}
	}
	read, err := s.decodeTasks(len(missed), func(j int) (string, []byte, error) {
		i := missed[j]
		p := EntityFile(dir, ids[i])
		raw, err := s.readFile(s.locate(p), files[i])
		return p, raw, err
	})
	if err != nil {
		return nil, err
	}
	if lacking != nil {
		return nil, lacking
	}
	for j, i := range missed {
		out[i] = read[j]
	}
	if c == nil {
		return out, nil
	}
	kept := make(map[refstore.Hash]*contracts.Task, len(ids))
	for i, t := range out {
		kept[files[i]] = t
	}
	c.keep(dir, kept)
	return out, nil
}

// SharedAllTasks is AllTasks through c (see SharedTasks).
func (s *Snapshot) SharedAllTasks(dir string, c *TaskCache) ([]*contracts.Task, error) {
	ids, err := s.boardOrder(dir)
	if err != nil {
		return nil, err
	}
	return s.SharedTasks(dir, ids, c)
}

// missingTask is the error of a task the index names and its directory
// lacks.
func missingTask(id string) error {
	return contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: the index names task %s, which is not there", id)
}
