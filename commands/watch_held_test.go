package commands

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/notify"
	"github.com/liza-dev/git-liza/refstore"
)

// recorder is a notification channel that keeps what it is sent.
type recorder struct{ got []notify.Event }

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Send(_ context.Context, e notify.Event) error {
	r.got = append(r.got, e)
	return nil
}

// A watcher that finds the repository's disk full says so once, calls a
// person once it has been full for notify.HeldAfter (once a fill: marked
// with the tip, which does not move meanwhile), says when there is room
// again, and tells the next fill anew. run's watcher tells, and says
// nothing of its own: its supervisors say it in the same log.
func TestWatchDiskFull(t *testing.T) {
	for _, off := range []bool{false, true} {
		dir := t.TempDir()
		var stderr bytes.Buffer
		rec := &recorder{}
		now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
		full := true
		w := &watcher{s: &session{Env: &Env{Stderr: &stderr}, repo: &refstore.Repo{CommonDir: dir}},
			alarmsOff: off, logPath: filepath.Join(dir, "alerts.log"), clock: func() time.Time { return now },
			notifier: &notify.Notifier{Channels: []notify.Channel{rec}, MemoryPath: filepath.Join(dir, "sent.json"), Report: func(l string) { t.Error(l) }}}
		w.held.room = func(string) (uint64, uint64, bool) {
			if full {
				return 12 << 10, 300, true
			}
			return 1 << 30, 1000, true
		}
		tip := refstore.Hash{1}
		look := func(d time.Duration) {
			now = now.Add(d)
			w.lookDisk(context.Background(), tip, now)
		}
		look(0)
		look(time.Minute)
		if len(rec.got) != 0 {
			t.Fatalf("told after a minute: %v", rec.got)
		}
		if w.held.diskSince.IsZero() {
			t.Fatalf("not full: %s", stderr.String())
		}
		look(time.Minute)
		look(time.Minute)
		if len(rec.got) != 1 || rec.got[0].Kind != notify.KindDiskFull || rec.got[0].ID != "disk_full@"+tip.String() ||
			!strings.Contains(rec.got[0].Title, "has been full for 2m0s") || !strings.Contains(rec.got[0].Body, "12 KiB and 300 files left") {
			t.Fatalf("told %+v, want one disk_full after 2 minutes", rec.got)
		}
		full = false
		look(time.Minute)
		full, tip = true, refstore.Hash{2}
		look(time.Minute)
		look(3 * time.Minute)
		if len(rec.got) != 2 || rec.got[1].ID != "disk_full@"+tip.String() {
			t.Fatalf("the next fill: told %+v", rec.got)
		}
		said := stderr.String()
		want := map[string]int{"⚠️ DISK FULL: the disk of " + dir + " is full (12 KiB and 300 files left): the supervisors wait until there is room\n": 2,
			"✅ DISK ROOM: the disk of " + dir + " has room again\n": 1}
		for line, n := range want {
			if off {
				n = 0
			}
			if got := strings.Count(said, line); got != n {
				t.Errorf("alarmsOff %v: %q said %d times, want %d:\n%s", off, line, got, n, said)
			}
		}
	}
}
