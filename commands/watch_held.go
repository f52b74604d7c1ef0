package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/notify"
	"github.com/liza-dev/git-liza/refstore"
)

// held is what a watcher knows of the holds the supervisors wait out
// without a person (agent's hold.go) that the board cannot show: the
// repository's disk full, and the remote storing nothing.
type held struct {
	diskSince time.Time // when this watcher found the disk full; zero: it has room
	storeSaid time.Time // the since of the remote's record last said; zero: none
	// room looks at the disk (nil: refstore.DiskRoom).
	room func(dir string) (bytes, files uint64, ok bool)
}

// lookHeld looks at both at each look: said once each on stderr when
// watching continuously (and their ends), and told to a person after
// notify.HeldAfter. A full disk is timed by this watcher, which cannot
// write anything down meanwhile: watch --once, a process a look, says it
// and tells nobody (its look cannot know for how long).
func (w *watcher) lookHeld(ctx context.Context, tip refstore.Hash, now time.Time) {
	w.lookDisk(ctx, tip, now)
	if r := w.s.ops.Remote(); r != "" {
		w.lookStore(ctx, r, tip, now)
	}
}

func (w *watcher) lookDisk(ctx context.Context, tip refstore.Hash, now time.Time) {
	dir := w.s.repo.CommonDir
	look := w.held.room
	if look == nil {
		look = refstore.DiskRoom
	}
	room, files, ok := look(dir)
	if !ok {
		return
	}
	if !refstore.Full(room, files) {
		if !w.held.diskSince.IsZero() {
			w.heldNotice(fmt.Sprintf("✅ DISK ROOM: the disk of %s has room again", dir))
		}
		w.held.diskSince = time.Time{}
		return
	}
	left := fmt.Sprintf("%d KiB and %d files left", room>>10, files)
	if w.held.diskSince.IsZero() {
		w.held.diskSince = now
		w.heldNotice(fmt.Sprintf("⚠️ DISK FULL: the disk of %s is full (%s): the supervisors wait until there is room", dir, left))
	}
	if w.notifier == nil {
		return
	}
	if e, late := notify.DiskFull(dir, left, w.held.diskSince, tip.String(), now); late {
		w.notifier.Notify(ctx, []notify.Event{e})
	}
}

func (w *watcher) lookStore(ctx context.Context, remote string, tip refstore.Hash, now time.Time) {
	since, why, ok := w.s.ops.Store.Unstored()
	if !ok {
		if !w.held.storeSaid.IsZero() {
			w.heldNotice(fmt.Sprintf("✅ REMOTE STORES: %s stores what it is sent again", remote))
		}
		w.held.storeSaid = time.Time{}
		return
	}
	if !since.Equal(w.held.storeSaid) {
		w.held.storeSaid = since
		w.heldNotice(fmt.Sprintf("⚠️ REMOTE STORES NOTHING: %s since %s (%s): the supervisors wait until it does", remote, contracts.FormatTime(since), why))
	}
	if w.notifier == nil {
		return
	}
	if e, late := notify.RemoteUnstored(remote, why, since, tip.String(), now); late {
		w.notifier.Notify(ctx, []notify.Event{e})
	}
}

// heldNotice says a hold's line where watch says its notices, but not from
// run's watcher, whose supervisors say it in the same log.
func (w *watcher) heldNotice(line string) {
	if !w.alarmsOff {
		w.notice(line)
	}
}
