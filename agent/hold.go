package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/ops"
)

// A hold is a condition of the machine or the network that every agent of
// the team suffers alike, and that no agent or task caused: the shared
// remote not answering (remoteFailed, in remote mode) or not storing what
// it is sent (storeFailed, in remote mode: its disk full), or the
// repository's disk full (diskFailed). While one lasts the supervisor
//
//   - says so once, every holdRemind again while it lasts, and once when it
//     ends, with how long it lasted;
//   - starts no session and no merge, and looks again every second (its
//     poll, when shorter), at a remote after a delay that doubles from
//     there up to holdMaxWait;
//   - counts no session that failed during it as a crash or an idle
//     session (its agent's own git and git liza failed on it): the
//     session's end is recorded as what it was, saying so, and the task's
//     next session starts once the hold ends;
//   - records the ends of sessions it could not record then once the hold
//     ends, charges no merge that failed on it to its task, and does not
//     stop for a file of its own it could not write.
//
// It waits as long as the hold lasts: a team left unattended goes on
// where it was when the remote comes back or room is made. A remote that
// refuses the credentials or the access is no hold: that lasts until a
// person acts.
type holds struct {
	mu      sync.Mutex
	remote  hold
	store   hold
	disk    hold
	wait    time.Duration // the delay before the next look
	pending []ops.SessionRequest
}

// hold is one kind of hold.
type hold struct {
	since time.Time // when it began; zero while it does not hold
	last  time.Time // when it was last seen
	what  string    // what it is about: the remote's name, the disk's directory
	told  time.Time // when it was last said
}

// How long a supervisor waits at most between two looks at a hold, and
// how often it says again that it holds.
const (
	holdMaxWait  = 30 * time.Second
	storeMaxWait = 5 * time.Second
	holdRemind   = 10 * time.Minute
)

// The words of each kind of hold, and how far apart its looks may grow
// (0: every firstHoldWait).
type holdWords struct {
	begun, remind, ended, during string
	most                         time.Duration
}

var (
	remoteWords = holdWords{
		begun:  "the remote %s does not answer (%s): sessions and merges wait until it does",
		remind: "the remote %s has not answered for %s (%s): sessions and merges still wait",
		ended:  "the remote %s answers again after %s: work goes on",
		during: "while the remote %s did not answer",
		most:   holdMaxWait,
	}
	storeWords = holdWords{
		begun:  "the remote %s cannot store what it is sent (%s): sessions and merges wait until it can",
		remind: "the remote %s has stored nothing for %s (%s): sessions and merges still wait",
		ended:  "the remote %s stores again after %s: work goes on",
		during: "while the remote %s could not store",
		most:   storeMaxWait,
	}
	diskWords = holdWords{
		begun:  "the disk of %s is full (%s): sessions and merges wait until there is room",
		remind: "the disk of %s has been full for %s (%s): sessions and merges still wait",
		ended:  "there is room on the disk of %s again after %s: work goes on",
		during: "while the disk of %s was full",
	}
)

// begin notes that h holds now, about what, for why; the first time is
// said, and a reminder every holdRemind.
func (s *sup) begin(h *hold, w holdWords, what, why string) {
	now := time.Now()
	s.waits.mu.Lock()
	first := h.since.IsZero()
	if first {
		others := 0
		for _, k := range s.waits.kinds() {
			if k.h != h && !k.h.since.IsZero() {
				others++
			}
		}
		if others == 0 {
			s.waits.wait = 0 // the only hold: look again soon
		}
		h.since, h.what = now, what
	}
	h.last = now
	remind := !first && now.Sub(h.told) >= holdRemind
	if first || remind {
		h.told = now
	}
	since := h.since
	s.waits.mu.Unlock()
	switch {
	case first && w.most == 0:
		s.eventf(EventWaiting, "", w.begun+"; looking again every %s", what, why, s.firstHoldWait())
	case first:
		s.eventf(EventWaiting, "", w.begun+"; looking again in %s, then less often, up to every %s", what, why, s.firstHoldWait(), w.most)
	case remind:
		s.eventf(EventWaiting, "", w.remind, what, roundHold(now.Sub(since)), why)
	}
}

// end notes that h no longer holds, and says so when it did.
func (s *sup) end(h *hold, w holdWords) {
	s.waits.mu.Lock()
	since, what := h.since, h.what
	h.since = time.Time{}
	s.waits.mu.Unlock()
	if !since.IsZero() {
		s.eventf(EventInfo, "", w.ended, what, roundHold(time.Since(since)))
	}
}

// kinds lists the kinds of hold with their words.
func (h *holds) kinds() []struct {
	h *hold
	w holdWords
} {
	return []struct {
		h *hold
		w holdWords
	}{{&h.remote, remoteWords}, {&h.store, storeWords}, {&h.disk, diskWords}}
}

// held reports whether a hold holds now.
func (s *sup) held() bool {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	for _, k := range s.waits.kinds() {
		if !k.h.since.IsZero() {
			return true
		}
	}
	return false
}

