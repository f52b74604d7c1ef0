package cas

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// ErrNoBoard is the error of an operation on a repository that has no
// blackboard (no refs/liza/state).
var ErrNoBoard = contracts.Invalidf("no blackboard here: run `git liza init GOAL` first")

// FetchState fetches remote's refs/liza/state into its tracking ref, with
// the queue's tickets (see QueueDir), and records when (LastFetch), so that a reader of the local copy can say how
// old it is. ok is false when the remote has no board. When the remote's
// tip is not a descendant of the one fetched last (its tracking ref), the
// remote was rewound: the old tip is kept at RewoundRef, unless one is kept
// already, so that sync can tell what was taken back.
func (s *Store) FetchState(ctx context.Context, remote string) (refstore.Hash, bool, error) {
	return s.fetchState(ctx, remote, true)
}

// fetchState is FetchState; with track false, a remote read in place
// (refstore.FetchInPlace) leaves the tracking refs as they are.
func (s *Store) fetchState(ctx context.Context, remote string, track bool) (refstore.Hash, bool, error) {
	tracking := refstore.TrackingRef(remote, refstore.StateRef)
	was, _, err := s.Repo.ReadRef(tracking)
	if err != nil {
		return refstore.Hash{}, false, err
	}
	refs := []string{refstore.StateRef, QueueDir + "*"}
	var got map[string]refstore.Hash
	inPlace := false
	if src, ok := s.localRemote(remote); ok {
		if got, inPlace, err = s.Repo.FetchInPlace(ctx, src, remote, track, refs...); err != nil {
			return refstore.Hash{}, false, err
		}
	}
	if !inPlace {
		if got, err = s.Repo.Fetch(ctx, remote, refs...); err != nil {
			return refstore.Hash{}, false, err
		}
	}
	// The record says when the tracking refs took the remote's values, so
	// a fetch in place that left them is not one.
	if track || !inPlace {
		s.RecordFetch(remote)
	}
	tip, ok := got[refstore.StateRef]
	if remote == s.Remote {
		sawTip(ctx, tip)
	}
	return tip, ok, s.noteRewind(ctx, remote, was, tip)
}

// RecordFetch notes that the tracking refs hold remote's values as of now
// (LastFetch). Best effort: a record that cannot be written only makes the
// age unknown.
func (s *Store) RecordFetch(remote string) {
	if f := s.fetchRecord(remote); os.MkdirAll(filepath.Dir(f), 0o755) == nil {
		_ = os.WriteFile(f, []byte(contracts.FormatTime(s.now())+"\n"), 0o644)
	}
}

// localRemote is remote's repository opened in place when it is on this
// machine (refstore.LocalRemote), looked for once per repository and
// remote in a process.
func (s *Store) localRemote(remote string) (*refstore.Repo, bool) {
	key := localKey{s.Repo, remote}
	if v, ok := localRemotes.Load(key); ok {
		src := v.(*refstore.Repo)
		return src, src != nil
	}
	src, _ := s.Repo.LocalRemote(remote)
	v, _ := localRemotes.LoadOrStore(key, src)
	src = v.(*refstore.Repo)
	return src, src != nil
}

type localKey struct {
	repo   *refstore.Repo
	remote string
}

// localRemotes holds what localRemote found: a *refstore.Repo, nil for
// none.
var localRemotes sync.Map

// noteRewind keeps was at RewoundRef(remote) when the remote's tip went
// back from it.
func (s *Store) noteRewind(ctx context.Context, remote string, was, tip refstore.Hash) error {
	if was.IsZero() || was == tip {
		return nil
	}
	if !tip.IsZero() {
		if ok, err := s.Repo.IsAncestor(ctx, was.String(), tip.String()); err != nil || ok {
			return err
		}
	}
	if _, kept, err := s.Repo.ReadRef(RewoundRef(remote)); err != nil || kept {
		return err
	}
	return s.Repo.UpdateRefs(ctx, "liza: "+remote+" was rewound", refstore.RefUpdate{Name: RewoundRef(remote), New: was})
}

// LastFetch is when this clone last fetched remote's board, by the Store's
// clock.
func (s *Store) LastFetch(remote string) (time.Time, bool) {
	b, err := refstore.ReadFile(s.fetchRecord(remote))
	if err != nil {
		return time.Time{}, false
	}
	t, err := contracts.ParseTime(strings.TrimSpace(string(b)))
	return t, err == nil
}

func (s *Store) fetchRecord(remote string) string {
	return filepath.Join(s.Repo.CommonDir, "liza", "fetched", url.PathEscape(remote))
}
