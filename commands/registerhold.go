package commands

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// registerWaiting is register, through what holds the whole team as a
// running supervisor waits it out (agent's holds): the remote not
// answering or not storing what it is sent, the repository's disk full.
// run starts again a supervisor that died, but gives it up after three
// deaths in five minutes, and a hub that filled as a team started took its
// supervisors out for good. It says once that it waits, and tries again
// after a delay that doubles, up to every 30 s for a remote that does not
// answer and every 5 s otherwise, until ctx ends.
// Its line goes to tell (the supervisor's events, which run shows).
func (e *Env) registerWaiting(ctx context.Context, s *session, id string, replace bool, tell func(string)) (*ops.Registration, error) {
	wait, most := time.Second, 5*time.Second
	said := false
	for {
		reg, err := e.register(ctx, s, id, replace)
		if err == nil || !registerHeld(s, err) || ctx.Err() != nil {
			return reg, err
		}
		if refstore.RemoteDown(err) {
			most = 30 * time.Second
		}
		if !said {
			said = true
			tell(fmt.Sprintf("%s: cannot register yet: %s; trying again in %s, then less often, up to every %s",
				id, contracts.FirstLine(err.Error()), wait, most))
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, most)
	}
}

// registerHeld reports whether a registration failed on a hold: the
// remote not answering (in remote mode), or not storing the registration
// (the supervisor's own push, and small: no agent made it too big), or the
// repository's disk full (this process's write said so, or a look at the
// disk does: never the words of an error).
func registerHeld(s *session, err error) bool {
	switch {
	case s.ops.Remote() != "" && (refstore.RemoteDown(err) || refstore.RemoteUnstored(err)):
		return true
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return true
	}
	return refstore.DiskFull(s.repo.CommonDir)
}
