//go:build unix

package refstore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// flockDir holds an exclusive flock on a directory until the returned
// function is called; the kernel releases it when the process ends,
// however it ends.
func flockDir(dir string) (func(), error) {
	f, err := openRead(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// flockFile takes the exclusive flock of f, waiting for it when wait is
// set; held is false (and err nil) when another holds it and wait is not.
// Closing f releases it.
func flockFile(f *os.File, wait bool) (held bool, err error) {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	switch err := syscall.Flock(int(f.Fd()), how); {
	case err == nil:
		return true, nil
	case !wait && errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	default:
		return false, err
	}
}
