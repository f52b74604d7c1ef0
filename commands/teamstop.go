package commands

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/liza-dev/git-liza/proc"
)

// What stops a team besides Ctrl-C (issue 27, point 6). git liza run and
// each of its supervisors stop, parking and releasing what they hold, when
// they are told to (SIGINT, SIGTERM, SIGHUP) and when nobody reads their
// output any more (git liza run | head, once head has its lines; a
// supervisor whose run is gone). A supervisor also stops when the run that
// started it ends, however it ends (see proc: the parent-death signal, a
// look at its parent pid, its output closed).

// stopSignals are the signals that stop run and a supervisor gracefully.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// errOutputClosed is why a command stopped once its output was closed.
var errOutputClosed = errors.New("its output was closed")

// errParentGone is why a supervisor stopped once the run that started it
// was gone.
var errParentGone = errors.New("the git liza run that started it is gone")

// keepSIGPIPE makes a write to a closed pipe fail with EPIPE rather than
// end the process: Go's runtime otherwise raises SIGPIPE on such a write
// to stdout or stderr, and the process dies (exit 141 in a shell) before
// it can stop its team or unregister. A handler, unlike an ignored
// signal, is not inherited by the programs this process starts.
func keepSIGPIPE() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// watchOutput returns w, which calls closed once when a write to it finds
// nobody reading (EPIPE), and, when w is a pipe or a terminal this
// process writes, a stop for the watch that calls closed as soon as its
// reader is gone, written to or not.
func watchOutput(w io.Writer, closed func()) (io.Writer, func()) {
	var once sync.Once
	fire := func() { once.Do(closed) }
	stop := func() {}
	if f, ok := w.(*os.File); ok {
		stop = proc.OnClosed(f, fire)
	}
	return &outputWatch{w: w, closed: fire}, stop
}

// outputWatch is a writer that says when its reader is gone.
type outputWatch struct {
	w      io.Writer
	closed func()
}

func (o *outputWatch) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		o.closed()
	}
	return n, err
}

// stopOnOutputClosed is ctx, cancelled with errOutputClosed once w's
// reader is gone, and the writer to use instead of w. stop ends the watch.
func stopOnOutputClosed(ctx context.Context, w io.Writer) (context.Context, io.Writer, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	out, unwatch := watchOutput(w, func() { cancel(errOutputClosed) })
	return ctx, out, func() {
		unwatch()
		cancel(nil)
	}
}