// heldSince says, when a hold was seen at t or after, what the session
// went through ("while the remote origin did not answer"), else "".
func (s *sup) heldSince(t time.Time) string {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	for _, k := range s.waits.kinds() {
		if !k.h.last.IsZero() && !k.h.last.Before(t) {
			return fmt.Sprintf(k.w.during, k.h.what)
		}
	}
	return ""
}

// firstHoldWait is the delay before the first look at a hold: a second,
// or the supervisor's poll when shorter.
func (s *sup) firstHoldWait() time.Duration {
	if s.Poll > 0 && s.Poll < time.Second {
		return s.Poll
	}
	return time.Second
}

// holdWait is the delay before the next look at a hold: at a remote that
// does not answer, twice the last one, up to holdMaxWait (each look is a
// request to a server that may be coming back under every clone's looks);
// at a remote that answers but stores nothing, the same up to
// storeMaxWait (a probe is two pushes to a server that is up, and a full
// disk is often freed for a short while only: a soak whose hub was full
// for 15 to 35 s at a time held its supervisors for up to 82 s with the
// outage's 30); at the disk alone, the first delay always (a look is one
// statfs).
func (s *sup) holdWait() time.Duration {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	var most time.Duration // the farthest apart the holds on allow
	for _, k := range s.waits.kinds() {
		if !k.h.since.IsZero() {
			most = max(most, k.w.most)
		}
	}
	if most == 0 {
		return s.firstHoldWait()
	}
	if s.waits.wait == 0 {
		s.waits.wait = s.firstHoldWait()
	} else {
		s.waits.wait = min(2*s.waits.wait, most)
	}
	return s.waits.wait
}

// holding reports whether err is a hold's (the remote not answering or
// not storing, the disk full), and notes it.
func (s *sup) holding(err error) bool {
	return s.remoteFailed(err) || s.storeFailed(err) || s.diskFailed(err)
}

// failedOnHold says, when a session that started at started and did not
// end well may have failed on a hold, what it went through: a hold was
// seen while it ran, or holds now (one look at the disk, at the remote,
// and at its store: its agent's writes may have been refused where its
// fetches were not); "" otherwise.
func (s *sup) failedOnHold(ctx context.Context, started time.Time) string {
	if during := s.heldSince(started); during != "" {
		return during
	}
	s.lookDisk(true)
	if s.Remote && s.syncRemote(ctx) == nil && s.heldSince(started) == "" {
		s.lookStore(ctx)
	}
	return s.heldSince(started)
}

// notCounted says that a session which ended as how is not counted as
// as against its task, having failed during a hold, and records its end
// with detail, saying so.
func (s *sup) notCounted(ctx context.Context, w *work, ses *session, label, how, during, as, outcome, detail string) {
	s.eventf(EventSessionEnded, taskOf(w), "%s: %s %s: not counted as %s", label, how, during, as)
	s.record(ctx, w, ses, outcome, detail+" "+during)
}

// recordUnlessHeld records the end of a session that failed for its own
// reason as far as failedOnHold could tell, and reports whether the record,
// itself a write to the remote, met a hold that the look missed (a hub
// with a few blocks left stores a probe of a few hundred bytes, and not
// the next push): then the session is not counted after all, and the
// record kept for the hold's end says so.
func (s *sup) recordUnlessHeld(ctx context.Context, w *work, ses *session, label, how, as, outcome, detail string) bool {
	s.record(ctx, w, ses, outcome, detail)
	during := s.heldSince(ses.started)
	if during == "" {
		return false
	}
	task := ""
	if w.task != nil {
		task = w.task.ID
	}
	s.waits.mu.Lock()
	if n := len(s.waits.pending); n > 0 && s.waits.pending[n-1].Task == task && s.waits.pending[n-1].Outcome == outcome {
		s.waits.pending[n-1].Detail = withOutput(detail+" "+during, ses.lastOutput())
	}
	s.waits.mu.Unlock()
	s.eventf(EventSessionEnded, taskOf(w), "%s: %s %s: not counted as %s", label, how, during, as)
	return true
}

// keepRecord keeps the end of a session that could not be recorded for a
// hold, to record once it ends.
func (s *sup) keepRecord(r ops.SessionRequest) {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	s.waits.pending = append(s.waits.pending, r)
}

// recordKept records the ends of sessions kept during a hold, in order; a
// hold again keeps the rest.
func (s *sup) recordKept(ctx context.Context) {
	s.waits.mu.Lock()
	kept := s.waits.pending
	s.waits.pending = nil
	s.waits.mu.Unlock()
	for i, r := range kept {
		err := s.do(func() error { _, err := s.Board.SessionEnded(ctx, r); return err })
		switch {
		case err != nil && s.heldRecord(err):
			s.waits.mu.Lock()
			s.waits.pending = append(kept[i:], s.waits.pending...)
			s.waits.mu.Unlock()
			return
		case err != nil:
			s.eventf(EventError, r.Task, "record the session on %s: %v", r.Task, err)
		}
	}
}

// roundHold rounds how long a hold lasted for saying it.
func roundHold(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Millisecond)
}
