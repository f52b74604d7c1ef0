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
	return s.SharedAllTasks(dir, nil)
}

// Tasks reads the tasks ids of tasks/ or archive/, in the order given.
// Decoding each task's YAML is most of what reading thousands of them
// costs, and each decodes on its own (see decodeTasks). What goes wrong
// is reported as reading them one after another would: the error of the
// first task in the order that has one (a task the directory lacks is
// one).
func (s *Snapshot) Tasks(dir string, ids []string) ([]*contracts.Task, error) {
	return s.SharedTasks(dir, ids, nil)
}

// decodeTasks decodes n task files, read by read (which gives each one's
// path and content) in order, here and within the snapshot's bounds,
// while as many goroutines as there are processors decode them. The
// error is the first in the order, as one read after another reports it.
func (s *Snapshot) decodeTasks(n int, read func(i int) (string, []byte, error)) ([]*contracts.Task, error) {
	if n == 0 {
		return nil, nil
	}
	out := make([]*contracts.Task, n)
	errs := make([]error, n)
	type job struct {
		i    int
		path string
		raw  []byte
	}
	decode := func(j job) {
		t := new(contracts.Task)
		if err := contracts.DecodeYAML(j.raw, t); err != nil {
			errs[j.i] = inconsistent("%s at %s: %v", j.path, short(s.Commit), err)
			return
		}
		out[j.i] = t
	}
	var jobs chan job
	var wg sync.WaitGroup
	if workers := runtime.GOMAXPROCS(0); workers > 1 && n >= parallelFrom {
		jobs = make(chan job, 4*workers)
		for range workers {
			wg.Go(func() {
				for j := range jobs {
					decode(j)
				}
			})
		}
	}
	for i := range n {
		p, raw, err := read(i)
		if err != nil {
			errs[i] = err
			break
		}
		if jobs == nil {
			if decode(job{i, p, raw}); errs[i] != nil {
				break
			}
		} else {
			jobs <- job{i, p, raw}
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
