package refstore

import (
	"bytes"
	"os"
	"syscall"
	"unsafe"
)

// inotify watches one directory at a time for the events of a ref move.
type inotify struct {
	f *os.File // non-blocking: reads wait in Go's poller, and close ends them
}

// moveEvents are a ref renamed into place or removed, and the directory
// itself removed or moved; ringEvents a bell rung (its time set), removed
// or moved.
const (
	moveEvents = syscall.IN_MOVED_TO | syscall.IN_DELETE | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR
	ringEvents = syscall.IN_ATTRIB | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
)

func newNotifier() notifier {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	return &inotify{f: os.NewFile(uintptr(fd), "inotify")}
}

// add watches a directory for ref moves, or a file for its bell.
func (n *inotify) add(path string) bool {
	rc, err := n.f.SyscallConn()
	if err != nil {
		return false
	}
	events := uint32(moveEvents)
	if fi, serr := os.Stat(path); serr == nil && !fi.IsDir() {
		events = ringEvents
	}
	cerr := rc.Control(func(fd uintptr) { _, err = syscall.InotifyAddWatch(int(fd), path, events) })
	return cerr == nil && err == nil
}

func (n *inotify) next() ([]string, bool) {
	var buf [4096]byte
	m, err := n.f.Read(buf[:])
	if err != nil {
		return nil, false
	}
	var names []string
	for off := 0; off+syscall.SizeofInotifyEvent <= m; {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
		end := off + syscall.SizeofInotifyEvent + int(ev.Len)
		if end > m {
			break
		}
		switch {
		case ev.Mask&syscall.IN_Q_OVERFLOW != 0: // some were lost: look again
			names = append(names, "")
		case ev.Mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF|syscall.IN_IGNORED) != 0:
			names = append(names, "")
		default:
			name := buf[off+syscall.SizeofInotifyEvent : end]
			names = append(names, string(bytes.TrimRight(name, "\x00")))
		}
		off = end
	}
	return names, true
}

func (n *inotify) close() { n.f.Close() }
