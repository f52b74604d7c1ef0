package cas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// probeEmail is the author of a probe's ticket.
const probeEmail = "git-liza-probe@liza.invalid"

// ProbeStore tells whether the remote stores what it is sent, by a write:
// a push the remote could not store (refstore.RemoteUnstored) may have been
// too big for it, and a remote that cannot store still answers fetches.
// The probe is a ticket under a fresh id, dated past ticketLife, which
// every clone counts as stale and so lets no clone wait: pushed, then
// taken away at once (a probe left by a kill is deleted by the next clone
// that wins a turn, as any stale ticket). It returns the push's error: a
// refstore.RemoteUnstored one when the remote cannot store a commit of a
// few hundred bytes, nil when it stored it. In local mode it is nil.
func (s *Store) ProbeStore(ctx context.Context) error {
	if s.Remote == "" {
		return nil
	}
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	ref := QueueDir + hex.EncodeToString(raw[:])
	now := s.instant()
	c, err := s.Repo.WriteCommit(s.emptyTree(), nil, refstore.Signature{Name: "git-liza", Email: probeEmail, When: now},
		TicketText(now.Add(-ticketLife-time.Second)))
	if err != nil {
		return err
	}
	if err := s.Repo.Push(ctx, s.Remote, refstore.RefUpdate{Name: ref, New: c}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = s.Repo.Push(ctx, s.Remote, refstore.RefUpdate{Name: ref, Old: c}) // left, it is stale: reaped
	return nil
}
