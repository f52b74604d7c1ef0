package cas

import (
	"runtime"
	"sync"

	"github.com/liza-dev/git-liza/contracts"
)

// parallelFrom is how many task files a read takes before it decodes them
// on more than one processor: below it, starting goroutines costs more
// than it saves.
const parallelFrom = 64

// AllTasks reads every task of tasks/ or archive/, in board order
// (SortTasks): Tasks of the ids the index names.
func (s *Snapshot) AllTasks(dir string) ([]*contracts.Task, error) {
	ids, err := s.boardOrder(dir)
	if err != nil {
		return nil, err
	}
	return s.Tasks(dir, ids)
}

// Tasks reads the tasks ids of tasks/ or archive/, in the order given.
// Decoding each task's YAML is most of what reading thousands of them
// costs, and each decodes on its own: the files are read here, in order
// and within the snapshot's bounds, while as many goroutines as there are
// processors decode them. What goes wrong is reported as reading them one
// after another would: the error of the first task in the order that has
// one (a task the directory lacks is one).
func (s *Snapshot) Tasks(dir string, ids []string) ([]*contracts.Task, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out := make([]*contracts.Task, len(ids))
	errs := make([]error, len(ids))
	decode := func(i int, raw []byte) {
		t := new(contracts.Task)
		if err := contracts.DecodeYAML(raw, t); err != nil {
			errs[i] = inconsistent("%s at %s: %v", EntityFile(dir, ids[i]), short(s.Commit), err)
			return
		}
		out[i] = t
	}
	type job struct {
		i   int
		raw []byte
	}
	var jobs chan job
	var wg sync.WaitGroup
	if workers := runtime.GOMAXPROCS(0); workers > 1 && len(ids) >= parallelFrom {
		jobs = make(chan job, 4*workers)
		for range workers {
			wg.Go(func() {
				for j := range jobs {
					decode(j.i, j.raw)
				}
			})
		}
	}
	for i, id := range ids {
		raw, ok, err := s.ReadFile(EntityFile(dir, id))
		if err == nil && !ok {
			err = contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: the index names task %s, which is not there", id)
		}
		if err != nil {
			errs[i] = err
			break
		}
		if jobs == nil {
			if decode(i, raw); errs[i] != nil {
				break
			}
		} else {
			jobs <- job{i, raw}
		}
	}
	if jobs != nil {
		close(jobs)
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
