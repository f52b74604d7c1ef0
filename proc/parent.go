package proc

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"time"
)

// Processes that must not outlive the one that started them (git liza
// run's supervisors) are tied to it three ways, so that no single way
// failing leaves one running:
//   - DieWithParent: on Linux the kernel sends the child SIGTERM when its
//     parent ends, however it ends (SIGKILL included);
//   - WatchParent: the child looks every so often whether its parent is
//     still the one it was given, for systems without the first;
//   - OnClosed: the child's output is a pipe its parent reads; on Linux
//     the child learns at once when nobody reads it any more.

// Spawner starts processes from one goroutine locked to its own OS thread
// for as long as the Spawner is open. Linux sends the parent-death signal
// (DieWithParent) when the *thread* that started a child ends, not the
// process: a child started from an ordinary goroutine would be signalled
// whenever the runtime let that thread go (a goroutine that ends while
// locked to its thread takes the thread with it; see Go issue 27505).
// The Spawner's thread ends with the process, or after Close, which must
// wait until every child it started has ended.
type Spawner struct {
	req  chan spawn
	quit chan struct{}
}

type spawn struct {
	cmd  *exec.Cmd
	done chan error
}

// NewSpawner starts the Spawner's goroutine and locks it to its thread.
func NewSpawner() *Spawner {
	s := &Spawner{req: make(chan spawn), quit: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		close(ready)
		for {
			select {
			case r := <-s.req:
				r.done <- r.cmd.Start()
			case <-s.quit:
				// Unlocked, the thread goes back to the runtime rather
				// than ending: a child still running is not signalled.
				runtime.UnlockOSThread()
				return
			}
		}
	}()
	<-ready
	return s
}

// Start starts cmd from the Spawner's thread (exec.Cmd.Start).
func (s *Spawner) Start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	select {
	case s.req <- spawn{cmd, done}:
	case <-s.quit:
		return os.ErrClosed
	}
	return <-done
}

// Close lets the Spawner's goroutine end. Call it once every process it
// started has ended.
func (s *Spawner) Close() { close(s.quit) }

// WatchParent calls gone, once, when this process's parent is no longer
// the process parent: it ended, and the system handed this process to
// another (init, or a subreaper). It looks every interval until ctx ends.
// A parent that is already gone when it is called is noticed at the first
// look.
func WatchParent(ctx context.Context, parent int, every time.Duration, gone func()) {
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if os.Getppid() != parent {
				gone()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}
