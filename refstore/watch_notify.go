package refstore

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fsNotifier is a notifier on fsnotify, which watches through the
// system's own file notification: inotify on Linux, kqueue on macOS and
// the BSDs, ReadDirectoryChangesW on Windows. It watches directories of
// refs (a child's event is named by the child's name) and bells (files,
// whose every event counts).
type fsNotifier struct {
	w  *fsnotify.Watcher
	mu sync.Mutex
	// watched holds the paths given to add, cleaned: an event named by
	// one of them concerns the watched directory or bell itself.
	watched map[string]bool
}

// newNotifier is nil where the system offers no file notification (or
// refuses one more: inotify instances are limited per user), and the
// callers of WatchRef and WatchBells then look as they would without.
func newNotifier() notifier {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	return &fsNotifier{w: w, watched: map[string]bool{}}
}

func (n *fsNotifier) add(path string) bool {
	path = filepath.Clean(path)
	if err := n.w.Add(path); err != nil {
		return false
	}
	n.mu.Lock()
	n.watched[path] = true
	n.mu.Unlock()
	return true
}

// next waits for an event, then takes those already queued with it, so
// that the steps of one move (a lock file made, written, renamed over the
// ref) are one batch.
func (n *fsNotifier) next() ([]string, bool) {
	var names []string
	select {
	case ev, ok := <-n.w.Events:
		if !ok {
			return nil, false
		}
		names = append(names, n.name(ev))
	case _, ok := <-n.w.Errors:
		if !ok {
			return nil, false
		}
		// Events were lost (an overflowed queue) or a watch failed: the
		// caller is to look again, and watch again.
		names = append(names, "")
	}
	for {
		select {
		case ev, ok := <-n.w.Events:
			if !ok {
				return names, true
			}
			names = append(names, n.name(ev))
		default:
			return names, true
		}
	}
}

// name is what an event concerns: the base name of a watched directory's
// child, "" for a watched path removed or moved away (the backends drop
// their watch of it then), and the base name of a bell for its own other
// events.
func (n *fsNotifier) name(ev fsnotify.Event) string {
	p := filepath.Clean(ev.Name)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watched[p] && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		// The backends forget such a watch themselves; asking for its
		// removal here could wait for the backend's reader, which on
		// Windows may be waiting for this goroutine to take an event.
		delete(n.watched, p)
		return ""
	}
	return filepath.Base(p)
}

func (n *fsNotifier) close() { _ = n.w.Close() }
