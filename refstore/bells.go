package refstore

import (
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Bells tell a process that waits for a few files of the blackboard to
// change when one of them may have: a writer of git-liza's rings the bell
// of each file its move of the state changed (Ring), and a process that
// watches those bells (WatchBells) wakes for them only, not for every move
// of a busy board. A team's coders mostly wait for their own task, and
// each woke and compared the board at every move of every other task.
//
// A bell is an empty file under liza/bells named after the file of the
// board, made by the first process that watches it; ringing it sets its
// time, and a bell nobody made is not rung. Bells are hints: a move made
// otherwise (by git, a sync, a writer that git moves refs for) rings
// none, and a watcher still looks at the state ref now and then. Where the
// system has no file notification, Watching is false and the watcher
// looks at the ref as it would without bells.
type Bells struct{ signals }

// bellsDir is where the bells are.
func (r *Repo) bellsDir() string { return filepath.Join(r.CommonDir, "liza", "bells") }

// bellPath is the bell of a file of the board (a logical path such as
// tasks/t-1.yaml).
func (r *Repo) bellPath(file string) string {
	return filepath.Join(r.bellsDir(), url.PathEscape(file))
}

// Ring rings the bells of files, those that exist; nil files rings every
// bell (a whole board replaced).
func (r *Repo) Ring(files []string) {
	now := time.Now()
	if files == nil {
		ents, _ := os.ReadDir(r.bellsDir())
		for _, e := range ents {
			_ = os.Chtimes(filepath.Join(r.bellsDir(), e.Name()), now, now)
		}
		return
	}
	for _, f := range files {
		_ = os.Chtimes(r.bellPath(f), now, now) // no bell: nobody waits for it
	}
}

// RemoveBells removes the bells of files nobody will wait for again (a
// finished task's). A process still watching one is woken, and looks at
// the board.
func (r *Repo) RemoveBells(files []string) {
	for _, f := range files {
		_ = os.Remove(r.bellPath(f))
	}
}

// WatchBells watches the bells of files, making those that do not exist.
// It signals once at once, since a file may have changed before the watch
// began. A nil Bells watches nothing.
func (r *Repo) WatchBells(files []string) *Bells {
	b := &Bells{newSignals()}
	if r.plumbing != "" || os.MkdirAll(r.bellsDir(), 0o777) != nil {
		return b
	}
	n := newNotifier()
	if n == nil {
		return b
	}
	for _, f := range files {
		p := r.bellPath(f)
		if fd, err := openFile(p, os.O_CREATE|os.O_RDONLY, 0o666); err == nil {
			fd.Close()
		}
		if !n.add(p) {
			n.close()
			return b
		}
	}
	b.start(n, func(string) bool { return true })
	b.signal()
	return b
}

// Watching reports whether the bells are watched.
func (b *Bells) Watching() bool { return b != nil && b.n != nil }

// Close stops the watch.
func (b *Bells) Close() {
	if b != nil {
		b.stop()
	}
}
