package cas

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// publish lands an operation on the remote: one atomic push of the state
// commit and any other ref the operation moves, each with the value the
// remote must still hold. Only then do the local refs follow, so an
// operation counts once the remote has it. A push that loses a race is
// ErrStale: the caller fetches and applies the operation again.
func (s *Store) publish(ctx context.Context, op Op, updates []refstore.RefUpdate) error {
	if err := s.Repo.Push(ctx, s.Remote, updates...); err != nil {
		lostTip(ctx)
		return err
	}
	var local []refstore.RefUpdate
	for _, u := range updates {
		tracking := refstore.TrackingRef(s.Remote, u.Name)
		was, _, err := s.Repo.ReadRef(tracking)
		if err != nil {
			return err
		}
		if !was.IsZero() || !u.New.IsZero() {
			local = append(local, refstore.RefUpdate{Name: tracking, Old: was, New: u.New})
		}
		if strings.HasPrefix(u.Name, QueueDir) {
			continue // a ticket exists on the remote only
		}
		// The local ref follows when it was behind the remote (or did not
		// exist); a local ref that went its own way is left alone.
		cur, ok, err := s.Repo.ReadRef(u.Name)
		if err != nil {
			return err
		}
		follow := !ok || cur == u.Old
		if !follow && !u.New.IsZero() {
			if follow, err = s.Repo.IsAncestor(ctx, cur.String(), u.New.String()); err != nil {
				return err
			}
		}
		if follow {
			local = append(local, refstore.RefUpdate{Name: u.Name, Old: cur, New: u.New})
		}
	}
	// One by one, in this process where it may: a git update-ref for them
	// cost a remote operation a process of its own.
	err := s.Repo.MoveRefs(ctx, "liza: "+string(op.Name)+" (published to "+s.Remote+")", s.author(op.Agent, time.Now()), local...)
	if err == nil {
		// The state's tracking ref is the remote's value as the push left it.
		s.RecordFetch(s.Remote)
		for _, u := range updates {
			if u.Name == refstore.StateRef {
				sawTip(ctx, u.New)
			}
		}
	}
	if errors.Is(err, refstore.ErrStale) {
		// Another local process moved a ref meanwhile; the remote has the
		// operation, and the next fetch brings the local refs up to date.
		return nil
	}
	return err
}

// RewoundRef is where a clone remembers the remote's tip from before the
// remote's state went backwards (an administrator's rewind): operations
// up to it had been published, and must not be pushed again.
func RewoundRef(remote string) string { return "refs/liza/rewound/" + remote }

// errGuessed is an attempt on a guessed tip (Store.guessTip) that had
// nothing to push.
var errGuessed = errors.New("nothing to push on the tip last seen")

// guessQuiet is how long a clone must not have fetched or pushed for its
// next operation to build on the tip it saw last: a clone that writes
// again and again fetches every time, and so sees the tickets of the
// clones waiting for a turn (a guessed push cannot see them, and would
// win every race).
const guessQuiet = 250 * time.Millisecond

// busy reports whether this clone fetched or pushed within guessQuiet.
func (s *Store) busy() bool {
	fi, err := os.Stat(s.fetchRecord(s.Remote))
	return err == nil && time.Since(fi.ModTime()) < guessQuiet
}

// guessTip is the tip an attempt builds on. The first attempt of an
// operation on a remote that is not read in place builds on the remote's
// tip as this clone last saw it (its tracking ref), when the local state
// is that same commit: its push names that value as the one the remote
// must still hold, so an operation lands only on the remote's actual tip,
// and a clone that is alone on its remote pays one push an operation
// instead of a fetch and a push. Any other attempt fetches (Store.tip),
// and so does the first of a clone that fetched or pushed in the last
// guessQuiet (see busy).
func (s *Store) guessTip(ctx context.Context, t *turn) (refstore.Hash, error) {
	if t != nil && t.fresh {
		// Fetched and verified by the look that found the turn come.
		t.fresh, t.guess, t.guessed = false, false, true
		return t.ready, nil
	}
	if t == nil || !t.guess {
		return s.tip(ctx)
	}
	t.guess = false
	seen, _, err := s.Repo.ReadRef(refstore.TrackingRef(s.Remote, refstore.StateRef))
	if err != nil {
		return refstore.Hash{}, err
	}
	local, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return refstore.Hash{}, err
	}
	if seen.IsZero() || seen != local || !s.knownValid(seen) || s.busy() {
		return s.tip(ctx)
	}
	t.guessed = true
	return seen, nil
}
