package refstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
// started (ssh, a remote helper), and the error says the remote did not
// answer in time, as an unreachable remote (exit 3). A push that timed
// out may still have landed; the next operation reads the remote's board
// and finds it there by its request id.
func (r *Repo) remoteGit(ctx context.Context, remote string, code bool, stdin []byte, args ...string) ([]byte, error) {
	d := r.RemoteTimeout(code)
	ctx, cancel := context.WithTimeoutCause(ctx, d, errRemoteSlow)
	defer cancel()
	out, _, err := execGitOpts(ctx, gitRun{dir: r.Dir(), env: containGit(nil, args), stdin: stdin, args: args, max: -1, group: true})
	if err != nil && context.Cause(ctx) == errRemoteSlow {
		name := args[0]
		if name == "-c" && len(args) > 2 {
			name = args[2]
		}
		return out, &ErrUnreachable{Remote: remote, Err: err, Write: name == "push",
			detail: fmt.Sprintf("git %s did not finish within %s (liza.remoteTimeout)", name, d)}
	}
	return out, err
}

// RemoteGit runs git with args against remote, bounded as a fetch of the
// board's refs is: a probe of a remote (doctor's) that hangs says so.
func (r *Repo) RemoteGit(ctx context.Context, remote string, args ...string) ([]byte, error) {
	return r.remoteGit(ctx, remote, false, nil, args...)
}
