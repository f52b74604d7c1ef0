package cas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// probeEmail is the author of a probe's ticket.
const probeEmail = "git-liza-probe@liza.invalid"

// unstoredFresh is how long a record of the remote storing nothing holds
// after its last probe: the supervisors that probe look at least every
// 30 s while it lasts, and one killed meanwhile leaves a record no
// watcher should read as the remote's state.
const unstoredFresh = 90 * time.Second

// recordUnstored notes that a probe could not be stored (Unstored): since
// the first such probe while the record is fresh, with what the remote said.
// Best effort, as RecordFetch: the disk that holds it is not the one full.
func (s *Store) recordUnstored(err error) {
	f := s.unstoredRecord()
	since, _, ok := s.Unstored()
	if !ok {
		since = s.now()
	}
	why := contracts.FirstLine(err.Error())
	if r := new(refstore.ErrRejected); errors.As(err, &r) {
		why = contracts.FirstLine(r.Reason)
	}
	if os.MkdirAll(filepath.Dir(f), 0o755) == nil {
		_ = os.WriteFile(f, []byte(contracts.FormatTime(since)+"\n"+why+"\n"), 0o644)
	}
}

// Unstored reports whether the supervisors of this clone find the remote
// storing nothing: since when, and why (what it said), as their last
// probe, within unstoredFresh, recorded it.
func (s *Store) Unstored() (since time.Time, why string, ok bool) {
	f := s.unstoredRecord()
	if fi, err := os.Stat(f); err != nil || time.Since(fi.ModTime()) > unstoredFresh {
		return time.Time{}, "", false
	}
	b, err := refstore.ReadFile(f)
	if err != nil {
		return time.Time{}, "", false
	}
	stamp, why, _ := strings.Cut(string(b), "\n")
	since, err = contracts.ParseTime(stamp)
	return since, strings.TrimSpace(why), err == nil
}

func (s *Store) unstoredRecord() string {
	return filepath.Join(s.Repo.CommonDir, "liza", "unstored", url.PathEscape(s.Remote))
}

// ProbeStore tells whether the remote stores what it is sent, by a write:
// a push the remote could not store (refstore.RemoteUnstored) may have been
// too big for it, and a remote that cannot store still answers fetches.
// The probe is a ticket under a fresh id, dated past ticketLife, which
// every clone counts as stale and so lets no clone wait: pushed, then
// taken away at once (a probe left by a kill is deleted by the next clone
// that wins a turn, as any stale ticket). It returns the push's error: a
// refstore.RemoteUnstored one when the remote cannot store a commit of a
// few hundred bytes, nil when it stored it. In local mode it is nil. What
// it found is recorded for the watchers (Unstored).
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
		if refstore.RemoteUnstored(err) {
			s.recordUnstored(err)
		}
		return err
	}
	_ = os.Remove(s.unstoredRecord())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = s.Repo.Push(ctx, s.Remote, refstore.RefUpdate{Name: ref, Old: c}) // left, it is stale: reaped
	return nil
}
