package refstore

import (
	"os"
	"path/filepath"
	"sync"
)

// RefWatch tells a process that sleeps until a ref moves when the ref's
// loose file may have changed, so that it need not look at the file over
// and over: on a small virtual machine each look of a sleeping Go process
// costs about a tenth of a millisecond of processor time, and a team's
// supervisors looked a hundred times a second each.
//
// It watches, through fsnotify (inotify on Linux, kqueue on macOS), the
// directory that holds the ref's loose file for events that name the
// ref: a lock file renamed over it, as git's files backend moves a ref, a
// write in place, its removal by pack-refs. A signal on C means only
// "look again": signals coalesce and never say what the value is, and a
// process must read the ref after each signal it takes. A ref git keeps
// elsewhere (another ref storage, or a ref read through git's plumbing),
// a directory that does not exist yet (git may remove refs/liza when it
// packs every ref under it) and systems without file notification are
// not watched: Watching then reports false, until Rearm finds the
// directory, and the caller looks at the ref as often as it would without
// a watch.
type RefWatch struct {
	signals
	dir  string
	base string
	mu   sync.Mutex
	on   bool // the directory is watched
}

// signals is what a RefWatch and Bells share: one goroutine turns the
// events of a notifier that concern the watcher into signals on C, which
// coalesce.
type signals struct {
	C    <-chan struct{}
	c    chan struct{}
	n    notifier // nil when nothing is watched
	done chan struct{}
}

func newSignals() signals {
	c := make(chan struct{}, 1)
	return signals{C: c, c: c, done: make(chan struct{})}
}

// start signals, from now until stop, each event of n whose name keep
// takes.
func (s *signals) start(n notifier, keep func(name string) bool) {
	s.n = n
	go func() {
		defer close(s.done)
		for {
			names, ok := n.next()
			if !ok {
				return
			}
			for _, name := range names {
				if keep(name) {
					s.signal()
				}
			}
		}
	}()
}

func (s *signals) signal() {
	select {
	case s.c <- struct{}{}:
	default:
	}
}

// stop ends the watch, once its goroutine is done.
func (s *signals) stop() {
	if s.n != nil {
		s.n.close()
		<-s.done
	}
}

// notifier is the system's file notification for a directory of refs, or
// for bells.
type notifier interface {
	// add watches a directory for ref moves, or a bell for its rings;
	// false when it cannot.
	add(path string) bool
	// next blocks until events come, and returns the names they concern
	// ("" for the directory itself: it was removed or moved, and is no
	// longer watched); ok is false once closed.
	next() (names []string, ok bool)
	close()
}

// WatchRef starts watching ref name. It never fails: a ref it cannot watch
// gives a RefWatch that is not Watching.
func (r *Repo) WatchRef(name string) *RefWatch {
	rw := &RefWatch{signals: newSignals()}
	if r.plumbing != "" || !validRefPath(name) {
		return rw
	}
	p := filepath.Join(r.CommonDir, filepath.FromSlash(name))
	rw.dir, rw.base = filepath.Dir(p), filepath.Base(p)
	n := newNotifier()
	if n == nil {
		return rw
	}
	rw.start(n, func(name string) bool {
		if name == "" { // watch the directory again when it is back
			rw.mu.Lock()
			rw.on = false
			rw.mu.Unlock()
			return true
		}
		return name == rw.base
	})
	rw.Rearm()
	return rw
}

// Watching reports whether a move of the ref is signalled. A nil RefWatch
// watches nothing.
func (rw *RefWatch) Watching() bool {
	if rw == nil {
		return false
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.on
}

// Rearm watches the ref's directory again when it was not watched (it did
// not exist, or it was removed), and signals when it does, since the ref
// may have moved while it was not watched.
func (rw *RefWatch) Rearm() {
	if rw == nil || rw.n == nil {
		return
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.on {
		return
	}
	if fi, err := os.Stat(rw.dir); err != nil || !fi.IsDir() {
		return
	}
	if rw.n.add(rw.dir) {
		rw.on = true
		rw.signal()
	}
}

// Close stops the watch.
func (rw *RefWatch) Close() {
	if rw != nil {
		rw.stop()
	}
}
