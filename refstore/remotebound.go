package refstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultRemoteTimeout bounds a fetch, push or listing that moves only the
// board's refs when liza.remoteTimeout is not set. A remote that accepts
// the connection and then never answers (a hung server, a connection a
// network change left half open) would otherwise hold the command, and
// the supervisor running it, for as long as the connection stays up:
// hours, or for good. A board's refs are small; the bound leaves room for
// the first fetch of a board of tens of thousands of tasks on a slow link.
const DefaultRemoteTimeout = 2 * time.Minute

// codeTimeoutFactor is how many times that bound a transfer that carries
// code (a task's branch, the integration branch, a partial clone's
// missing objects) may take: those can be a whole project's history.
const codeTimeoutFactor = 15

// RemoteTimeout is the bound on one git command that talks to a remote:
// liza.remoteTimeout (a duration such as 90s or 5m, or a number of
// seconds; at least a second), or DefaultRemoteTimeout, for the board's
// refs; 15 times that when code moves.
func (r *Repo) RemoteTimeout(code bool) time.Duration {
	d := DefaultRemoteTimeout
	if v, ok := r.Config("liza.remotetimeout"); ok {
		if got, ok := parseTimeout(v); ok {
			d = got
		}
	}
	if code {
		d *= codeTimeoutFactor
	}
	return d
}

// parseTimeout reads a duration or a number of seconds, of at least a
// second.
func parseTimeout(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, false
		}
		d = time.Duration(n) * time.Second
	}
	return d, d >= time.Second
}

// errRemoteSlow ends a git command past its remote timeout.
var errRemoteSlow = errors.New("the remote took too long")

// remoteGit runs git with args in this repository, as Git does, bounded by
// RemoteTimeout(code): past it git is stopped with the processes it
// started (ssh, a remote helper, index-pack, whose partial pack goes with
// it), and the error says the remote did not answer in time, as an
// unreachable remote (exit 3). A push that timed out may still have
// landed; the next operation reads the remote's board and finds it there
// by its request id. A git that failed on its own has the temporary files
// it left in objects/pack removed (removeLeftTemps).
func (r *Repo) remoteGit(ctx context.Context, remote string, code bool, stdin []byte, args ...string) ([]byte, error) {
	// git runs in a process group of its own, which a signal to this
	// process's group does not reach: a command that would die of it
	// stops git first.
	ctx, stop := SignalContext(ctx)
	defer stop()
	d := r.RemoteTimeout(code)
	ctx, cancel := context.WithTimeoutCause(ctx, d, errRemoteSlow)
	defer cancel()
	objects := filepath.Join(r.CommonDir, "objects")
	temps := packTemps(objects)
	out, _, err := execGitOpts(ctx, gitRun{dir: r.Dir(), env: containGit(nil, args), stdin: stdin, args: args, max: -1,
		group: true, objects: objects})
	if err == nil {
		return out, nil
	}
	if ctx.Err() == nil {
		removeLeftTemps(objects, temps)
		return out, err
	}
	name := args[0]
	if name == "-c" && len(args) > 2 {
		name = args[2]
	}
	if cause := context.Cause(ctx); cause == errRemoteSlow {
		return out, &ErrUnreachable{Remote: remote, Err: err, Write: name == "push", unsure: name == "push",
			detail: fmt.Sprintf("git %s did not finish within %s (liza.remoteTimeout)", name, d)}
	} else if errors.Is(cause, context.Canceled) {
		return out, &ErrStopped{Remote: remote, Cmd: name, Cause: cause}
	}
	return out, err
}

// ErrStopped is a git command talking to a remote that was stopped
// because the command that ran it was interrupted (SIGINT, SIGTERM) or
// cancelled. A push stopped so may have landed.
type ErrStopped struct {
	Remote string
	Cmd    string // fetch, push, ls-remote
	Cause  error
}

func (e *ErrStopped) Error() string {
	if e.Cmd == "push" {
		return fmt.Sprintf("git push to %s stopped (%v): it may have landed; the next operation finds out", e.Remote, e.Cause)
	}
	return fmt.Sprintf("git %s from %s stopped (%v)", e.Cmd, e.Remote, e.Cause)
}

func (e *ErrStopped) Unwrap() error { return e.Cause }

// catchSignals says that this process has no handler of its own for
// SIGINT and SIGTERM (CatchSignals).
var catchSignals atomic.Bool

// CatchSignals is for a process that does not handle SIGINT and SIGTERM
// itself (a short command that changes only the state): from then on a
// remote git command, and an operation on a remote, catch them while they
// run (SignalContext), so that the signal stops git and what it started
// before the command ends. Without it the command died and git, in a
// process group of its own, went on waiting on a hung remote for good.
func CatchSignals() { catchSignals.Store(true) }

// SignalContext is ctx, cancelled by SIGINT or SIGTERM until stop is
// called, in a process that called CatchSignals; else ctx.
func SignalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if !catchSignals.Load() {
		return ctx, func() {}
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// RemoteGit runs git with args against remote, bounded as a fetch of the
// board's refs is: a probe of a remote (doctor's) that hangs says so.
func (r *Repo) RemoteGit(ctx context.Context, remote string, args ...string) ([]byte, error) {
	return r.remoteGit(ctx, remote, false, nil, args...)
}
