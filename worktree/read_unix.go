//go:build unix

package worktree

import "syscall"

// readSmall reads a registration's file (gitdir, HEAD, locked, commondir:
// a line each) with three system calls. os.ReadFile takes nine on Linux
// (it offers the file to the poller, and asks its size), and claims,
// reviews and merges read four files of every registration, so that
// their cost grew with the worktrees in review. A short read of a regular
// file is its end; O_NONBLOCK keeps a FIFO put in place of one from
// blocking the read.
func readSmall(path string) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := syscall.Read(fd, buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, false
		}
		out = append(out, buf[:n]...)
		if n < len(buf) {
			return out, true
		}
	}
}
