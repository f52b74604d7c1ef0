package cas

import (
	"context"
	"math/rand/v2"
	"time"
)

// waitTurn waits while others go first, looking at the queue in place
// where the remote can be read here (peek), else with a ref listing
// (peekRemote), and, next in line, with a fetch (peekFetched). The next in
// line fetches and verifies what the remote has while the turn before its
// own runs, so that its own turn costs only what that turn added.
func (s *Store) waitTurn(ctx context.Context, turn *turn, deadline time.Time) error {
	for time.Now().Before(deadline) {
		wait, ok := s.peek(ctx, turn)
		if !ok && turn.listed && turn.ahead <= 1 {
			wait, ok = s.peekFetched(ctx, turn)
		} else if !ok {
			wait, ok = s.peekRemote(ctx, turn)
		}
		if !ok || !wait {
			return nil
		}
		// In place, where a look costs no process, the next in line
		// fetches and verifies each new tip while it waits (elsewhere its
		// look is that fetch: peekFetched).
		if turn.inPlace && turn.ahead <= 1 && turn.lastTip != turn.ready {
			if err := s.prepare(ctx, turn); err != nil {
				return nil // the attempt meets it again, and says so
			}
			continue
		}
		if err := sleepCtx(ctx, turn.poll()); err != nil {
			return err
		}
	}
	return nil
}

// peekFetched is the look of the next in line on a remote it cannot read
// in place: a fetch, which brings the turn before's operation as soon as
// it lands, and the check of what it brought, as an attempt would make
// them. When its turn has come, the attempt builds on what it fetched
// without fetching again (turn.fresh): its push names that tip as the one
// the remote must still hold, so a remote that moved meanwhile refuses it
// and the attempt is made again on a fetch.
func (s *Store) peekFetched(ctx context.Context, t *turn) (wait, ok bool) {
	if err := s.prepare(ctx, t); err != nil {
		return false, false // the attempt meets it again, and says so
	}
	live, stale, err := s.tickets(ctx, s.instant())
	if err != nil {
		return false, false
	}
	if wait = t.yield(time.Now(), t.ready, live, stale); !wait {
		t.fresh = true
	}
	return wait, true
}

// prepare fetches the remote's state and verifies it, as an attempt
// would, for an operation that waits.
func (s *Store) prepare(ctx context.Context, turn *turn) error {
	tip, err := s.tip(ctx)
	if err != nil {
		return err
	}
	turn.ready = tip
	snap, err := ReadSnapshot(s.Repo, tip)
	if err != nil || !snap.Exists() {
		return err
	}
	_, err = s.checkTip(ctx, snap)
	return err
}

// sleepCtx sleeps for d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// queuePoll is how long an operation waiting for its turn waits before it
// looks at the queue again.
func queuePoll() time.Duration {
	return 20*time.Millisecond + time.Duration(rand.Int64N(int64(20*time.Millisecond)))
}

// backoff is the wait after the n-th lost race, whose attempt took took:
// exponential backoff with full jitter, in slots as long as an attempt. An
// attempt that loses has overlapped another writer's for about that long,
// so spreading the retries over a few slots lets the writers take turns;
// a fixed scale too short for remote attempts (a fetch and a push each)
// only makes them collide again. The window stops growing at 32 slots,
// and at two seconds.
func backoff(n int, took time.Duration) time.Duration {
	slot := max(took, 2*time.Millisecond)
	window := min(slot<<min(n, 5), 2*time.Second)
	return time.Duration(rand.Int64N(int64(window)) + 1)
}
