//go:build unix

package refstore

import (
	"errors"
	"io"
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
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<30 {
		size = int(fi.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return data, nil
			}
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
