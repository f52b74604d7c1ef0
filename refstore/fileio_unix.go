//go:build unix

package refstore

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openFile is os.OpenFile without asking Go's poller to watch the file:
// os.OpenFile offers every file it opens to the poller, which on Linux
// refuses a regular file after four more system calls. An operation opens
// a few dozen files of the repository (refs, pack indexes, the
// configuration); what a poller could watch here (a pipe, a socket) is
// not among them, and such a file still reads and writes, blocking.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// openRead is os.Open through openFile.
func openRead(name string) (*os.File, error) { return openFile(name, os.O_RDONLY, 0) }

// ReadFile is os.ReadFile through openFile.
func ReadFile(name string) ([]byte, error) {
	f, err := openRead(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 0
	if fi, err := f.Stat(); err == nil && fi.Size() < 1<<30 {
		size = int(fi.Size())
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}
